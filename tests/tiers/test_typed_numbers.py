"""Numbers that code and documentation type, not issue (issue 12, eleventh to thirteenth groups):
an SSN of one repeated digit per group (pyparsing's "111-22-3333"), a number compared with a name
in code (cbor2's ``sys.hexversion < 51314855`` beside ``if TYPE_CHECKING:``), a hash's published
constants (SHA-512's state in a minified bundle beside ``this._dl``). Each refused whole files as
Tier 3; real numbers of the same shapes in their own places stay found."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig
from tiers._context import power_of_two
from tiers.recognizers._hash_constants import _words, hash_constant

from .test_recognizers import found

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def clf() -> Classifier:
    return Classifier(TiersConfig())


def _ssn(area: int, group: int, serial: int, sep: str) -> str:
    return f"{area:03d}{sep}{group:02d}{sep}{serial:04d}"


@_SETTINGS
@given(
    a=st.integers(1, 8),
    g=st.integers(1, 9),
    s=st.integers(1, 9),
    sep=st.sampled_from(["-", " ", ""]),
    label=st.sampled_from(["SSN: ", "ssn : ", "Social Security Number "]),
)
def test_an_ssn_of_repeated_digits_per_group_is_typed(
    clf: Classifier, a: int, g: int, s: int, sep: str, label: str
) -> None:
    assume(len({a, g, s}) > 1)  # one digit throughout was presidio's rule already
    value = f"{str(a) * 3}{sep}{str(g) * 2}{sep}{str(s) * 4}"
    assert ("US_SSN", value) not in found(clf, f"{label}{value}\n")


@_SETTINGS
@given(
    area=st.integers(1, 665),
    group=st.integers(1, 99),
    serial=st.integers(1, 9999),
    sep=st.sampled_from(["-", " "]),
)
def test_an_issued_shape_stays_an_ssn(clf: Classifier, area: int, group: int, serial: int, sep: str) -> None:
    value = _ssn(area, group, serial, sep)
    digits = value.replace(sep, "")
    assume(not all(len(set(p)) == 1 for p in (digits[:3], digits[3:5], digits[5:])))
    assume(digits not in ("123456789", "078051120"))
    assert ("US_SSN", value) in found(clf, f"Employee SSN: {value}\n")


@_SETTINGS
@given(
    number=st.integers(10_000_000, 99_999_999_999).map(str),
    name=st.sampled_from(["sys.hexversion", "build", "self.version_id", "LIMIT"]),
    op=st.sampled_from(["<", ">=", "==", "!="]),
    end=st.sampled_from([":\n    pass\n", ")\n", " and ok:\n", ";\n"]),
)
def test_a_number_compared_with_a_name_in_code_is_that_name_s(
    clf: Classifier, number: str, name: str, op: str, end: str
) -> None:
    """A context word elsewhere (``TYPE_CHECKING``, ``checking``) says nothing of it; an account's
    name compared with it, or prose around it, still does."""
    assume(len(set(number)) > 1 and number not in "0123456789012345678")
    assume(not power_of_two(number))  # a size or a mask wherever it stands (tiers/_context.py)
    assume(not hash_constant(number))  # a hash's constant wherever it stands
    code = f"from typing import TYPE_CHECKING\n\nif {name} {op} {number}{end}if TYPE_CHECKING:\n    import x\n"
    assert ("US_BANK_NUMBER", number) not in found(clf, code)
    for kept in (
        f"if TYPE_CHECKING:\n    pass\nif account_no {op} {number}{end}",
        f"Please debit checking account {number} today.",
    ):
        assert ("US_BANK_NUMBER", number) in found(clf, kept), kept


@pytest.mark.parametrize(
    "text",
    [
        "<strong>Account number:</strong> 40211987\n",
        "<td>Checking account</td>\n<td>40211987\n",
        "<dt>Account</dt>\n<dd>40211987\n",
        "Account #: <b>40211987\n",
        "if acc_no == 40211987:  # bank account\n",
    ],
)
def test_markup_and_account_names_are_no_comparison(clf: Classifier, text: str) -> None:
    """A tag's ">" compares nothing, and a name that says account keeps its number one (a review
    of the comparison rule found these lost)."""
    assert ("US_BANK_NUMBER", "40211987") in found(clf, text)


def test_hash_constants_are_computed_as_published() -> None:
    """Spot values from FIPS 180-4 and RFC 1321 (a wrong root or shift would miss them)."""
    for word in (0x6A09E667, 0x428A2F98, 0xC67178F2, 0xC1059ED8, 0xCBBB9D5D, 0xF3BCC908, 0x4A475817,
                 0xD76AA478, 0xEB86D391, 0x67452301, 0xCA62C1D6):  # fmt: skip
        assert hash_constant(str(word)), hex(word)
        if word >= 1 << 31:
            assert hash_constant(str(word - (1 << 32))), hex(word)  # as ``| 0`` writes it
    # 9 SHA-1, 2 * (16 + 80) SHA-512/384 halves, 64 MD5; SHA-256's 8 + 64 are the high halves
    # of SHA-512's first ones (the same roots' first 32 bits)
    assert len([w for w in _words() if w >= 0]) == 9 + 2 * (16 + 80) + 64


@_SETTINGS
@given(number=st.integers(100_000_000, 4_294_967_295))
def test_a_minified_hash_s_constants_are_no_licences_but_other_numbers_are(clf: Classifier, number: int) -> None:
    """SHA-512's state in a bundle (``this._al=4089235720, …, this._dl=…``: "dl" is a licence's
    context word) names no licence; a number that is no constant, labelled as one, does."""
    constants = sorted(w for w in _words() if w > 0)
    line = ",".join(f"this._{c}l={w}" for c, w in zip("abcdefgh", constants[number % 50 :]))
    assert not [v for e, v in found(clf, line) if e == "US_DRIVER_LICENSE"]
    if not hash_constant(str(number)) and not power_of_two(str(number)):  # a power of two is a size
        assert ("US_DRIVER_LICENSE", str(number)) in found(clf, f"Driver license DL: {number}\n")
