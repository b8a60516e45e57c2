"""Never trust a 200: usage.prompt_tokens against our own count, empty 'length' answers, streams
ended by an error event — and no false alarms over 1,000 varied prompts through a correct upstream."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.integrity import check_usage
from gateway.tokens import counter_for
from tests.gateway.conftest import base_config, upstream_config
from tests.support import FakeUpstream, Scripted
from tests.support.corpus import chat_corpus, texts
from tests.support.harness import FakeUpstreams, GatewayHarness
from tests.support.tokenizer_files import counter, trained_bpe
from tiers import extract_content

LEAK = "TEXT-FROM-SOMEONE-ELSES-KV"
LONG = " ".join(["Please review the attached quarterly planning notes carefully."] * 12)


def _ask(gw: GatewayHarness, **kw: Any) -> Any:
    return gw.openai(gw.create_key()).chat.completions.create(
        model="chat", messages=[{"role": "user", "content": LONG}], **kw)  # fmt: skip


@pytest.mark.parametrize(
    ("scripted", "reason"),
    [
        (Scripted(content=LEAK, prompt_tokens=1), "prompt_tokens_low"),  # the 1-token placeholder
        (Scripted(content=LEAK, prompt_tokens=10**6), "prompt_tokens_high"),
        (Scripted(content=LEAK, omit_usage=True), "usage_missing"),
        (Scripted(content="", finish_reason="length"), "empty_length"),
    ],
)
def test_integrity_failure_502_no_text_flagged(gateway: GatewayHarness, fakes: FakeUpstreams,
                                               scripted: Scripted, reason: str) -> None:  # fmt: skip
    """Each failed check gives 502 upstream_integrity_error without the model's text, an audit
    outcome flagged with the reason, and a metric."""
    fakes["vendor"].script = lambda r: scripted
    with pytest.raises(openai.InternalServerError) as err:
        _ask(gateway)
    assert err.value.status_code == 502
    assert err.value.body["code"] == "upstream_integrity_error"  # type: ignore[index]  # an error body is a dict
    assert LEAK not in err.value.response.text
    (out,) = gateway.rows("SELECT status, http_status, integrity_flag, error_class FROM audit_outcomes")
    assert out["status"] == "integrity_error" and out["http_status"] == 502
    assert bool(out["integrity_flag"]) and out["error_class"] == reason
    metrics = httpx.get(gateway.url + "/metrics").text
    assert f'tiergate_integrity_failures_total{{reason="{reason}",upstream="vendor"}} 1.0' in metrics


def test_missing_usage_allowed_when_not_promised(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                 classifier: Any) -> None:  # fmt: skip
    """An upstream configured as not reporting usage is not failed for its absence."""
    cfg = {"upstreams": upstream_config(fakes, vendor={"promises_usage": False}), "limits": {"auth_cache_s": 0}}
    fakes["vendor"].script = lambda r: Scripted(content="fine", omit_usage=True)
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        assert _ask(gw).choices[0].message.content == "fine"


def test_stream_integrity_failure_ends_with_error_event(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A stream whose final usage shows a truncated prompt never finishes normally: the SDK raises,
    no finish_reason reaches the client, and the outcome is flagged."""
    fakes["vendor"].script = lambda r: Scripted(chunks=["par", "tial"], prompt_tokens=1)
    finishes: list[str | None] = []
    with pytest.raises(openai.APIError) as err:
        for chunk in _ask(gateway, stream=True):
            finishes.extend(c.finish_reason for c in chunk.choices)
    assert "upstream_integrity_error" in str(err.value.body or err.value)
    assert not [f for f in finishes if f]
    (out,) = gateway.rows("SELECT status, integrity_flag, error_class FROM audit_outcomes")
    assert out["status"] == "integrity_error" and bool(out["integrity_flag"])
    assert out["error_class"] == "prompt_tokens_low"


@pytest.fixture(scope="module")
def bpe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE trained on other prompts: stands in for an upstream's real tokenizer."""
    return trained_bpe(tmp_path_factory.mktemp("tok") / "bpe.json", texts(400, seed=99), vocab_size=2000)


@pytest.mark.parametrize("exact", [True, False])
def test_no_false_alarm_counts_over_corpus(bpe: Path, exact: bool) -> None:
    """Over 1,000 varied chats, the upstream's honest prompt_tokens (its BPE plus template tokens)
    always falls inside our band, with the tokenizer file and with the calibrated estimate."""
    own = counter_for(bpe if exact else None, bytes_per_token=4.0)  # each kind's default band
    upstream = FakeUpstream(count_tokens=counter(bpe))
    for messages in chat_corpus(1000):
        body = {"model": "m", "messages": messages}
        count = own.count([s.text for s in extract_content("chat", body).segments])
        reported = upstream.prompt_tokens("/v1/chat/completions", body)
        assert check_usage(count, {"prompt_tokens": reported}, promised=True) is None, (count, reported)


@pytest.mark.parametrize("exact", [True, False])
def test_usage_tolerance_is_honoured_with_and_without_a_tokenizer(bpe: Path, exact: bool) -> None:
    """An upstream's usage_tolerance sets the floor of the band for both counters (and its
    ceiling for the exact one); unset, each keeps its own default."""
    from gateway.settings import UpstreamSettings
    from gateway.tokens import ESTIMATE_TOLERANCE, EXACT_TOLERANCE

    def floor(tolerance: float | None) -> int:
        up = UpstreamSettings(name="u", base_url="http://x/v1", kind="shared", tokenizer_file=bpe if exact else None,
                              usage_tolerance=tolerance)  # fmt: skip
        counter = counter_for(up.tokenizer_file, bytes_per_token=up.bytes_per_token, tolerance=up.usage_tolerance)
        return counter.count([LONG]).lower

    tokens = counter_for(bpe if exact else None, bytes_per_token=4.0).count([LONG]).tokens
    default = EXACT_TOLERANCE if exact else ESTIMATE_TOLERANCE
    assert floor(None) == floor(default) and floor(None) < tokens
    assert floor(1.05) > floor(default) > floor(8.0)  # narrower and wider bands, whichever counter


def test_no_false_alarm_end_to_end(bpe: Path, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    """1,000 varied chats through the gateway to a correct upstream (BPE counts, estimate on our
    side): every one is answered 200 with the model's text; none is flagged."""
    fake_v, fake_l = FakeUpstream(name="vendor", count_tokens=counter(bpe)), FakeUpstream(
        name="local", kind="onprem", count_tokens=counter(bpe))  # fmt: skip
    for fake in (fake_v, fake_l):
        fake.script = lambda r: Scripted(content="answer")
    with (
        FakeUpstreams(fake_v, fake_l) as fakes,
        GatewayHarness(sqlite_db, tmp_path, base_config(fakes), classifier=classifier) as gw,
    ):
        key = gw.create_key()
        chats = chat_corpus(1000)

        async def run() -> list[tuple[int, str]]:
            sem = asyncio.Semaphore(8)
            async with httpx.AsyncClient(base_url=gw.url, timeout=60,
                                         headers={"authorization": f"Bearer {key}"}) as client:  # fmt: skip

                async def one(messages: list[dict[str, Any]]) -> tuple[int, str]:
                    async with sem:
                        r = await client.post("/v1/chat/completions", json={"model": "chat", "messages": messages})
                        return r.status_code, r.text

                return await asyncio.gather(*(one(m) for m in chats))

        results = asyncio.run(run())
        flagged = gw.rows("SELECT count(*) AS n FROM audit_outcomes WHERE integrity_flag")
    bad = [(s, t[:200]) for s, t in results if s != 200 or '"answer"' not in t]
    assert not bad, bad[:5]
    assert flagged[0]["n"] == 0
    assert len(fake_v.ledger) + len(fake_l.ledger) == 1000
