"""Policy files: the shipped default, validation naming the bad key, and tier rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiers import PolicyError, Tier, UpstreamKind, load_policy

SHARED, DEDICATED, ONPREM = UpstreamKind.SHARED, UpstreamKind.DEDICATED, UpstreamKind.ONPREM


def test_default_policy_rules() -> None:
    """Tier 1 anywhere as is; Tier 2 shared only stripped; Tier 3 never shared."""
    p = load_policy()
    t1, t2, t3 = p.rule(Tier.GENERAL), p.rule(Tier.INTERNAL), p.rule(Tier.RESTRICTED)
    assert all(t1.allows(k) and not t1.must_strip(k) for k in UpstreamKind)
    assert t2.allows(SHARED) and t2.must_strip(SHARED)
    assert t2.allows(DEDICATED) and not t2.must_strip(DEDICATED) and not t2.must_strip(ONPREM)
    assert not t3.allows(SHARED) and t3.allows(DEDICATED) and t3.allows(ONPREM)
    assert t3.allows("onprem") and not t3.allows("shared")


@pytest.mark.parametrize(
    ("entity", "tier"),
    [
        ("EMAIL_ADDRESS", 2),
        ("PHONE_NUMBER", 2),
        ("SECRET", 2),
        ("INTERNAL_HOST", 2),
        ("CUSTOMER_NAME", 2),
        ("CREDIT_CARD", 3),
        ("IBAN_CODE", 3),
        ("US_SSN", 3),
        ("CONFIDENTIALITY_MARKER", 3),
        ("GMP_MARKER", 3),
        ("SOMETHING_USER_DEFINED", 2),
    ],
)
def test_default_entity_floors(entity: str, tier: int) -> None:
    """Entity floors follow the issue; unknown entity types default to Tier 2."""
    assert load_policy().floor(entity) == Tier(tier)


GOOD = """version: 1
entities: {EMAIL_ADDRESS: 2}
tiers:
  1: {allow: [shared, dedicated, onprem]}
  2: {allow: [shared, dedicated, onprem], strip: [shared]}
  3: {allow: [dedicated, onprem]}
"""


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (GOOD.replace("version: 1", "version: 1\ncolour: red"), "colour"),
        (GOOD.replace("EMAIL_ADDRESS: 2", "EMAIL_ADDRESS: 5"), "entities.EMAIL_ADDRESS"),
        (GOOD.replace("[dedicated, onprem]}", "[dedicated, cloud]}"), "tiers.3.allow"),
        (GOOD.replace("3: {allow: [dedicated, onprem]}", "3: {allow: [shared, onprem]}"), "tier 3 may never"),
        (GOOD.replace("strip: [shared]", "strip: [shared], mask: true"), "tiers.2.mask"),
        (GOOD.replace("  3: {allow: [dedicated, onprem]}\n", ""), "missing rules for tier(s) [3]"),
        (GOOD.replace("version: 1", "version: 2"), "version"),
        ("version: 1\ntiers: [", "not valid YAML"),
        ("- a list", "a policy must be a mapping"),
    ],
)
def test_bad_policy_names_the_key(tmp_path: Path, text: str, key: str) -> None:
    """Unknown keys and bad values fail with the file and the offending key in the message."""
    path = tmp_path / "policy.yaml"
    path.write_text(text, "utf-8")
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert key in str(info.value) and str(path) in str(info.value)


def test_missing_policy_file(tmp_path: Path) -> None:
    """A policy path that does not exist fails at load time."""
    with pytest.raises(PolicyError, match="cannot read"):
        load_policy(tmp_path / "nope.yaml")


def test_configurable_tier2_rule(tmp_path: Path) -> None:
    """A policy may keep Tier 2 off shared endpoints entirely, or strip for dedicated too."""
    path = tmp_path / "p.yaml"
    path.write_text(
        GOOD.replace(
            "2: {allow: [shared, dedicated, onprem], strip: [shared]}",
            "2: {allow: [dedicated, onprem], strip: [dedicated]}",
        ),
        "utf-8",
    )
    rule = load_policy(path).rule(Tier.INTERNAL)
    assert not rule.allows(SHARED) and rule.must_strip(DEDICATED) and not rule.must_strip(ONPREM)
