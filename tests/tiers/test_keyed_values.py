"""A value's own key says what it is, before the context words around it do.

Found on a tokenizer's vocabulary (mistral_common's ``tekken`` JSON, 150,000 entries of
``"rank": 124699, "token_bytes": …, "token_str": " Drivers"``): the vocabulary holds every word,
"Drivers" and "DL" among them, so every rank near one was a driver's licence (Tier 3). And a
bank's routing number written as one (``routing_number='122105155'`` in pydantic-extra-types'
docs) was an account number (Tier 3) by the word "account" beside it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers._context import keyed_as_quantity
from tiers.recognizers.national import aba_routing_number

from .conftest import content

_QUANTITY_KEYS = ["rank", "line_count", "maxTokens", "port", "offset", "seed", "timestamp", "page.index"]
_LICENCE_KEYS = ["license_number", "driversLicense", "dl_no", "licence"]
# (how a key and its value are written) on one line
_SYNTAXES = ['"{k}": {v},', "{k}: {v}", "{k}={v}", "{k} = '{v}'", "f({k}={v})"]
_ABA_WEIGHTS = (3, 7, 1) * 3


def _entities(clf: Classifier, text: str, entity: str) -> set[str]:
    decision = clf.classify(content(text))
    assert not decision.failed_closed, decision.reasons
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == entity}


def _with_check_digit(eight: str) -> str:
    """Eight digits and the ninth that makes an ABA routing number of them."""
    partial = sum(int(d) * w for d, w in zip(eight, _ABA_WEIGHTS))
    return eight + str((10 - partial % 10) % 10)


_digits = st.text("123456789", min_size=7, max_size=9).filter(lambda d: len(set(d)) > 2)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_digits, quantity=st.sampled_from(_QUANTITY_KEYS), licence=st.sampled_from(_LICENCE_KEYS),
       syntax=st.sampled_from(_SYNTAXES))  # fmt: skip
def test_a_number_keyed_as_a_quantity_is_no_licence_though_a_driver_word_is_near(
    clf: Classifier, value: str, quantity: str, licence: str, syntax: str
) -> None:
    near = 'token_str: " Drivers"\n'
    keyed = near + syntax.format(k=quantity, v=value) + "\n"
    assert value not in _entities(clf, keyed, "US_DRIVER_LICENSE")
    # the same number under a licence's own key is one
    named = near + syntax.format(k=licence, v=value) + "\n"
    assert value in _entities(clf, named, "US_DRIVER_LICENSE")


@given(key=st.sampled_from(_QUANTITY_KEYS), syntax=st.sampled_from(_SYNTAXES))
def test_the_key_is_read_from_the_values_own_line(key: str, syntax: str) -> None:
    line = syntax.format(k=key, v="88012345")
    at = line.index("88012345")
    assert keyed_as_quantity(line, at)
    # a key on the line before says nothing about a value starting its own line
    assert not keyed_as_quantity(f"{key}:\n88012345", len(key) + 2)
    # a key that names an identifier is no quantity
    assert not keyed_as_quantity(line.replace(key, "license_number"), at - len(key) + len("license_number"))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    eight=st.text("0123456789", min_size=8, max_size=8).filter(lambda d: len(set(d)) > 2),
    label=st.sampled_from(["routing_number='{}'", "Routing No.: {}", "ABA {}", "RTN: {}", "transit number {}"]),
)
def test_a_routing_number_written_as_one_is_no_account(clf: Classifier, eight: str, label: str) -> None:
    routing = _with_check_digit(eight)
    assert aba_routing_number(routing)
    text = "account = BankAccount(" + label.format(routing) + ")\n"
    assert routing not in _entities(clf, text, "US_BANK_NUMBER")
    # nine digits without the check digit are no routing number: with the account word, an account
    wrong = routing[:8] + str((int(routing[8]) + 1) % 10)
    assert not aba_routing_number(wrong)
    assert wrong in _entities(clf, "account = BankAccount(" + label.format(wrong) + ")\n", "US_BANK_NUMBER")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(eight=st.text("0123456789", min_size=8, max_size=8).filter(lambda d: len(set(d)) > 2))
def test_a_routing_shaped_number_labelled_as_an_account_stays_one(clf: Classifier, eight: str) -> None:
    routing = _with_check_digit(eight)
    assume(len(set(routing)) > 2)
    assert routing in _entities(clf, f"bank account number {routing} for the refund", "US_BANK_NUMBER")
