"""classify(): tiers from the policy, client floors, tenant policies, and failing closed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from presidio_analyzer import Pattern, PatternRecognizer

from tiers import Classifier, Tier, TiersConfig

from .conftest import content


@pytest.mark.parametrize(
    ("text", "tier"),
    [
        ("Summarise the attached meeting notes in three bullets.", Tier.GENERAL),
        ("Ping maria.gonzalez@example.com about the release.", Tier.INTERNAL),
        ("The deploy host is build-01.corp.example.com.", Tier.INTERNAL),
        ("Export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY now", Tier.INTERNAL),
        ("Refund card 4556 0172 8390 6414 please.", Tier.RESTRICTED),
        ("Customer Confidential: Q3 pricing for the tender.", Tier.RESTRICTED),
        ("Attach the GMP batch record for Lot L240311A.", Tier.RESTRICTED),
    ],
)
def test_tier_follows_the_default_policy(clf: Classifier, text: str, tier: Tier) -> None:
    """The tier is the highest floor of the entities found (default policy)."""
    d = clf.classify(content(text))
    assert d.tier == tier and not d.failed_closed


def test_findings_and_reasons_carry_no_text(clf: Classifier) -> None:
    """Reasons name entity types and counts only; findings point into the original segment."""
    text = "mail maria.gonzalez@example.com and wei zhang"
    d = clf.classify(content("hello", text))
    assert d.entity_counts() == {"EMAIL_ADDRESS": 1, "EMPLOYEE_NAME": 1}
    assert all(f.segment == 1 for f in d.findings)
    assert {text[f.start : f.end] for f in d.findings} == {"maria.gonzalez@example.com", "wei zhang"}
    assert not any("maria" in r or "zhang" in r for r in d.reasons)


def test_client_floor_raises_never_lowers(clf: Classifier) -> None:
    """A client floor raises the tier of clean text, and cannot lower a Tier 3 text."""
    assert clf.classify(content("hello"), floor=Tier.RESTRICTED).tier == Tier.RESTRICTED
    assert clf.classify(content("card 4556 0172 8390 6414"), floor=Tier.GENERAL).tier == Tier.RESTRICTED
    assert "client floor: tier 2" in clf.classify(content("hi"), floor=Tier.INTERNAL).reasons


def test_tenant_policy_applies_only_to_that_tenant(tmp_path: Path, config: TiersConfig) -> None:
    """A tenant whose policy puts e-mail at tier 3 gets Tier 3; other tenants keep the default."""
    strict = tmp_path / "strict.yaml"
    strict.write_text(
        "version: 1\nentities: {EMAIL_ADDRESS: 3}\ntiers:\n"
        "  1: {allow: [shared, dedicated, onprem]}\n"
        "  2: {allow: [dedicated, onprem]}\n"
        "  3: {allow: [onprem]}\n",
        "utf-8",
    )
    clf = Classifier(config.model_copy(update={"tenant_policies": {"bank": strict}}))
    c = content("mail maria.gonzalez@example.com")
    assert clf.classify(c, tenant="bank").tier == Tier.RESTRICTED
    assert clf.classify(c, tenant="other").tier == Tier.INTERNAL
    assert clf.classify(c).tier == Tier.INTERNAL
    assert not clf.policy_for("bank").rule(Tier.INTERNAL).allows("shared")


class Exploding(PatternRecognizer):
    """A recognizer whose validator raises, with prompt text in the message."""

    def __init__(self) -> None:
        super().__init__(supported_entity="BOOM", name="Exploding", patterns=[Pattern("b", r"boom", 0.9)])

    def validate_result(self, pattern_text: str) -> bool:
        raise RuntimeError(f"secret prompt text: {pattern_text}")


class Slow(PatternRecognizer):
    """A recognizer that advances the injected clock by a minute per match."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock
        super().__init__(supported_entity="SLOW", name="Slow", patterns=[Pattern("s", r"tick", 0.9)])

    def validate_result(self, pattern_text: str) -> bool:
        self.clock[0] += 60.0
        return True


def test_raising_recognizer_fails_closed() -> None:
    """A recognizer that raises gives Tier 3, failed_closed, and no text in the reason."""
    clf = Classifier(TiersConfig(), extra_recognizers=[Exploding()])
    assert clf.classify(content("all quiet")).tier == Tier.GENERAL
    d = clf.classify(content("the boom word"))
    assert d.tier == Tier.RESTRICTED and d.failed_closed
    assert d.reasons == ("failed closed: RuntimeError during analysis",)
    assert not d.findings


def test_deadline_overrun_fails_closed() -> None:
    """Analysis that overruns the deadline (by the injected clock) gives Tier 3."""
    now = [0.0]
    clf = Classifier(TiersConfig(deadline_seconds=5), clock=lambda: now[0], extra_recognizers=[Slow(now)])
    assert not clf.classify(content("no match here")).failed_closed
    d = clf.classify(content("tick"))
    assert d.tier == Tier.RESTRICTED and d.failed_closed
    assert "deadline" in d.reasons[0]


def test_regex_timeout_fails_closed(tmp_path: Path) -> None:
    """A user pattern RE2 cannot run, blowing up in backtracking, gives Tier 3 instead of a skip."""
    rec = tmp_path / "recs.yaml"
    rec.write_text(
        "recognizers:\n"
        "  - name: Backtracker\n    supported_language: en\n    supported_entity: BAD\n"
        "    patterns:\n      - name: bad\n        regex: '(a|aa)+(?=b)'\n        score: 0.9\n",
        "utf-8",
    )
    clf = Classifier(TiersConfig(recognizer_files=(rec,), regex_timeout_seconds=0.05))
    assert clf.classify(content("aab")).entity_counts() == {"BAD": 1}
    d = clf.classify(content("x " + "a" * 80 + "c"))
    assert d.tier == Tier.RESTRICTED and d.failed_closed and d.reasons == ("failed closed: regex timeout",)


def test_bad_input_fails_closed(clf: Classifier) -> None:
    """Content that is not text, or an invalid floor, fails closed instead of raising."""
    from tiers import Content, Segment

    assert clf.classify(Content((Segment(("x",), 5),))).failed_closed  # type: ignore[arg-type]  # deliberately the wrong type: the test is that it is refused
    assert clf.classify(content("hi"), floor=7).failed_closed  # type: ignore[arg-type]  # deliberately the wrong type: the test is that it is refused


def test_phone_after_600_kb_of_digit_groups(clf: Classifier) -> None:
    """A phone number after 600 KB of short digit groups is still found (no candidate cap)."""
    rnd = random.Random(7)
    groups = " ".join(f"{rnd.randint(0, 99):02d}" for _ in range(210_000))
    assert len(groups) > 600_000
    text = groups + "\ncall (415) 555-2671 or +44 20 7946 0958\n"
    d = clf.classify(content(text))
    phones = {text[f.start : f.end] for f in d.findings if f.entity_type == "PHONE_NUMBER"}
    assert {"(415) 555-2671", "+44 20 7946 0958"} <= phones


def test_classification_makes_no_network_calls(clf: Classifier, monkeypatch: pytest.MonkeyPatch) -> None:
    """With every socket connection refused, e-mails and URLs still classify (no tldextract fetch)."""
    import socket

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access from tiers")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    d = clf.classify(content("mail bob@example.co.uk, see https://user:pw12345@example.org/x"))
    assert not d.failed_closed and set(d.entity_counts()) == {"EMAIL_ADDRESS", "SECRET"}
