"""Company names without a legal form or a role word (``ORGANIZATION``), by their shape.

Family firms, law firms and partnerships are named after their founders, and nothing else in
the name says "company":

* surnames joined: "Jimenez, Wilson and Hunter", "Parsons-Moran", "Marks & Spencer"; every
  part must be a census surname (:mod:`._surnames`) and no ordinary word, so "Client-Server",
  "Black and White", "London, Paris and Berlin" stay as they are;
* a surname and a group word: "Davis Group", "Shepard Associates", "Walker Brothers" (a group
  word after anything else is no company: "RBAC Group", "Instance Group", "Consumer Group");
* where a document says the value is a company without saying it in the sentence: a cell of a
  table column headed "company", "Firma", "société" … (CSV, TSV; not Markdown), and the line
  between the recipient and the street of an address block ("Ship to:", "Lieferanschrift:",
  "Adresse de livraison :").

A surname alone in running text ("bei der Lehmann", "avec Lebon") is not found: German nouns
and French words are census surnames too ("Hand", "Post", "Bank", "Art"), and no word list of
those languages is shipped here.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from ._code import in_code_position
from ._table_cells import cells as _cells
from ._surnames import is_plain_surname, is_surname
from ._vocabulary import is_common

__all__ = ["AddressBlockCompanyRecognizer", "CompanyCellRecognizer", "JoinedSurnamesRecognizer", "firm_recognizers"]

# one surname as written: "Moran", "McDonald", "O'Neill" (text is normalised: accents folded)
_SN = r"(?:Mc|Mac|O['’]|D['’])?[A-Z][a-z]+"
_CONJ = r"(?:and|&|und|et)"
# a name's end: not inside a longer word, identifier or hyphenated compound
_END = r"(?:$|[^A-Za-z0-9_'’-])"
_GROUP_WORDS = r"(?:Group|Associates|Partners|Brothers|Bros\.)"
_JOINED = re.compile(_SN + r"(?:(?:,[ ]|,?[ ]" + _CONJ + r"[ ]|-)" + _SN + r")+|" + _SN + r"[ ]" + _GROUP_WORDS)
_WORDS = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_NOT_PARTS = frozenset({"and", "und", "et", "group", "associates", "partners", "brothers", "bros"})


# a hyphenated town is no firm: "Neu-Ulm", "Saint-Marin", "Sulzbach-Rosenberg", "Castrop-Rauxel"
# (town prefixes, and the endings of German and French place names that surnames share)
_TOWN_PREFIXES = frozenset(
    "saint sainte st ste san santa mont port fort neu alt bad ober unter nieder gross klein hohen new north south "
    "east west nord sud ost".split()
)
_TOWN_ENDINGS = tuple(
    "bach berg burg dorf heim hausen stadt ingen feld furt hofen rode leben kirchen ville brunn".split()
)


def _town(value: str) -> bool:
    parts = [p.lower() for p in value.split("-")]
    return len(parts) == 2 and any(p in _TOWN_PREFIXES or p.endswith(_TOWN_ENDINGS) for p in parts)


# two hyphenated words are common surnames both, or a compound: the census's first 10,000 hold
# "Parsons-Moran" and nearly every British surname; "Round-Robin", "Times-Roman", "Max-Age",
# "Kamada-Kawai", "Cuthill-McKee" have a rarer part
_HYPHEN_RANK = 10_000
# after these, joined surnames name a method, not a firm: "the Fisher-Yates shuffle",
# "Edmonds-Karp algorithm", "the Hoffman-Singleton graph", "Porter-Duff operators"
_EPONYM_AFTER = re.compile(
    r"[ ]+(?i:algorithms?|shuffle|graphs?|theorem|lemma|conjecture|method|bound|heuristics?|distance|"
    r"problem|layout|compositing|operators?|transforms?|equations?|model|index|formula|coefficients?|"
    r"inequality|criterion|ordering|scheme|flow|search|metric|rule|principle|effect|law|function|curve|"
    r"estimator|statistic|test|tree|sampling|centrality|decomposition|style|approximation|cycle|numbers?|relaxation)\b"
)


def _joined_surnames(value: str) -> bool:
    """Whether ``value`` is surnames joined, or a surname and a group word: every part a census
    surname and one at least no ordinary word ("Watts, Black and Field", not "Black and White")."""
    if _JOINED.fullmatch(value) is None or _town(value):
        return False
    parts = [w for w in _WORDS.findall(value) if w.lower() not in _NOT_PARTS]
    if not all(map(is_surname, parts)) or not any(map(is_plain_surname, parts)):
        return False
    return "-" not in value or all(is_surname(p, _HYPHEN_RANK) for p in parts)


class JoinedSurnamesRecognizer(TiersPatternRecognizer):
    """Surnames joined by ", " / " and " / " & " / "-", or followed by a group word."""

    ENTITY = "ORGANIZATION"
    PATTERNS = [
        Pattern(
            "joined_surnames",
            r"\b(?P<value>" + _SN + r"(?:,[ ]" + _SN + r"){1,3},?[ ]" + _CONJ + r"[ ]" + _SN + r")" + _END,
            0.6,
        ),
        # two surnames only with "&": "Smith and Jones" are two people more often than a firm
        Pattern("surname_pair", r"\b(?P<value>" + _SN + r"[ ]&[ ]" + _SN + r")" + _END, 0.6),
        # not a part of a longer compound or path: "X-Forwarded-For", "a/Smith-Jones"
        Pattern("hyphenated_surnames", r"(?:^|[^A-Za-z0-9_.'’/-])(?P<value>" + _SN + r"-" + _SN + r")" + _END, 0.6),
        Pattern("surname_group", r"\b(?P<value>" + _SN + r"[ ]" + _GROUP_WORDS + r")" + _END, 0.6),
    ]

    def __init__(self) -> None:
        super().__init__()
        is_surname("Smith")  # read the gazetteer at start-up, not on the first request

    def validate_result(self, pattern_text: str) -> bool:
        return _joined_surnames(pattern_text)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """An eponym ("the Bellman-Ford algorithm"); code in the place of a name (:mod:`._code`)."""
        return _EPONYM_AFTER.match(text, end) is not None or in_code_position(text, start, end)


# not "|": Markdown rows would make every "x: int | None" of code a candidate (≈ 25 ms per MB)
_SEP = ",;\t"
_HEADER_WORD = re.compile(
    r"(?i)^\W*(?:company|company name|companies|employer|customer|customer name|supplier|supplier name|vendor|"
    r"organi[sz]ation|firm|firma|firmenname|unternehmen|arbeitgeber|kunde|lieferant|hersteller|"
    r"societe|entreprise|employeur|client|fournisseur|raison sociale)\W*$"
)


def _name_words(value: str) -> bool:
    """Some word of ``value`` is capitalised and no ordinary word ("Lehmann", not "Total")."""
    return any(w[:1].isupper() and not is_common(w) for w in _WORDS.findall(value))


class CompanyCellRecognizer(TiersPatternRecognizer):
    """A cell of a table column whose header names companies: "name;Firma;born\\nAnna;Lehmann;…"."""

    ENTITY = "ORGANIZATION"
    PATTERNS = [
        # the first cell of a line, with a separator after it; a later one after its separator
        # ("," without a space: prose puts one there, "Hello, World", CSV does not)
        Pattern("company_first_cell", r"(?m)^(?P<value>[A-Z][^,;\t\"\n]*)[,;\t]", 0.6),
        Pattern(
            "company_cell",
            r"(?:,|[;\t][ ]*)(?P<value>\"[^\"\n]+\"|[A-Z][^,;\t\"\n]*)",
            0.6,
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        # (text id, text length, block start, searched up to, header cells) of the last table:
        # rows of one table share it, so a long CSV is not searched back once per cell
        self._table: tuple[int, int, int, int, tuple[str, ...]] | None = None

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The cell's value without its quotes and spaces; None without a word of a name."""
        value = text.strip(' "\t')
        if not value or len(value) > 80 or not _name_words(value):
            return None
        start = text.index(value)
        return start, start + len(value)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A cell counts under a company header of the same table, in a row of as many cells."""
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        prefix = text[line_start:start].rstrip(' "')
        rest = text[end:line_end].lstrip(' "').rstrip("\r")
        if rest and rest[0] not in _SEP:
            return True  # the value stops before its cell does
        sep = prefix[-1] if prefix else rest[:1]
        if sep not in _SEP or not sep:
            return True
        header = self._header(text, line_start, sep)
        if len(header) < 2 or self._table is None or line_start == self._table[2]:
            return True  # no table, or the header row itself
        row = _cells(text[line_start:line_end].rstrip("\r"), sep)
        column = len(_cells(text[line_start:start], sep)) - 1
        if len(row) != len(header) or column >= len(header):
            return True
        return _HEADER_WORD.match(header[column].strip()) is None

    def _header(self, text: str, line_start: int, sep: str) -> tuple[str, ...]:
        """The first line of the block (lines up to a blank one) holding ``line_start``, as cells."""
        cached = self._table
        if cached is not None and cached[0] == id(text) and cached[1] == len(text) and cached[2] <= line_start:
            if text.find("\n\n", cached[3], line_start) < 0:
                self._table = (*cached[:3], max(cached[3], line_start), cached[4])
                return cached[4]
        block = text.rfind("\n\n", 0, line_start)
        block = 0 if block < 0 else block + 2
        stop = text.find("\n", block)
        first = text[block : stop if stop >= 0 else len(text)].rstrip("\r")
        header = tuple(_cells(first, sep)) if sep in first else ()
        self._table = (id(text), len(text), block, line_start, header)
        return header


class AddressBlockCompanyRecognizer(TiersPatternRecognizer):
    """The line between the recipient and the street of an address block ("Ship to:\\nMr. John
    Smith\\nLebon\\n18, chemin Lucas")."""

    ENTITY = "ORGANIZATION"
    PATTERNS = [
        Pattern(
            "address_block_company",
            r"(?im:^[ \t]*(?:ship[ ]to|deliver[ ]to|delivery[ ]address|bill[ ]to|invoice[ ]to|sold[ ]to|"
            r"lieferanschrift|lieferadresse|rechnungsanschrift|versandadresse|adresse[ ]de[ ]livraison|"
            r"adresse[ ]de[ ]facturation|livrer[ ]a))[ ]*:[ ]*\r?\n"
            # the recipient, then the company, then a line with a number (street or postcode)
            r"[ \t]*[^\n]{2,60}\r?\n[ \t]*(?P<value>[A-Z][^\n0-9]{0,60}?)[ \t]*\r?\n[^\n]*[0-9]",
            0.6,
        ),
    ]

    def validate_result(self, pattern_text: str) -> bool:
        return _name_words(pattern_text)


def firm_recognizers() -> list[TiersPatternRecognizer]:
    """The shipped recognizers of companies by shape."""
    return [JoinedSurnamesRecognizer(), CompanyCellRecognizer(), AddressBlockCompanyRecognizer()]
