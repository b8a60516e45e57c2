"""Numbers that code and documentation type, not issue (issue 12, eleventh group): an SSN of one
repeated digit per group (pyparsing's "111-22-3333"), a number compared with a name in code
(cbor2's ``sys.hexversion < 51314855`` beside ``if TYPE_CHECKING:``). Both refused whole files as
Tier 3; real numbers of the same shapes in their own places stay found."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig
from tiers._context import power_of_two

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
