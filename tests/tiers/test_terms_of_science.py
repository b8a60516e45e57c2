"""Terms that science and code name after people or spell as firms, read in real packages'
comments and docstrings (``bench/outside.py --part repos``): a hyphenated surname pair before
what it names, the tail of a list wrapped over lines, an acronym legal form after a word of
code, a program's name in a compound after "by", a confidentiality acronym as the last part of a
hyphenated name, a mailbox at a documentation domain without a person's name, and a language
and its version greeted. Each property sets the class beside the names, firms, markers and
mailboxes of the same shape that stay."""

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
_PAIRS = ["Parsons-Moran", "Baker-Jones", "Muller-Schmidt", "Hillis-Steele", "Blackman-Harris", "Porter-Duff",
          "Fischer-Wagner"]  # fmt: skip
_OBJECTS = ["window", "modes", "prefix sum", "Modes, see below"]


@_SETTINGS
@given(pair=st.sampled_from(_PAIRS), obj=st.sampled_from(_OBJECTS), lead=st.sampled_from(["the ", "# ", "for ", ""]))
def test_a_hyphenated_pair_before_what_it_names_is_no_firm(clf: Classifier, pair: str, obj: str, lead: str) -> None:
    text = f"{lead}{pair} {obj} of the inputs."
    assert not _values(clf, text, "ORGANIZATION"), text


@_SETTINGS
@given(pair=st.sampled_from(_PAIRS), obj=st.sampled_from(_OBJECTS), later=st.sampled_from(["scan", "solution", "step"]))
def test_the_same_pair_elsewhere_is_the_same_eponym(clf: Classifier, pair: str, obj: str, later: str) -> None:
    """Once written before what it names, the pair is that eponym without it too."""
    text = f"Inclusive {pair} {obj} across a warp.\n\nImplementation: a warp-level {pair} {later}, then more."
    assert not _values(clf, text, "ORGANIZATION"), text


@_SETTINGS
@given(
    pair=st.sampled_from(["Marks & Spencer", "Slaughter & May", "Johnson & Johnson", "Baker & McKenzie"]),
    obj=st.sampled_from(_OBJECTS + ["display"]),
)
def test_a_firm_with_an_ampersand_stays_before_the_same_words(clf: Classifier, pair: str, obj: str) -> None:
    text = f"Photos of the {pair} {obj} are attached."
    assert _values(clf, text, "ORGANIZATION") == {pair}, text


@_SETTINGS
@given(
    pair=st.sampled_from(["Garcia-Lopez", "Parsons-Moran", "Fischer-Wagner"]),
    obj=st.sampled_from(["scan results attached", "angles of knee flexion", "variant was found"]),
)
def test_a_double_surname_stays_before_a_patient_s_words(clf: Classifier, pair: str, obj: str) -> None:
    """A patient's double surname goes before a scan, angles or a variant: those are no eponym's."""
    text = f"Patient {pair} {obj}"
    assert _values(clf, text, "ORGANIZATION") == {pair}, text


@_SETTINGS
@given(pair=st.sampled_from(_PAIRS), rest=st.sampled_from(["signed the contract.", "sent the invoice today.", "."]))
def test_joined_surnames_stay_a_firm_elsewhere(clf: Classifier, pair: str, rest: str) -> None:
    text = f"We met {pair} last week; {pair} {rest}"
    assert _values(clf, text, "ORGANIZATION") == {pair}, text


_LISTS = ["Bessel, Whittaker and Lambert", "Smith, Jones and Brown", "Parsons, Moran and Baker"]


@_SETTINGS
@given(
    before=st.sampled_from(["special functions like Airy", "such as Top, Bottom", "including Airy"]),
    wrap=st.sampled_from([",\n    ", ",\n# ", ", \n"]),
    names=st.sampled_from(_LISTS),
)
def test_the_tail_of_a_wrapped_list_is_no_firm(clf: Classifier, before: str, wrap: str, names: str) -> None:
    """A list wrapped after its first item ("like Airy,") goes on: the names after the break are
    its last items, no firm's name."""
    text = f"{before}{wrap}{names}."
    assert not _values(clf, text, "ORGANIZATION"), text


@_SETTINGS
@given(
    before=st.sampled_from(
        [
            "Counsel:\n",
            "Sincerely,\n",
            "Best,\n",
            "Hi Team,\n",
            "Regards,\n  ",
            "Law firm: ",
            "Counsel for the Buyer,\n",
        ]
    ),
    names=st.sampled_from(_LISTS[1:]),
)
def test_a_firm_after_a_sign_off_or_on_its_own_line_stays(clf: Classifier, before: str, names: str) -> None:
    text = f"{before}{names}"
    assert _values(clf, text, "ORGANIZATION") == {names}, text


_ACRONYM_FORMS = ["AB", "NV", "SA", "SAS", "SE", "AG", "BV"]
_FIRMS = ["Volvo", "Philips", "Orange", "Unilever", "Nordea Bank", "Atlas Copco", "Tele2", "Scout24",
          "Integrated Systems", "Manning", "Linked Data", "Kinnevik"]  # fmt: skip


@_SETTINGS
@given(letter=st.sampled_from("TXAQ"), form=st.sampled_from(_ACRONYM_FORMS))
def test_one_letter_before_an_acronym_form_is_no_firm(clf: Classifier, letter: str, form: str) -> None:
    """A matrix's letter before a product written as a legal form: "solve Ri^T SAS Ri Z"."""
    text = f"solve symeig problem Ri^{letter} {form} Ri Z = Theta Z"
    assert not _values(clf, text, "ORGANIZATION"), text


@_SETTINGS
@given(name=st.sampled_from(_FIRMS), form=st.sampled_from(_ACRONYM_FORMS + ["LLC", "GmbH", "Ltd"]))
def test_a_firm_before_an_acronym_form_stays(clf: Classifier, name: str, form: str) -> None:
    text = f"The invoice from {name} {form} is due on Friday."
    assert _values(clf, text, "ORGANIZATION") == {f"{name} {form}"}, text


@_SETTINGS
@given(
    word=st.sampled_from(["CUPTI", "CUDA", "NCCL", "GPU"]),
    compound=st.sampled_from(["-based profilers", "-backed buffers", "-specific handles"]),
    verb=st.sampled_from(["reported by", "released by", "used by"]),
)
def test_a_program_in_a_compound_after_by_is_no_person(clf: Classifier, word: str, compound: str, verb: str) -> None:
    text = f"Values match those {verb} {word}{compound}."
    assert not _values(clf, text, "PERSON"), text


@_SETTINGS
@given(
    name=st.sampled_from(["TEMBO", "OKAFOR", "KOWALSKI", "MULLER"]),
    after=st.sampled_from(["", " QA", " QA lead", ", QA", " on 2026-03-01", "-ext on Monday", "-adm", "-martin"]),
)
def test_a_surname_in_capitals_after_by_stays(clf: Classifier, name: str, after: str) -> None:
    text = f"Batch record approved by {name}{after}"
    assert any(v.startswith(name) for v in _values(clf, text, "PERSON")), text


_MARKERS = ["NDA", "ITAR", "ECCN", "GxP", "EAR99"]
_KINDS = ("CONFIDENTIALITY_MARKER", "EXPORT_CONTROL_MARKER", "GMP_MARKER")


def _markers(clf: Classifier, text: str) -> set[str]:
    return set().union(*(_values(clf, text, kind) for kind in _KINDS))


@_SETTINGS
@given(
    head=st.sampled_from(["Kleister", "Acme", "Mutual", "v2"]),
    marker=st.sampled_from(_MARKERS),
    path=st.sampled_from(["https://github.com/example/{}", "https://huggingface.co/datasets/x/{}/tree/main"]),
)
def test_an_acronym_in_a_linked_public_name_is_no_marker(clf: Classifier, head: str, marker: str, path: str) -> None:
    """A Markdown link whose address spells its text: a public repository's or data set's name."""
    name = f"{head}-{marker}"
    text = f"For information extraction, e.g. [{name}]({path.format(name.lower())})."
    assert not _markers(clf, text), text


@_SETTINGS
@given(marker=st.sampled_from(_MARKERS), rest=st.sampled_from([" parts only", " items ship from stock"]))
def test_a_negated_acronym_is_no_marker(clf: Classifier, marker: str, rest: str) -> None:
    for head in ("non", "Non", "NON"):
        text = f"Order {head}-{marker}{rest}."
        assert not _markers(clf, text), text


@_SETTINGS
@given(
    marker=st.sampled_from(_MARKERS),
    place=st.sampled_from(
        ["[{}] pricing", "{} - do not share", "Under {}: rev B", "{}-controlled drawing", "({})",
         "Sensitivity: Confidential-{}", "Tag: PROJ-{}", "Gemäß Lieferanten-{} vertraulich", "[Acme-{}] Q3 pricing",
         "Project Falcon – Mutual-{} – Q3 pricing", "Drawing 4711-{} attached", "[Acme-{}](https://intranet/acme)"]
    ),
)  # fmt: skip
def test_an_acronym_stays_a_marker_elsewhere(clf: Classifier, marker: str, place: str) -> None:
    text = place.format(marker)
    assert any(marker in v for v in _markers(clf, text)), text


# at the documentation domains of RFC 2606 no mail arrives: only a person's name identifies
_DOC_DOMAINS = ["example.com", "example.org", "example.net", "sub.example.com"]


@_SETTINGS
@given(
    local=st.sampled_from(["jane", "joe", "illustrious", "hello123", "foo.na", "testing", "maria", "user123", "42"]),
    domain=st.sampled_from(_DOC_DOMAINS),
)
def test_a_mailbox_without_a_full_name_at_a_documentation_domain_is_none(
    clf: Classifier, local: str, domain: str
) -> None:
    text = f"Send it to {local}@{domain} for review."
    assert not _values(clf, text, "EMAIL_ADDRESS"), text


@_SETTINGS
@given(
    local=st.sampled_from(
        [
            "maria.gonzalez",
            "m.gonzalez",
            "jane.smith+billing",
            "anna_kowalski",
            "jgonzalez",
            "mariagonzalez",
            "kwilliams",
            "ahmet.yilmaz",
            "jsmith2",
            "maria.gonzalez1",
            "smithj",
            "okafor",
            "o'brien",
            "josé.garcía",
            "oluwaseun.okafor",
            "dr.gonzalez",
            "ops",
            "иван.петров",
        ]
    ),
    domain=st.sampled_from(_DOC_DOMAINS),
)
def test_a_full_name_at_a_documentation_domain_stays_a_mailbox(clf: Classifier, local: str, domain: str) -> None:
    text = f"Send it to {local}@{domain} for review."
    assert _values(clf, text, "EMAIL_ADDRESS") == {f"{local}@{domain}"}, text


@_SETTINGS
@given(local=st.sampled_from(["jane", "joe", "maria", "userid"]), domain=st.sampled_from(["gmail.com", "acme.de"]))
def test_any_mailbox_at_a_real_domain_stays(clf: Classifier, local: str, domain: str) -> None:
    text = f"Send it to {local}@{domain} for review."
    assert _values(clf, text, "EMAIL_ADDRESS") == {f"{local}@{domain}"}, text


@_SETTINGS
@given(
    greeting=st.sampled_from(["Hello, ", "Hi ", "Welcome, ", "Hallo "]),
    product=st.sampled_from(["Fortran", "Delphi", "Kotlin", "Elixir", "Matlab"]),
    version=st.sampled_from(["77", "3", "3.12", "8"]),
)
def test_a_language_and_its_version_greeted_is_no_person(
    clf: Classifier, greeting: str, product: str, version: str
) -> None:
    text = f"      PRINT *, '{greeting}{product} {version}!'"
    assert not _values(clf, text, "PERSON"), text


@_SETTINGS
@given(
    greeting=st.sampled_from(["Hello, ", "Hi ", "Dear ", "Hallo ", "Bonjour "]),
    name=st.sampled_from(["Maria Gonzalez", "Dr. Okonkwo", "Anna", "Priya", "Schneider", "Kowalski", "Pascal"]),
    rest=st.sampled_from(
        [", 3 questions", " - 2 items", ",\n1. the invoice", " 2 quick questions", " 3 pm works", " 2."]
    ),
)
def test_a_greeted_person_stays_before_a_number(clf: Classifier, greeting: str, name: str, rest: str) -> None:
    text = f"{greeting}{name}{rest}"
    assert any(name.split()[-1] in v for v in _values(clf, text, "PERSON")), text


@_SETTINGS
@given(
    given_name=st.sampled_from(["Janus", "Maria", "Anna"]),
    acronym=st.sampled_from(["VQ-VAE", "HTTP", "GEMM-RS", "NVML"]),
)
def test_a_given_name_before_an_acronym_is_no_person(clf: Classifier, given_name: str, acronym: str) -> None:
    """A word in capitals with a part without a vowel is an acronym, no surname in capitals."""
    text = f"the {given_name} {acronym} encoder is loaded first"
    assert not _values(clf, text, "PERSON"), text


@_SETTINGS
@given(
    given_name=st.sampled_from(["Maria", "Anna", "Hans-Peter"]),
    surname=st.sampled_from(["GONZALEZ", "NGUYEN", "MULLER-LUDENSCHEIDT", "SYKES"]),
)
def test_a_surname_in_capitals_stays(clf: Classifier, given_name: str, surname: str) -> None:
    text = f"Approved by: {given_name} {surname}"
    assert f"{given_name} {surname}" in _values(clf, text, "PERSON"), text


_WORD_GIVEN = ["Jean", "Claire", "Christian", "Victor", "Guy", "Mark"]


@_SETTINGS
@given(
    given_name=st.sampled_from(_WORD_GIVEN),
    surname=st.sampled_from(["MOREAU", "LEFEBVRE", "DUBOIS", "LAMBERT", "MARTIN", "DUPONT-MORETTI", "GARNIER"]),
    carrier=st.sampled_from(["Responsable : {}", "Contact {} today", "{} a signé le rapport", "Rédigé par {}"]),
)
def test_a_given_name_that_is_a_word_before_a_census_surname_in_capitals(
    clf: Classifier, given_name: str, surname: str, carrier: str
) -> None:
    """French documents write "Prénom NOM": a given name that is a word too ("Jean", "Mark")
    vouches for a census surname in capitals."""
    name = f"{given_name} {surname}"
    text = carrier.format(name)
    assert name in _values(clf, text, "PERSON"), text


@_SETTINGS
@given(
    given_name=st.sampled_from(_WORD_GIVEN + ["Max", "Ray", "Frank"]),
    word=st.sampled_from(["TODO", "SIZE", "CONFIG", "DOWN", "CASE", "READ", "FREE", "UPDATE", "DONE", "LIST"]),
)
def test_a_given_name_that_is_a_word_before_a_word_in_capitals_is_no_person(
    clf: Classifier, given_name: str, word: str
) -> None:
    text = f"- {given_name} {word} items before the release"
    assert not _values(clf, text, "PERSON"), text


@_SETTINGS
@given(
    given_name=st.sampled_from(["Zacharie", "Otfried", "Anastasie", "Korbinian", "Siegward"]),
    surname=st.sampled_from(["FINKE", "SEIFERT", "GIRARD", "LEROY", "DUMONT", "KNAPPE"]),
    carrier=st.sampled_from(["Responsable qualité : {}\nDate : 12/03/2026", "Le rapport a été transmis par {} hier."]),
)
def test_a_rarer_given_name_before_a_census_surname_in_capitals(
    clf: Classifier, given_name: str, surname: str, carrier: str
) -> None:
    """A given name of the gazetteer beyond the commonest vouches for a census surname in
    capitals that is no ordinary word ("Prénom NOM")."""
    name = f"{given_name} {surname}"
    text = carrier.format(name)
    assert name in _values(clf, text, "PERSON"), text
