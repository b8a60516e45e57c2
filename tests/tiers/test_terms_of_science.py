"""Terms that science and code name after people or spell as firms, read in real packages'
comments and docstrings (``bench/outside.py --part repos``): a hyphenated surname pair before
what it names, the tail of a list wrapped over lines, an acronym legal form after a word of
code, a program's name in a compound after "by", and a confidentiality acronym as the last part
of a hyphenated name. Each property sets the class beside the names, firms and markers of the
same shape that stay."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, Content, Segment

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _values(clf: Classifier, text: str, entity: str) -> set[str]:
    decision = clf.classify(Content((Segment(("messages", 0, "content"), text),)))
    assert not decision.failed_closed, decision.reasons
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == entity}


# pairs of census surnames, each found joined as a firm in running text
_PAIRS = ["Parsons-Moran", "Baker-Jones", "Muller-Schmidt", "Hillis-Steele", "Blackman-Harris", "Knuth-Cohen",
          "Porter-Duff", "Fischer-Wagner"]  # fmt: skip
_OBJECTS = ["angles", "window", "modes", "prefix sum", "scan", "variant", "Angles, see below"]


@_SETTINGS
@given(pair=st.sampled_from(_PAIRS), obj=st.sampled_from(_OBJECTS), lead=st.sampled_from(["the ", "# ", "for ", ""]))
def test_joined_surnames_before_what_they_name_are_no_firm(clf: Classifier, pair: str, obj: str, lead: str) -> None:
    text = f"{lead}{pair} {obj} of the inputs."
    assert not _values(clf, text, "ORGANIZATION"), text


@_SETTINGS
@given(pair=st.sampled_from(_PAIRS), rest=st.sampled_from(["signed the contract.", "sent the invoice today.", "."]))
def test_joined_surnames_stay_a_firm_elsewhere(clf: Classifier, pair: str, rest: str) -> None:
    text = f"We met {pair} last week; {pair} {rest}"
    assert _values(clf, text, "ORGANIZATION") == {pair}, text


@_SETTINGS
@given(
    first=st.sampled_from(["Airy", "Top", "Acme"]),
    wrap=st.sampled_from([",\n    ", ",\n# ", ", \n"]),
    names=st.sampled_from(["Bessel, Whittaker and Lambert", "Smith, Jones and Brown", "Parsons, Moran and Baker"]),
)
def test_the_tail_of_a_wrapped_list_is_no_firm(clf: Classifier, first: str, wrap: str, names: str) -> None:
    """A list wrapped after a capitalised word and a comma goes on: the names after the break
    are its last items, no firm's name."""
    text = f"special functions like {first}{wrap}{names}."
    assert not _values(clf, text, "ORGANIZATION"), text


@_SETTINGS
@given(
    before=st.sampled_from(["Counsel:\n", "Our counsel is\n", "Law firm: "]),
    names=st.sampled_from(["Smith, Jones and Brown", "Parsons, Moran & Baker"]),
)
def test_a_firm_of_joined_surnames_on_its_own_line_stays(clf: Classifier, before: str, names: str) -> None:
    text = f"{before}{names}."
    assert _values(clf, text, "ORGANIZATION") == {names}, text


_ACRONYM_FORMS = ["AB", "NV", "SA", "SAS", "SE", "AG", "BV"]
# one letter, a word with a number glued on, an English verb's participle
_CODE_WORDS = ["T", "Float8", "Int4", "Skipping", "Specialized", "Pruned", "Loading"]
_FIRMS = ["Volvo", "Philips", "Orange", "Unilever", "Kering", "Nordea Bank", "Atlas Copco", "Heineken"]


@_SETTINGS
@given(word=st.sampled_from(_CODE_WORDS), form=st.sampled_from(_ACRONYM_FORMS), rest=st.sampled_from(_OBJECTS))
def test_a_word_of_code_before_an_acronym_form_is_no_firm(clf: Classifier, word: str, form: str, rest: str) -> None:
    text = f"# {word} {form} {rest} require sf_vec_size=32"
    assert not _values(clf, text, "ORGANIZATION"), text


@_SETTINGS
@given(name=st.sampled_from(_FIRMS), form=st.sampled_from(_ACRONYM_FORMS + ["LLC", "GmbH", "Ltd"]))
def test_a_firm_before_an_acronym_form_stays(clf: Classifier, name: str, form: str) -> None:
    text = f"The invoice from {name} {form} is due on Friday."
    assert _values(clf, text, "ORGANIZATION") == {f"{name} {form}"}, text


@_SETTINGS
@given(
    word=st.sampled_from(["CUPTI", "CUDA", "NCCL", "GPU"]),
    compound=st.sampled_from(["-based profilers", "-backed buffers", "-style handles"]),
    verb=st.sampled_from(["reported by", "released by", "used by"]),
)
def test_a_program_in_a_compound_after_by_is_no_person(clf: Classifier, word: str, compound: str, verb: str) -> None:
    text = f"Values match those {verb} {word}{compound}."
    assert not _values(clf, text, "PERSON"), text


@_SETTINGS
@given(
    name=st.sampled_from(["TEMBO", "OKAFOR", "KOWALSKI", "MULLER"]),
    after=st.sampled_from(["", " QA", " QA lead", ", QA", " on 2026-03-01"]),
)
def test_a_surname_in_capitals_after_by_stays(clf: Classifier, name: str, after: str) -> None:
    text = f"Batch record approved by {name}{after}"
    assert name in _values(clf, text, "PERSON"), text


_MARKERS = ["NDA", "ITAR", "ECCN", "GxP", "EAR99"]


@_SETTINGS
@given(
    head=st.sampled_from(["Kleister", "Acme", "non", "Mutual", "v2"]),
    marker=st.sampled_from(_MARKERS),
    carrier=st.sampled_from(["[{}](https://github.com/example/x).", "see {}.pdf", "the {} data set", "{}"]),
)
def test_an_acronym_ending_a_hyphenated_name_is_no_marker(
    clf: Classifier, head: str, marker: str, carrier: str
) -> None:
    text = "For information extraction, e.g. " + carrier.format(f"{head}-{marker}")
    assert not (_values(clf, text, "CONFIDENTIALITY_MARKER") | _values(clf, text, "EXPORT_CONTROL_MARKER")), text
    assert not _values(clf, text, "GMP_MARKER"), text


@_SETTINGS
@given(
    marker=st.sampled_from(_MARKERS),
    place=st.sampled_from(["[{}] pricing", "{} - do not share", "Under {}: rev B", "{}-controlled drawing", "({})"]),
)
def test_an_acronym_stays_a_marker_elsewhere(clf: Classifier, marker: str, place: str) -> None:
    text = place.format(marker)
    found = (
        _values(clf, text, "CONFIDENTIALITY_MARKER")
        | _values(clf, text, "EXPORT_CONTROL_MARKER")
        | _values(clf, text, "GMP_MARKER")
    )
    assert any(marker in v for v in found), text
