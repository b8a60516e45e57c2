"""The real coding agents through a real gateway: Claude Code (Anthropic Messages) and Codex CLI
(OpenAI Responses), installed from npm by ``scripts/install-agents.sh`` (``scripts/test`` runs
it), run non-interactively against scripted fake vendors on 127.0.0.1 — no network.

Each runs in a working directory holding a ``.env`` with credentials, a document with names and
e-mails, and a file with an IBAN. The fake "model" reads the files with the agent's own tool and
answers by listing the placeholders it was shown (tests/support/agent_vendor.py), so:

* the shared vendor's ledger must hold no identifier in the clear;
* Tier 3 (the IBAN) must reach only the on-prem upstream;
* the agent's answer must show the identifiers restored;
* every request the vendors received must have its audit row and outcome;
* a prompt too long for every upstream: Claude Code gets 413 request_too_large ("Prompt is too
  long"), Codex context_length_exceeded ("ran out of room in the model's context window"), and
  neither retries;
* Claude Code's compaction (after the gateway's 413, at its own threshold, or by /compact) is one
  more request, stripped and audited like any other, and the session goes on shorter.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import FakeUpstream
from tests.support.agent_vendor import PLACEHOLDER, SUMMARY_REQUEST, agent_script, compacting_script
from tests.support.harness import FakeUpstreams, GatewayHarness

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "build" / "agents" / "node_modules" / ".bin"
ALL = ["openai", "anthropic", "responses"]
# Generous bounds for events that must happen, never speed assertions: an agent's whole run, and
# the gateway's last outcome row landing after the agent has its answer (GatewayHarness.rows
# waits only 3 s, then reads whatever is there; at load 20 the last row can come later).
AGENT_RUN_S = 600
AUDIT_WAIT_S = 120.0
pytestmark = pytest.mark.timeout(1800)
FILES = ["customers.md", ".env", "payment.txt"]

SECRETS = ["AKIAIOSFODNN7EXAMPLE", "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"]
EMAILS = ["alice.martin@example.org", "bob.stone@example.org"]
NAMES = ["Alice Martin", "Bob Stone"]
IBAN = "DE41 2605 0000 1562 8071 31"


def _binary(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/install-agents.sh (scripts/test does)")
    return path


@pytest.fixture(scope="module")
def agent_classifier(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tiers import Classifier
    from tiers.config import TiersConfig

    lists = tmp_path_factory.mktemp("lists") / "employees.txt"
    lists.write_text("\n".join(NAMES) + "\n")
    return Classifier(TiersConfig(employee_lists=(lists,)))


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    (d / ".env").write_text(f"AWS_ACCESS_KEY_ID={SECRETS[0]}\nGITHUB_TOKEN={SECRETS[1]}\n")
    (d / "customers.md").write_text(
        f"# Key contacts\n\n- {NAMES[0]} <{EMAILS[0]}>, head of procurement\n- {NAMES[1]} <{EMAILS[1]}>, auditor\n"
    )
    (d / "payment.txt").write_text(f"Wire the deposit to IBAN {IBAN} by Friday.\n")
    return d


@pytest.fixture
def vendors(work: Path) -> Iterator[FakeUpstreams]:
    script = agent_script(work, FILES)
    with FakeUpstreams(FakeUpstream(name="vendor", kind="shared", script=script),
                       FakeUpstream(name="local", kind="onprem", script=script)) as f:  # fmt: skip
        yield f


def _config(f: FakeUpstreams, window: int) -> dict[str, Any]:
    ups = [
        {"name": "vendor", "base_url": f.base_url("vendor"), "kind": "shared", "max_tier": 2, "provider": "acme-ai",
         "models": {"agent-model": "vendor-model"}, "context_window": window, "protocols": ALL},
        {"name": "local", "base_url": f.base_url("local"), "kind": "onprem", "max_tier": 3,
         # no more than the engine's manifest says it serves (max_model_len), or it is not hardened
         "models": {"agent-model": "local-model"}, "context_window": min(window, 32768), "protocols": ALL},
    ]  # fmt: skip
    return {"upstreams": ups, "limits": {"auth_cache_s": 0}}


@pytest.fixture
def gw(vendors: FakeUpstreams, sqlite_db: str, tmp_path: Path, agent_classifier: Any) -> Iterator[GatewayHarness]:
    with GatewayHarness(sqlite_db, tmp_path, _config(vendors, 1_000_000), classifier=agent_classifier) as g:
        yield g


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return home


def claude(
    gw: GatewayHarness, work: Path, prompt: str, *args: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    env = {"PATH": os.environ["PATH"], "HOME": str(_home(work.parent)), "ANTHROPIC_BASE_URL": gw.url,
           "ANTHROPIC_API_KEY": gw.create_key(), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "ANTHROPIC_DEFAULT_HAIKU_MODEL": "agent-model", "DISABLE_AUTOUPDATER": "1", **(env or {})}  # fmt: skip
    done = subprocess.run([str(_binary("claude")), "-p", prompt, "--output-format", "json", "--model", "agent-model",
                           "--allowedTools", "Read", *args], cwd=work, env=env, capture_output=True, text=True,
                          timeout=AGENT_RUN_S, stdin=subprocess.DEVNULL)  # fmt: skip
    return json.loads(done.stdout)


def codex(gw: GatewayHarness, work: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    home = _home(work.parent)
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model_provider = "tg"\nmodel = "agent-model"\n[model_providers.tg]\nname = "tiergate"\n'
        f'base_url = "{gw.url}/v1"\nenv_key = "TG_KEY"\nwire_api = "responses"\n'
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "CODEX_HOME": str(codex_home), "TG_KEY": gw.create_key()}
    return subprocess.run([str(_binary("codex")), "exec", "--skip-git-repo-check", prompt], cwd=work, env=env,
                          capture_output=True, text=True, timeout=AGENT_RUN_S, stdin=subprocess.DEVNULL)  # fmt: skip


def _audited(gw: GatewayHarness, vendors: FakeUpstreams) -> list[dict[str, Any]]:
    """Every request a vendor received has its write-ahead row, for that upstream, and an ok
    outcome; returns the rows in order. A length the gateway's estimate could not settle was
    counted at that upstream's count_tokens first, under the row of the message it measured."""
    rows = gw.rows("SELECT r.endpoint, r.upstream, r.tier, r.stripped, o.status FROM audit_requests r "
                   "JOIN audit_outcomes o USING (request_id) WHERE r.forwarded ORDER BY r.seq")  # fmt: skip
    for name in ("vendor", "local"):
        paths = [i.path.removeprefix("/v1/") for i in vendors[name].ledger.items()]
        mine = [r["endpoint"] for r in rows if r["upstream"] == name]
        generation = [p for p in paths if p in ("messages", "responses")]
        assert [e for e in mine if e != "count_tokens"] == generation
        assert mine.count("count_tokens") <= paths.count("messages/count_tokens")
        assert len(mine) >= len(generation) > 0 or not paths
    assert all(r["status"] == "ok" for r in rows)
    return rows


def _clean(text: str) -> None:
    for value in [*EMAILS, *SECRETS, *NAMES, IBAN, IBAN.replace(" ", "")]:
        assert value not in text, value


def test_claude_code_reads_the_files_identifiers_never_reach_the_vendor(
    gw: GatewayHarness, vendors: FakeUpstreams, work: Path
) -> None:
    result = claude(gw, work, "Read customers.md and .env, then list the contacts and keys.")
    assert result["is_error"] is False, result
    for value in [*EMAILS, *SECRETS]:
        assert value in result["result"]  # restored in the agent's answer
    _clean(vendors["vendor"].ledger.raw_text())
    assert len(vendors["local"].ledger) == 0  # Tier 2: stripped at the shared vendor
    rows = _audited(gw, vendors)
    assert {r["upstream"] for r in rows} == {"vendor"} and all(r["stripped"] for r in rows)
    first = vendors["vendor"].ledger.items()[0]
    assert first.path == "/v1/messages" and "context-management" in first.headers["anthropic-beta"]


def test_claude_code_tier3_goes_on_prem_only(gw: GatewayHarness, vendors: FakeUpstreams, work: Path) -> None:
    result = claude(gw, work, "Read payment.txt and tell me where the deposit goes.")
    assert result["is_error"] is False, result
    _clean(vendors["vendor"].ledger.raw_text())
    assert IBAN in vendors["local"].ledger.raw_text()
    rows = _audited(gw, vendors)
    assert {r["upstream"] for r in rows if r["tier"] == 3} == {"local"}  # (Claude Code counts tool results too)


def test_codex_reads_the_files_identifiers_never_reach_the_vendor(
    gw: GatewayHarness, vendors: FakeUpstreams, work: Path
) -> None:
    done = codex(gw, work, "Show me customers.md and .env, then list the contacts and keys.")
    assert done.returncode == 0, done.stderr[-2000:]
    answer = done.stdout
    for value in [*EMAILS, *SECRETS]:
        assert value in answer
    _clean(vendors["vendor"].ledger.raw_text())
    assert len(vendors["local"].ledger) == 0
    rows = _audited(gw, vendors)
    assert {r["upstream"] for r in rows} == {"vendor"} and rows[-1]["stripped"]
    assert all(b["store"] is False for b in vendors["vendor"].ledger.bodies())


def test_codex_tier3_goes_on_prem_only(gw: GatewayHarness, vendors: FakeUpstreams, work: Path) -> None:
    done = codex(gw, work, "Show me payment.txt and tell me where the deposit goes.")
    assert done.returncode == 0, done.stderr[-2000:]
    _clean(vendors["vendor"].ledger.raw_text())
    assert IBAN in vendors["local"].ledger.raw_text()
    rows = _audited(gw, vendors)
    assert {r["upstream"] for r in rows if r["tier"] == 3} == {"local"}  # (Claude Code counts tool results too)


def test_over_long_prompts_get_each_agents_own_answer(
    vendors: FakeUpstreams, sqlite_db: str, tmp_path: Path, agent_classifier: Any, work: Path
) -> None:
    """Both agents' first request (their system prompt and tools alone) is longer than a
    4k-token window: Claude Code is told 413 request_too_large, Codex context_length_exceeded;
    nothing is generated and neither retries."""
    with GatewayHarness(sqlite_db, tmp_path, _config(vendors, 4000), classifier=agent_classifier) as g:
        result = claude(g, work, "Read customers.md.")
        assert result["is_error"] is True and result["api_error_status"] == 413
        assert "Prompt is too long" in result["result"]
        done = codex(g, work, "Show me customers.md.")
        assert done.returncode != 0 and "context window" in done.stderr
        rows = g.rows("SELECT r.endpoint, o.http_status, o.error_class FROM audit_requests r "
                      "JOIN audit_outcomes o USING (request_id) ORDER BY r.seq")  # fmt: skip
    # Claude Code's estimate could not settle it (its tool schemas widen only the ceiling): each
    # upstream counted it with count_tokens, under a row of its own, and said too long.
    assert {(r["endpoint"], r["http_status"]) for r in rows} == {("messages", 413), ("responses", 400)}
    assert rows[-1]["error_class"] == "context_length_exceeded"
    sent = [i.path for name in ("vendor", "local") for i in vendors[name].ledger.items()]
    assert set(sent) <= {"/v1/messages/count_tokens"}  # counted, never generated


# ---- compaction --------------------------------------------------------------------------------
# Claude Code 2.1 compacts in -p mode too, three ways, each one more /v1/messages call: its own
# system prompt and tools, the rounds to summarise, and a user turn "Your task is to create a
# detailed summary…"; the session then goes on from [summary, rounds kept].
# * Reactively: a 413 whose message says "prompt is too long" is withheld, every round but the last
#   is summarised and the turn retried once. It needs three rounds (a summarise set must hold an
#   assistant turn): a 413 on the first request is final (test_over_long_prompts_get_each_agents_…).
# * At a threshold, before a call: only where a window is configured (CLAUDE_CODE_AUTO_COMPACT_WINDOW,
#   at least 100k, CLAUDE_AUTOCOMPACT_PCT_OVERRIDE of it), else it relies on the 413; estimated from
#   the last usage the vendor reported plus the turns since (which the gateway checks, so a fake
#   vendor cannot simply report more).
# * By hand: `claude -p /compact --continue` summarises the whole saved session.
# DISABLE_AUTO_COMPACT=1 turns off the first two: the 413 then reaches the user.

# Each log is ~6.9k of the fake vendor's tokens over a ~18k first request: the third request (both
# logs read) is ~31.7k, the summarising one (first log and the prompt) ~26.4k, the retry ~23.8k.
COMPACT_WINDOW = 29_000
LOGS = {
    "build.log": (EMAILS[0], "The nightly build finished and the artefact cache stayed warm for every module.\n"),
    "deploy.log": (EMAILS[1], "The canary deploy rolled out and each health check in the fleet stayed green.\n"),
}
ASK_LOGS = "Read build.log, then deploy.log, and tell me who owns them."


@pytest.fixture
def compacting(work: Path) -> Iterator[FakeUpstreams]:
    for name, (owner, line) in LOGS.items():
        (work / name).write_text(f"Owner: {owner}\n" + line * 330)
    script = compacting_script(work, list(LOGS))
    with FakeUpstreams(FakeUpstream(name="vendor", kind="shared", script=script),
                       FakeUpstream(name="local", kind="onprem", script=script)) as f:  # fmt: skip
        yield f


def _summarised_once(vendors: FakeUpstreams) -> list[Any]:
    """The vendor's generation requests, of which exactly one is Claude Code's summarising one,
    stripped like any turn; the vendor holds no identifier in the clear."""
    _clean(vendors["vendor"].ledger.raw_text())
    assert {i.path for i in vendors["local"].ledger.items()} <= {"/v1/messages/count_tokens"}
    sent = [i for i in vendors["vendor"].ledger.items() if i.path == "/v1/messages"]
    summarising = [i for i in sent if SUMMARY_REQUEST in i.text]
    assert len(summarising) == 1
    assert PLACEHOLDER.search(summarising[0].text)  # the rounds it carries were stripped
    return sent


def test_claude_code_compacts_through_the_gateway_after_a_413(
    compacting: FakeUpstreams, sqlite_db: str, tmp_path: Path, agent_classifier: Any, work: Path
) -> None:
    """Claude Code reads two logs, one a turn; the third request no longer fits any upstream: the
    gateway answers 413 request_too_large, Claude Code sends one summarising request (classified,
    stripped, audited like any other) and retries once, shorter; every identifier is restored."""
    vendors = compacting
    with GatewayHarness(sqlite_db, tmp_path, _config(vendors, COMPACT_WINDOW), classifier=agent_classifier) as g:
        result = claude(g, work, ASK_LOGS)
        g.settle(AUDIT_WAIT_S)
        rows = g.rows("SELECT r.endpoint, r.upstream, r.tier, r.stripped, r.prompt_tokens, o.status, "
                      "o.http_status, o.error_class FROM audit_requests r JOIN audit_outcomes o USING (request_id) "
                      "WHERE r.endpoint = 'messages' ORDER BY r.seq")  # fmt: skip
    assert result["is_error"] is False, result
    ok = [r for r in rows if r["status"] == "ok"]
    refused = [r for r in rows if r["status"] != "ok"]
    assert [(r["upstream"], r["tier"], r["stripped"]) for r in ok] == [("vendor", 2, True)] * 4, rows
    for owner, _ in LOGS.values():
        assert owner in result["result"]  # the first log's owner came back through the summary
    sent = _summarised_once(vendors)
    assert SUMMARY_REQUEST in sent[2].text  # right after the refused request
    retry = sent[3].text
    assert "[read:build.log]" in retry and LOGS["deploy.log"][1].strip() in retry
    assert LOGS["build.log"][1].strip() not in retry  # the first round is gone, its summary stays
    assert len(sent) == 4  # the refused prompt was never sent again

    # One client request was refused (a row per upstream that measured it), nothing after it.
    assert [r["http_status"] for r in rows] == [200, 200] + [413] * len(refused) + [200, 200]
    assert {(r["http_status"], r["error_class"]) for r in refused} == {(413, "prompt_too_long")}
    assert all(r["prompt_tokens"] > COMPACT_WINDOW for r in refused)
    assert ok[3]["prompt_tokens"] < min(r["prompt_tokens"] for r in refused)


@pytest.mark.parametrize("trigger", ["threshold", "by-hand"])
def test_claude_codes_own_compaction_goes_through_the_gateway(
    trigger: str, compacting: FakeUpstreams, sqlite_db: str, tmp_path: Path, agent_classifier: Any, work: Path
) -> None:
    """No 413: Claude Code compacts at its own threshold (a 100k auto-compact window, 28k of it)
    before the third request, or when told /compact in a --continue session; the summarising
    request is stripped and audited, and the session goes on shorter with every identifier."""
    vendors = compacting
    with GatewayHarness(sqlite_db, tmp_path, _config(vendors, 1_000_000), classifier=agent_classifier) as g:
        if trigger == "threshold":
            auto = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "35"}
            result = claude(g, work, ASK_LOGS, env=auto)
        else:
            assert claude(g, work, ASK_LOGS)["is_error"] is False
            assert claude(g, work, "/compact", "--continue")["is_error"] is False
            result = claude(g, work, "Who owns build.log and deploy.log?", "--continue")
        g.settle(AUDIT_WAIT_S)
        rows = g.rows("SELECT r.upstream, r.tier, r.findings, r.stripped, r.prompt_tokens, o.status FROM audit_requests r JOIN "
                      "audit_outcomes o USING (request_id) WHERE r.endpoint = 'messages' ORDER BY r.seq")  # fmt: skip
    assert result["is_error"] is False, result
    audited = [(r["upstream"], r["tier"], r["stripped"], r["status"]) for r in rows]
    assert set(audited) == {("vendor", 2, True, "ok")}, [r["findings"] for r in rows]
    for owner, _ in LOGS.values():
        assert owner in result["result"]
    sent = _summarised_once(vendors)
    assert len(audited) == len(sent)  # one row per call, the summarising one too
    n = next(n for n, i in enumerate(sent) if SUMMARY_REQUEST in i.text)
    assert n == 2 if trigger == "threshold" else n == 3  # before the third call / after the session
    after = rows[n + 1]["prompt_tokens"]
    assert after < max(r["prompt_tokens"] for r in rows[: n + 1]) and "[read:build.log]" in sent[n + 1].text
