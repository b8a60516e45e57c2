"""Numbers of arithmetic and words of code are no identifiers (issue 12, fourteenth group).

sympy's polynomials and tests multiply, divide and sum long integers (``2447509765625*q**2``,
``120352542776360960*x + 269116466014453760``): one in ten passes Luhn's check, and ten files were
Tier 3 as holding a card. presidio's codice fiscale ignores case and has no boundary, so sixteen
letters inside ``InconsistentAssumptions`` were one beside a "cf." comment. Each class is refused in
general here, and the same values in the places real ones stand in stay found (two adversarial
reviews' inputs among them: X12 records, emphasis, expiry dates, codes glued by PDF extraction)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig
from tiers.recognizers._digits import in_arithmetic
from tiers.recognizers.financial import is_test_card

from .test_recognizers import found
from .test_variant_properties import luhn_complete

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def clf() -> Classifier:
    return Classifier(TiersConfig())


@st.composite
def bare_cards(draw: st.DrawFn) -> str:
    """A card's digits, ungrouped: a Visa, Mastercard or Amex prefix and a Luhn check digit."""
    prefix, length = draw(st.sampled_from([("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("37", 15), ("4", 13)]))
    body = draw(st.text("0123456789", min_size=length - len(prefix) - 1, max_size=length - len(prefix) - 1))
    digits = luhn_complete(prefix + body)
    assume(not is_test_card(digits) and len(set(digits)) > 3)
    return digits


# where a card stands in a prompt: prose, fields, data, markup, a request line
_CARRIERS = [
    "card {n}",
    "Card number: {n}, exp 12/29",
    '{{"card": "{n}", "cvc": "123"}}',
    "card_number = {n}",
    "name,card\nAnna Weber,{n}\n",
    "Card: **{n}** is mine",
    "- Visa: *{n}*",
    "GET /v1/cards/{n}/refund HTTP/1.1",
    "(Visa {n})",
    "Visa - {n}",
    "Visa: {n} * expires soon",
    "1 - {n}",
    "pay with {n}.",
    "charge({n}, 2027)",
    # found in a review: lists, expiry dates and CVVs, a dash or a minus before the number
    "Jane Doe (Visa) - {n}",
    "Plan B - {n}",
    "Option B + {n}",
    "Visa {n} / 12/27 / 123",
    "card {n} * 12/27 * 123",
    "exp 12/27 / {n}",
    "split {n} / 2",
    "VISA -{n}",
    "card: -{n}",
    "name,card\nBob,-{n}\n",
    "cards:\n  -{n}\n",
    "{n}*note",
    "e = {n} * q",
    # found in a second review: star-separated records, emphasis next to a bracket, a quantity,
    # a spreadsheet's formula, a dash glued to a label before more fields
    "REF*CR*{n}*1227~",
    "N1*P*{n}~",
    "DTMF: *{n}*1227*123#",
    "Card:**{n}**(exp 12/27, CVV 123)",
    "**Card (Visa)**{n}",
    "Qty 2*{n}",
    "=SUM(A1:A3)*{n}",
    "name,card,exp\nBob,-{n},1227\n",
    "Card No.-{n},1227,123",
    # and a third's: a record's one-letter code, a note in brackets after a star, two cards
    "REF*CR*{n}*Y\nDTM*036*20271231\n",
    "card {n}*A\n",
    "Card # {n}*M - approved",
    "Card: {n}*(exp 12/27)",
    "Card: {n}**(Visa)**",
    "Cards: ({n})/(5101092815901396)",
    "[-{n}, -5101092815901396]",
    "cc: {n}**2 installments",
]
# where a long integer is a term of arithmetic (sympy's polynomials and tests)
_ARITHMETIC = [
    "    g = 120352542776360960*x + {n}\n",
    "    f = {n}*q**2*r*s**6 + 3*p\n",
    "    h = x**{n}\n",
    "    e = t**12 - {n}\n",
    "        S({n})/(16*10**11)\n",
    "    r = 75/({n}*sqrt(2))\n",
    "    r = ({n})**(1/3)\n",
    "        -{n}, -1562475, 9536712644531250,\n",
]


def _cards(clf: Classifier, text: str) -> list[str]:
    return [v for e, v in found(clf, text) if e == "CREDIT_CARD"]


@_SETTINGS
@given(n=bare_cards(), carrier=st.sampled_from(_CARRIERS))
def test_a_bare_card_stays_a_card_wherever_a_prompt_writes_one(clf: Classifier, n: str, carrier: str) -> None:
    # covered whole (a carrier may hold a second card; "4556… / 2" may read as one longer group)
    assert any(n in v for v in _cards(clf, carrier.format(n=n)))


@_SETTINGS
@given(n=bare_cards(), form=st.sampled_from(_ARITHMETIC))
def test_a_term_of_arithmetic_is_no_card(clf: Classifier, n: str, form: str) -> None:
    text = form.format(n=n)
    assert _cards(clf, text) == []
    # a card on the next line of the same code is still one
    assert _cards(clf, text + f"card = {n}\n") == [n]


@given(
    n=st.text("123456789", min_size=8, max_size=19),
    left=st.sampled_from(["", "x**", "t**12 - ", "3*x + "]),
    right=st.sampled_from(["", "*x", "**2", "*q**2", "*sqrt(2)", ")/(16*10**11)", ")**(1/3)"]),
)
def test_in_arithmetic_exactly_where_an_operator_joins_an_operand(n: str, left: str, right: str) -> None:
    text = "    v = " + left + n + right + "\n"
    start = len("    v = " + left)
    assert in_arithmetic(text, start, start + len(n)) is bool(left or right)


@given(
    n=st.text("123456789", min_size=8, max_size=19),
    before=st.sampled_from(["[", "(", ", ", "\n        ", "card:", "Visa", "No."]),
    after=st.sampled_from([", -1562475, 3]", ",1227\n", ", 12]", "\n"]),
)
def test_a_minus_makes_a_negative_term_only_in_a_literal_of_negative_integers(n: str, before: str, after: str) -> None:
    text = before + "-" + n + after
    start = len(before) + 1
    literal = before in ("[", "(", ", ", "\n        ") and after.startswith(", -")
    assert in_arithmetic(text, start, start + len(n)) is literal


@pytest.mark.parametrize(
    "text",
    [
        "**{n}** is my card",  # emphasis: nothing to multiply on the outer side
        "Card:**{n}**, ok",
        "/cards/{n}/refund",  # a URL's path
        "/v1/{n}",
        "Visa - {n}",  # a dash after a word, not a minus
        "ID-{n}",
        "1 - {n}",
        "(Visa) - {n}",
        "Plan B - {n}",
        "{n} * expires",  # a footnote's star before a word
        "{n}*note",
        "{n} / 12/27 / 123",  # an expiry and a CVV
        "exp 12/27 / {n}",
        "card: -{n}",
        "{n}-{n}",
        "REF*CR*{n}*1227~",
        "**{n}**(exp 12/27)",
        "2*{n} @ $19.99",
        "=A1*{n}",
    ],
)
def test_markup_paths_and_dashes_are_no_arithmetic(text: str) -> None:
    n = "4556737586899855"
    s = text.format(n=n)
    start = s.index(n)
    assert not in_arithmetic(s, start, start + len(n))


# -- codice fiscale -------------------------------------------------------------------------------

_CODES = ["RSSMRA85T10A562S", "BNCGPP70A01H501D", "VRDLGU80E42F205R"]


@pytest.mark.parametrize("code", _CODES)
def test_a_codice_fiscale_is_one_as_a_token_of_its_own(clf: Classifier, code: str) -> None:
    # the codes above pass presidio's check letter; each is found in its usual carriers
    for text in (
        f"codice fiscale: {code}",
        f"Codice fiscale {code}.",
        f"cf: {code.lower()}",
        f'"cf": "{code}"',
        f"codice fiscale: vedi file CF_{code}.pdf",  # found in a review: codes in file names
        f"cf nel nome file: Mario_Rossi_{code}.pdf",
    ):
        assert ("IT_FISCAL_CODE", text[text.lower().index(code.lower()) :][: len(code)]) in found(clf, text), text


@given(
    code=st.sampled_from(_CODES),
    left=st.sampled_from(["Codice Fiscale", "cf: ", "CF_", "x", ""]),
    right=st.sampled_from(["Nato a Roma", "2024", ".pdf", ""]),
)
def test_a_codice_fiscale_glued_to_its_label_or_the_next_word_is_found(
    clf: Classifier, code: str, left: str, right: str
) -> None:
    """Text taken out of a PDF glues a code to its label or the next word."""
    text = f"Dati (codice fiscale)\n{left}{code}{right}\n"
    assert ("IT_FISCAL_CODE", code) in found(clf, text), text


def test_sixteen_letters_of_a_word_are_no_codice_fiscale(clf: Classifier) -> None:
    # the sympy test's line: a letter-only run that fits the shape and its check letter
    text = "    # cf. issues 5795 and 5545\n    raises(InconsistentAssumptions, lambda: Symbol('x'))\n"
    assert "IT_FISCAL_CODE" not in {e for e, _ in found(clf, text)}
    assert "IT_FISCAL_CODE" not in {e for e, _ in found(clf, "cf: NCONSISTENTASSUM")}
