"""The vendor register: which answers are current, due for review (age, engine change) or missing,
and how an exposure report quotes them."""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

import audit.vendors
from audit.assessment import Assessment, Verdict
from audit.disclosures import parse_disclosure
from audit.report import render_assessment_json, render_assessment_markdown
from audit.vendors import QUESTIONS, VendorProfile, VendorRegister, review_profile, review_vendors

TODAY = date(2026, 9, 10)
ENGINE_BOUND = {q.key for q in QUESTIONS if q.engine_bound}


def answer(text: str, days_ago: int, engine: str | None = "vLLM 0.10.1", **kw: str) -> dict[str, object]:
    return {"answer": text, "given": (TODAY - timedelta(days=days_ago)).isoformat(), "engine": engine, **kw}


def full_profile(engine: str = "vLLM 0.10.1", days_ago: int = 30) -> dict[str, object]:
    return {"engine": engine, **{q.key: answer(f"{q.key} answer", days_ago) for q in QUESTIONS}}


def statuses(profile: dict[str, object], review_after_days: int = 365) -> dict[str, tuple[str, tuple[str, ...]]]:
    register = VendorRegister.model_validate({"review_after_days": review_after_days,
                                              "providers": {"examplecloud": profile}})  # fmt: skip
    r = review_profile("examplecloud", register.providers["examplecloud"], register, TODAY)
    return {a.question.key: (a.status, a.due) for a in r.answers}


def test_fresh_answers_for_the_current_engine_are_current() -> None:
    assert {k: s for k, (s, _) in statuses(full_profile()).items()} == {q.key: "current" for q in QUESTIONS}


def test_an_engine_change_makes_the_engine_answers_due() -> None:
    """The vendor moved to a new vLLM: what it said about isolation, containment, the engine and
    reconstruction was said about the old one; retention, region and the contract still hold."""
    got = statuses({**full_profile(), "engine": "vLLM 0.11.2"})
    due = {k for k, (s, _) in got.items() if s == "due"}
    assert due == ENGINE_BOUND == {"tenant_isolation", "containment", "serving_engine", "reconstruction"}
    assert got["tenant_isolation"][1] == ("given for vLLM 0.10.1; the vendor now serves vLLM 0.11.2",)
    assert got["data_retention"] == ("current", ())
    # A version bump alone counts: the same engine name, another version.
    assert statuses({**full_profile(engine="vLLM 0.10.1"), "engine": "vLLM 0.10.2"})["containment"][0] == "due"


def test_an_engine_answer_without_its_engine_is_due_once_an_engine_is_declared() -> None:
    profile = {**full_profile(), "tenant_isolation": answer("isolated", 10, engine=None)}
    got = statuses(profile)
    assert got["tenant_isolation"][0] == "due" and "not recorded" in got["tenant_isolation"][1][0]
    undeclared = {**profile, "engine": None}
    assert statuses(undeclared)["tenant_isolation"] == ("current", ())


def test_old_answers_are_due_by_age() -> None:
    got = statuses({**full_profile(), "region": answer("EU only", 91), "training_use": answer("never", 90)},
                   review_after_days=90)  # fmt: skip
    assert got["region"] == ("due", (f"given {(TODAY - timedelta(days=91)).isoformat()}, more than 90 days ago",))
    assert got["training_use"] == ("current", ())  # exactly 90 days: not yet
    future = statuses({**full_profile(), "contract": answer("MSA 7", -1)})
    assert future["contract"][0] == "due" and "after today" in future["contract"][1][0]


def test_missing_answers_and_unknown_providers() -> None:
    got = statuses({"engine": "vLLM 0.10.1", "notification": answer("72 h by e-mail", 5)})
    assert got["notification"] == ("current", ())
    assert {k for k, (s, _) in got.items() if s == "missing"} == {q.key for q in QUESTIONS} - {"notification"}
    register = VendorRegister.model_validate({"providers": {"ExampleCloud": full_profile()}})
    reviews = review_vendors(register, ("openai",), TODAY, named=("example*",))
    assert [(r.provider, r.registered) for r in reviews] == [("examplecloud", True), ("openai", False)]
    assert all(a.status == "missing" for a in reviews[1].answers)


def test_register_rejects_mistakes() -> None:
    with pytest.raises(ValidationError, match="listed twice"):
        VendorRegister.model_validate({"providers": {"openai": {}, "OpenAI": {}}})
    with pytest.raises(ValidationError, match="isolaton"):
        VendorProfile.model_validate({"tenant_isolaton": answer("x", 1)})
    with pytest.raises(ValidationError):
        VendorProfile.model_validate({"tenant_isolation": {"answer": "no date"}})


def test_docstring_example_is_a_valid_register() -> None:
    doc = audit.vendors.__doc__ or ""
    block = re.search(r"\n(    vendors:\n(?:    .*\n)+)", doc).group(1)  # type: ignore[union-attr]  # no match fails the test right here
    register = VendorRegister.model_validate(yaml.safe_load(block)["vendors"])
    assert register.providers["cloudflare-workers-ai"].tenant_isolation is not None


def _assessment() -> Assessment:
    spec = parse_disclosure("title: KV cross-talk\nreference: EC-1\nproviders: [examplecloud]\nwindow:\n"
                            "  start: 2026-08-27T00:00:00Z\n  end: 2026-09-09T23:59:59Z\n")  # fmt: skip
    return Assessment(disclosure=spec, total=3, by_tier={1: 2, 2: 1}, by_tenant_key=(), by_day=(),
                      earliest=datetime(2026, 8, 28, tzinfo=UTC), latest=datetime(2026, 8, 29, tzinfo=UTC),
                      entities=(), tier3_total=0, tier3_shared=0, tier3=(), longest=(), tenants_to_contact=("beta",),
                      verdict=Verdict.SENSITIVE, providers=("examplecloud",))  # fmt: skip


def test_report_quotes_the_answers_next_to_the_verdict() -> None:
    profile = {**full_profile(engine="vLLM 0.11.2"),
               "tenant_isolation": answer("KV blocks | never shared\nacross accounts", 20,
                                          source="questionnaire 4.2"),
               "containment": answer("within 4 hours", 20, example="2025-11 incident: 3 h")}  # fmt: skip
    profile.pop("region")
    register = VendorRegister.model_validate({"providers": {"examplecloud": profile}})
    a = _assessment()
    vendors = review_vendors(register, a.providers, TODAY, named=a.disclosure.providers)
    md = render_assessment_markdown(a, vendors)
    verdict_at, register_at = md.index("## Verdict"), md.index("## What the vendor told us in writing")
    assert verdict_at < register_at < md.index("## By tier")  # right after the verdict
    assert "### examplecloud (serving vLLM 0.11.2)" in md
    assert ("| tenant isolation | \u201cKV blocks \\| never shared across accounts\u201d (source: questionnaire 4.2) "
            "| 2026-08-21 | vLLM 0.10.1 | **DUE FOR REVIEW**: given for vLLM 0.10.1; the vendor now serves "
            "vLLM 0.11.2 |") in md  # fmt: skip
    assert "\u201cwithin 4 hours\u201d Example: 2025-11 incident: 3 h" in md
    assert "| region | - | - | - | **MISSING** |" in md
    assert "| data retention | \u201cdata_retention answer\u201d | 2026-08-11 | vLLM 0.10.1 | current |" in md
    doc = json.loads(render_assessment_json(a, vendors))
    (entry,) = doc["vendor_register"]
    assert entry["provider"] == "examplecloud" and entry["engine"] == "vLLM 0.11.2"
    by_q = {x["question"]: x for x in entry["answers"]}
    assert by_q["tenant_isolation"]["status"] == "due" and by_q["region"]["status"] == "missing"
    assert by_q["containment"]["example"] == "2025-11 incident: 3 h"
    assert entry["due_for_review"] == len(ENGINE_BOUND) + 1
    # Without a register, the report is what it was.
    assert "vendor_register" not in json.loads(render_assessment_json(a))
    assert "What the vendor told us" not in render_assessment_markdown(a)


def test_example_config_register_is_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tiergate.example.yaml documents the register with a complete, valid profile."""
    from gateway.settings import load_settings

    monkeypatch.chdir(tmp_path)
    settings = load_settings(Path(__file__).resolve().parents[2] / "tiergate.example.yaml")
    profile = settings.vendors.providers["openai"]
    assert all(getattr(profile, q.key) is not None for q in QUESTIONS)
