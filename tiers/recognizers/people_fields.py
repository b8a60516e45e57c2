"""Person names where a document's layout says a person stands (``PERSON``), whatever the name.

:mod:`.people` needs a gazetteer given name before a surname, or a title or role word; a rare
or invented given name ("Klothilda", "Arnaude") or one that is a word too ("Georgia", "Max",
"Mary Dean") in running text is then missed. Forms and tables say it themselves:

* a form's name field, its label opening a line and the name filling the rest of it:
  "Name: Mary Dean", "Vorname und Name: Georgia Kallert", "Nom : Arnaude Lecoq";
* a cell under a table column headed "name" / "Name" / "nom" / "Mitarbeiter" …
  ("nom;société;né le\\nPhilippine Samson;…"), in CSV, TSV and semicolon tables;
* a greeting's lone given name at the start of a line: "Hi Max,", "Hallo Jan,", "Bonjour Maud,"
  (a gazetteer name, words-too ones included; "Hello World," and "Hi team," are no names).

Code has the same shapes (``name: str``, YAML ``name: Build``, ``Name: Value`` in docs), so a
label is capitalised, the value is two to four capitalised words up to the end of the line, no
code identifier, and not only ordinary words; its first word may be an ordinary word only when
it is a given name too ("Mary"), its last one only when it is a census surname too ("Dean").
Where neither list knows the name ("Nom : Leontyne Painchaud"), a field's two or three words
count when none is an ordinary word, a place's or in capitals and another field of personal data
stands within a few lines (a date of birth, an address, a phone number: a person's record, not
"Name: Nightly Build" in a pipeline's docs).
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from ._code import in_code_position
from ._given_names import given_names
from ._surnames import is_surname
from ._vocabulary import NOT_SURNAMES, is_common
from .firms import CompanyCellRecognizer, header_cell, header_cell_gate
from ._places import inside_place_name
from .people import _CAP, _PARTICLE, _UPPER, _NameRecognizer, placeholder_name, word_given_names

__all__ = ["GreetingPersonRecognizer", "NameFieldPersonRecognizer", "PersonCellRecognizer", "field_recognizers"]

_WORDS = re.compile(r"[A-Za-zß]+(?:['’-][A-Za-zß]+)*")
# text is normalised: "Prénom" arrives as "Prenom"; a label is capitalised (YAML and code keys
# are not: "name: build") and opens its line
_LABELS = (
    r"Name|Full [Nn]ame|Employee [Nn]ame|Customer [Nn]ame|Patient [Nn]ame|Contact [Nn]ame|Applicant|"
    r"Employee|Vorname(?: und Name)?|Nachname|Vor- und Nachname|Name des Mitarbeiters|Mitarbeiter(?:in)?|"
    r"Nom|Nom complet|Nom et [Pp]renom|Prenom et [Nn]om|Salarie|Employe|Demandeur|NAME|NOM"
)
_VALUE = f"{_CAP}(?:[ ]{{1,2}}{_PARTICLE}{{0,2}}(?:{_CAP}|{_UPPER})){{1,3}}"


# a census surname that is an ordinary word too ends a name only when it is a common one
# ("Mary Dean", Dean 236; not "Build Tools")
_WORD_SURNAME_RANK = 10_000


def _given_like(word: str, given: frozenset[str]) -> bool:
    """A gazetteer given name, a hyphenated one's first half, or a feminine or masculine form of
    one ("Arnaude" of Arnaud, "Klothilda" of Klothilde)."""
    w = word.lower().split("-")[0]
    return w in given or (len(w) > 3 and (w[:-1] in given or w[:-1] + "e" in given or w + "e" in given))


def _name_value(value: str, given: frozenset[str]) -> bool:
    """Two to four words that read as a name: a given name first or a census surname last,
    and not only ordinary words ("Build Status", "Default Value")."""
    words = _WORDS.findall(value)
    capitalised = [w for w in words if w[:1].isupper()]
    if not 2 <= len(capitalised) <= 4 or all(map(is_common, capitalised)):
        return False
    first, last = capitalised[0], capitalised[-1]
    first_given = _given_like(first, given)
    if is_common(first) and not first_given:
        return False
    if is_common(last) and not is_surname(last, _WORD_SURNAME_RANK):
        return False
    return first_given or is_surname(last)


def _unknown_name(value: str) -> bool:
    """Two or three capitalised words neither list knows, none an ordinary word, a place's, in
    capitals or shorter than three letters ("Leontyne Painchaud"; not "HTTP Client")."""
    capitalised = [w for w in _WORDS.findall(value) if w[:1].isupper()]
    return 2 <= len(capitalised) <= 3 and not any(
        is_common(w) or w.isupper() or w.lower() in NOT_SURNAMES or len(w) < 3 for w in capitalised
    )


# another field of a person's record near a name field: the form is about a person
_RECORD_FIELD = re.compile(
    r"(?im)^[ \t]*(?:date of birth|birth ?date|born|dob|d\.o\.b\.|home address|address|phone|e-?mail|"
    r"employee (?:id|number)|geburtsdatum|geboren(?: am)?|anschrift|wohnort|telefon|personalnummer|"
    r"date de naissance|nee? le|adresse|telephone|matricule)[ \t]*:"
)
_RECORD_WINDOW = 300


class NameFieldPersonRecognizer(_NameRecognizer):
    """A form's name field: "Name: Mary Dean", "Nom : Arnaude Lecoq"."""

    ENTITY = "PERSON"
    PATTERNS = [
        Pattern(
            "name_field",
            r"(?m:^)[ \t]*(?:" + _LABELS + r")[ \t]*:[ \t]*(?P<value>" + _VALUE + r")[ \t]*(?:\r?\n|$)",
            0.7,
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._given = given_names(1)

    def validate_result(self, pattern_text: str) -> bool:
        return _name_value(pattern_text, self._given) or _unknown_name(pattern_text)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A name neither list knows only in a person's record (module docstring); code and
        placeholders never."""
        if not _name_value(text[start:end], self._given):
            window = _RECORD_FIELD.search(text, max(0, start - _RECORD_WINDOW), min(len(text), end + _RECORD_WINDOW))
            if window is None:
                return True
        return super().reject_at(text, start, end)


_PERSON_HEADERS = (
    r"name|full name|employee|employee name|customer name|contact|contact name|contact person|"
    r"person|nom|nom complet|prenom nom|nom prenom|salarie|employe|interlocuteur|vor- und nachname|"
    r"mitarbeiter|mitarbeiterin|ansprechpartner|ansprechpartnerin|kontakt|kontaktperson"
)
_PERSON_HEADER = header_cell(_PERSON_HEADERS)


class PersonCellRecognizer(CompanyCellRecognizer):
    """A cell under a table column headed "name", "Name", "nom", "Mitarbeiter" …"""

    ENTITY = "PERSON"
    HEADER = _PERSON_HEADER
    REQUIRES = dict.fromkeys(("company_first_cell", "company_cell"), header_cell_gate(_PERSON_HEADERS))

    def __init__(self) -> None:
        super().__init__()
        self._given = given_names(1)

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The cell without quotes and spaces when it reads as a name ("Philippine Samson"; not
        "requests", "Build Tools")."""
        span = super().refine_span(text)
        if span is None:
            return None
        value = text[span[0] : span[1]]
        if not re.fullmatch(_VALUE, value) or not _name_value(value, self._given):
            return None
        return span

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Under a person header, and not code (:mod:`._code`) nor a place's name (:mod:`._places`:
        a column "name" lists regions as often as people)."""
        value = " ".join(text[start:end].lower().split())
        return (
            super().reject_at(text, start, end)
            or placeholder_name(value)
            or in_code_position(text, start, end)
            or inside_place_name(text, start, end)
        )


class GreetingPersonRecognizer(_NameRecognizer):
    """A greeting's lone given name: "Hi Max,", "Hallo Jan,", "Bonjour Maud,"."""

    ENTITY = "PERSON"
    PATTERNS = [
        Pattern(
            "greeting_given_name",
            r"(?im:^)[ \t]*(?i:hi|hello|hey|dear|hallo|liebe|lieber|moin|bonjour|salut|cher|chere)[ ]+"
            r"(?P<value>" + _CAP + r")[ ]*(?:,|!|\r?\n)",
            0.7,
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._given = given_names(1)
        self._word_given = word_given_names()

    def validate_result(self, pattern_text: str) -> bool:
        # a gazetteer name, the words-too ones ("Max", "Jan", "June") included: after a
        # greeting they greet someone; "Hi all," and "Hello World," have no given name
        w = pattern_text.lower()
        return w.split("-")[0] in self._given and (not is_common(w) or w in self._word_given)


def field_recognizers() -> list[TiersPatternRecognizer]:
    """The layout-driven person recognizers."""
    return [NameFieldPersonRecognizer(), PersonCellRecognizer(), GreetingPersonRecognizer()]
