"""A compound given name ("Jean-Baptiste", "Paul-Olivier": each half a common given name) is no
firm of joined surnames, where spaCy's French tokenizer exceptions list hundreds of them; two
surnames joined so ("Smith-Jones") still are one (issue 12, 2026-12-07)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier

from .conftest import content

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_GIVEN = ["Jean", "Baptiste", "Paul", "Olivier", "Andre", "Antoine", "Daniel", "Joseph", "Charles", "Michel", "Anne"]
# census surnames that are given names too, but rarely: "Hunter-Moran" stays a firm
_SURNAMES_TOO = ["Hunter", "Moran", "Wagner", "Wilson", "Brennan"]
_SURNAMES = ["Smith", "Jones", "Rodriguez", "Schulz", "Dupont", "Rioux", "Lajoie", "Kowalski", "Nguyen", *_SURNAMES_TOO]
_CARRIERS = ['    "{n}",\n', "We hired {n} for the audit.", "Le cabinet {n} a répondu."]


def _organizations(clf: Classifier, text: str) -> set[str]:
    decision = clf.classify(content(text))
    assert not decision.failed_closed
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == "ORGANIZATION"}


@_SETTINGS
@given(st.lists(st.sampled_from(_GIVEN), min_size=2, max_size=2, unique=True), st.sampled_from(_CARRIERS))
def test_a_compound_given_name_is_no_firm(clf: Classifier, halves: list[str], carrier: str) -> None:
    text = carrier.format(n="-".join(halves))
    assert not _organizations(clf, text), text


@_SETTINGS
@given(st.lists(st.sampled_from(_SURNAMES), min_size=2, max_size=2, unique=True), st.sampled_from(_CARRIERS[1:]))
def test_joined_surnames_stay_a_firm(clf: Classifier, halves: list[str], carrier: str) -> None:
    name = "-".join(halves)
    assert name in _organizations(clf, carrier.format(n=name))
