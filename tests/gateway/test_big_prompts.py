"""Large prompts take the worker path (issue 15): what comes back from a classification worker
equals what the gateway computes itself, and what a large prompt makes the gateway forward and
record is unchanged by how it gets there.

Real components throughout: forked worker processes of ``ClassifyStep``, a real ``tiergate``
app under uvicorn on SQLite, a ledgered fake upstream. The oracle for the fingerprints is the
definition itself (``normalize_for_fingerprint`` of the fingerprinted segments joined by newlines,
then the keyed HMAC), not the code under test.
"""

from __future__ import annotations

import asyncio
import gc
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.fingerprint import fingerprint, normalize_for_fingerprint
from gateway.classify import ClassifyStep
from tests.gateway.conftest import base_config
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness, fetch_rows
from tiers.restore import Restorer
from tiers.types import Tier

KEY = b"k" * 32
_WORDS = ["the", "plan", "needs", "review", "before", "release", "région", "naïve", "\u200b", "\t", "\n\n", "  "]
_IDS = ["jane.doe{n}@example-mail.com", "+1 (415) 555-{n:04d}", "ops{n}@acme.example.org"]


@st.composite
def _texts(draw: Any, min_words: int = 0) -> str:
    """Prose with identifiers (e-mail addresses, phone numbers) and whitespace of every kind."""
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=min_words, max_size=400))
    for _ in range(draw(st.integers(0, 12))):
        at = draw(st.integers(0, len(words)))
        words.insert(at, draw(st.sampled_from(_IDS)).format(n=draw(st.integers(0, 9999))))
    return " ".join(words)


def _body(texts: list[str]) -> bytes:
    messages = [{"role": "system", "content": "You help the operations team."}]
    messages += [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)]
    return json.dumps({"model": "chat", "messages": messages}).encode()


def _oracle_fingerprint(texts: list[str]) -> str | None:
    norm = normalize_for_fingerprint("\n".join(texts))
    return fingerprint(KEY, norm) if norm else None


@pytest.fixture(scope="module")
def steps(classifier: Any) -> Iterator[tuple[ClassifyStep, ClassifyStep]]:
    """The same classifier in the gateway process (offload never) and in forked workers (always)."""
    here = ClassifyStep(classifier, fingerprint_key=KEY, offload_bytes=1 << 30, timeout_s=60, processes=False)
    there = ClassifyStep(classifier, fingerprint_key=KEY, offload_bytes=0, timeout_s=60, workers=2, processes=True)
    yield here, there
    there.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_texts(), min_size=1, max_size=3))
def test_the_worker_answers_what_the_gateway_computes(steps: tuple[ClassifyStep, ClassifyStep],
                                                      texts: list[str]) -> None:  # fmt: skip
    here, there = steps
    raw = _body(texts)
    local = here.work("chat", raw, "acme", Tier.GENERAL, strip=True)
    remote = asyncio.run(there.run("chat", raw, "acme", Tier.GENERAL))
    assert remote.offloaded and not local.offloaded
    assert remote.decision == local.decision  # every finding, field by field, and the tier
    assert remote.parsed == local.parsed and remote.content == local.content
    assert remote.stripped == local.stripped
    assert remote.fingerprint == local.fingerprint
    assert remote.segment_fingerprints == local.segment_fingerprints
    # and both are the definition's fingerprint of the prompt text
    fingerprinted = ["You help the operations team.", *texts]
    assert remote.fingerprint == _oracle_fingerprint(fingerprinted)


def test_findings_come_back_as_findings(steps: tuple[ClassifyStep, ClassifyStep]) -> None:
    """Thousands of findings (what the compact transport is for) arrive whole and in order."""
    _, there = steps
    text = " ".join(f"write to ops{i}@acme.example.org today" for i in range(3000))
    remote = asyncio.run(there.run("chat", _body([text]), "acme", Tier.GENERAL))
    emails = [f for f in remote.decision.findings if f.entity_type == "EMAIL_ADDRESS"]
    assert len(emails) == 3000
    seg = next(i for i, s in enumerate(remote.content.segments) if s.text == text)
    assert [text[f.start : f.end] for f in emails] == [f"ops{i}@acme.example.org" for i in range(3000)]
    assert all(f.segment == seg and isinstance(f.score, float) for f in emails)
    assert remote.stripped is not None and len(remote.stripped.mapping) == 3000


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.text(min_size=1, max_size=8), min_size=0, max_size=30, unique=True),
    text=st.text(alphabet=st.sampled_from("ab<>_1 EMAIL"), max_size=60),
)
def test_restorer_compiled_on_demand_restores_as_the_eager_one(values: list[str], text: str) -> None:
    mapping = {f"<EMAIL_{i}>": v for i, v in enumerate(values)}
    picks = [k for k in mapping][: len(text) // 6]
    sample = text + "".join(picks)
    keys = sorted(mapping, key=len, reverse=True)
    eager = re.compile("|".join(re.escape(k) for k in keys)) if keys else None
    expected = eager.sub(lambda m: mapping[m.group(0)], sample) if eager and "<" in sample else sample
    restorer = Restorer(mapping)
    assert restorer.restore(sample) == expected
    assert restorer.restore(sample) == expected  # and again, with the pattern compiled


# -- through a real gateway ------------------------------------------------------------------------


@pytest.fixture
def big_gateway(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> Iterator[GatewayHarness]:
    cfg = base_config(fakes, server={"max_body_bytes": 8 << 20})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        yield gw


def _big_text(ids: bool, n: int) -> str:
    words = []
    for i in range(n):
        words.append(f"ops{i}@acme.example.org" if ids and i % 50 == 7 else "the plan needs review\n")
    return " ".join(words)


def test_large_prompts_forward_and_record_as_before(big_gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    key = big_gateway.create_key("acme", max_tier=2)
    client = big_gateway.openai(key)
    plain, marked = _big_text(False, 12_000), _big_text(True, 12_000)  # ~0.26 MB each: the worker path
    for text in (plain, marked):
        answer = client.chat.completions.with_raw_response.create(
            model="chat", messages=[{"role": "user", "content": text}]
        )
        rid = answer.headers["x-request-id"]
        sent = fakes["vendor"].ledger.bodies()[-1]
        (row,) = big_gateway.rows(
            "SELECT fingerprint, findings, stripped FROM audit_requests WHERE request_id LIKE :r", {"r": rid + "%"}
        )
        assert row["fingerprint"] == fingerprint(SECRETS["fingerprint_key"].encode(), normalize_for_fingerprint(text))
        if text is plain:  # nothing found: the prompt goes as the client sent it
            assert sent["messages"] == [{"role": "user", "content": plain}]
            assert not row["stripped"]
        else:  # never forwarded unstripped
            found = json.loads(row["findings"])
            assert found == {"EMAIL_ADDRESS": marked.count("@")} and row["stripped"]
            forwarded = sent["messages"][0]["content"]
            assert "@" not in forwarded and len(re.findall(r"<[A-Z_]+_\d+>", forwarded)) == marked.count("@")
    assert len(fetch_rows(big_gateway.db_url, "SELECT request_id FROM audit_requests")) == 2


def test_the_start_up_heap_is_frozen_while_the_app_runs(big_gateway: GatewayHarness) -> None:
    """Built once, kept for the server's life: out of the collector's sight (see gateway/app.py),
    and handed back to it when the app stops (a test process builds many)."""
    assert gc.get_freeze_count() > 10_000


def test_the_heap_is_unfrozen_after_the_app(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                            classifier: Any) -> None:  # fmt: skip
    with GatewayHarness(sqlite_db, tmp_path, base_config(fakes), classifier=classifier):
        assert gc.get_freeze_count() > 10_000
    assert gc.get_freeze_count() == 0
