"""TiersConfig validation and the recognizer registry (user YAML through the same registry)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tiers import Classifier, RecognizerError, Tier, TiersConfig

from .conftest import content


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"colour": "red"}, "colour"),
        ({"phone_regions": ["XX"]}, "phone_regions"),
        ({"internal_domains": ["not a domain"]}, "internal_domains"),
        ({"domain_patterns": [{"entity": "BATCH_ID", "pattern": "(?<=x)y"}]}, "domain_patterns"),
        ({"domain_patterns": [{"entity": "lower", "pattern": "x"}]}, "domain_patterns"),
        ({"deadline_seconds": 0}, "deadline_seconds"),
        # YAML's !!set: an order that changes with every process (and the patterns' key with it)
        ({"recognizer_files": {"/a.yaml", "/b.yaml"}}, "recognizer_files"),
        ({"extra_markers": frozenset({"Blue Owl"})}, "extra_markers"),
        ({"employee_lists": {"/people.txt"}}, "employee_lists"),
    ],
)
def test_config_rejects_unknown_keys_and_bad_values(kwargs: dict, key: str) -> None:
    """TiersConfig rejects unknown keys and bad values, naming the key."""
    with pytest.raises(ValidationError) as info:
        TiersConfig.model_validate(kwargs)
    assert key in str(info.value)


def test_config_is_frozen_and_embeddable() -> None:
    """The config is an immutable pydantic model the gateway can embed and dump."""
    cfg = TiersConfig(internal_domains=["Corp.Example.com"])
    assert cfg.internal_domains == ("corp.example.com",)
    with pytest.raises(ValidationError):
        cfg.min_score = 0.1  # type: ignore[misc]  # deliberately: the test is that the frozen model refuses it
    assert TiersConfig.model_validate(cfg.model_dump()) == cfg


def test_user_yaml_recognizers_share_the_registry(tmp_path: Path) -> None:
    """A user's presidio YAML (patterns and a deny list) runs next to the defaults."""
    path = tmp_path / "recs.yaml"
    path.write_text(
        "recognizers:\n"
        "  - name: ProjectCodes\n    supported_language: en\n    supported_entity: PROJECT_CODE\n"
        "    patterns:\n      - {name: code, regex: '\\bPRJ-[0-9]{5}\\b', score: 0.9}\n"
        "  - name: Codenames\n    supported_language: en\n    supported_entity: CODENAME\n"
        "    deny_list: [Nightjar, Blue Heron]\n",
        "utf-8",
    )
    clf = Classifier(TiersConfig(recognizer_files=(path,)))
    names = [r.name for r in clf.registry.recognizers]
    assert "ProjectCodes" in names and "Codenames" in names and "EmailAddressRecognizer" in names
    d = clf.classify(content("PRJ-12345 for blue heron, not nightjars; ops@acme-corp.de"))
    assert d.entity_counts() == {"PROJECT_CODE": 1, "CODENAME": 1, "EMAIL_ADDRESS": 1}
    assert d.tier == Tier.INTERNAL  # default floor for entity types the policy does not list


def test_bad_recognizer_file_fails_at_build(tmp_path: Path) -> None:
    """A malformed recognizer file fails when the classifier is built, naming the entry."""
    path = tmp_path / "recs.yaml"
    path.write_text("recognizers:\n  - name: Broken\n    supported_entity: X\n", "utf-8")
    with pytest.raises(RecognizerError, match=r"recognizers\[0\]"):
        Classifier(TiersConfig(recognizer_files=(path,)))


def test_missing_name_list_fails_at_build(tmp_path: Path) -> None:
    """A name-list file that cannot be read fails at build time."""
    with pytest.raises(RecognizerError, match="name list"):
        Classifier(TiersConfig(customer_lists=(tmp_path / "missing.txt",)))


def test_spacy_model_is_never_downloaded() -> None:
    """Naming a spaCy model that is not installed fails the build; nothing is downloaded."""
    with pytest.raises(RecognizerError, match="never downloaded"):
        Classifier(TiersConfig(spacy_model="en_core_web_tiergate_missing"))


def test_large_name_list(tmp_path: Path) -> None:
    """Name lists of any size work: 50,000 names, found case-insensitively as whole words."""
    path = tmp_path / "customers.txt"
    path.write_text("\n".join(f"Customer Number{i} GmbH" for i in range(50_000)), "utf-8")
    clf = Classifier(TiersConfig(customer_lists=(path,)))
    d = clf.classify(content("invoice CUSTOMER NUMBER49999 gmbh and Customer Number4999 GmbHx"))
    assert d.entity_counts() == {"CUSTOMER_NAME": 1}


def test_every_setting_is_documented() -> None:
    """Every TiersConfig / DomainPattern field carries a description (its attribute docstring)."""
    from tiers import DomainPattern

    for model in (TiersConfig, DomainPattern):
        for name, field in model.model_fields.items():
            assert field.description and len(field.description) > 20, f"{model.__name__}.{name}"


def test_stock_presidio_engine_still_builds_next_to_tiers() -> None:
    """Presidio's loader finds recognizer classes by name; ours must not shadow its defaults."""
    from presidio_analyzer import RecognizerRegistry

    import tiers  # noqa: F401  (registers our subclasses)

    registry = RecognizerRegistry()
    registry.load_predefined_recognizers(languages=["en"])
    names = {type(r).__module__.split(".")[0] for r in registry.recognizers}
    assert names == {"presidio_analyzer"}
