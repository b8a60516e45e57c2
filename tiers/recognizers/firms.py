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

* a name right after a German dative feminine article ("bei der Lehmann", "von der Bolander",
  "mit der Reuter"): that "der" stands only before a feminine noun, so a capitalised word there
  that is no feminine noun (:mod:`._german_nouns`: "bei der Prüfung", "von der Post" stay) names
  a firm, "die Firma" by gender; so does a brand's spelling ("bei der KUKA", "SindoPower",
  "T-Systems"), an adjective left uninflected ("mit der Deutsche Bahn"; the noun phrase is "der
  Deutschen Bahn") and a name with its trade ("Vector Informatik"); after a comma "der" is a
  relative pronoun ("die Anlage, mit der Mitarbeiter arbeiten") and counts for nothing;
* a name right after French "avec", "chez", "auprès de" ("avec Lebon ;", "chez Mercier", "avec
  Golaem") that is no ordinary word, product or place of the vocabulary and not in capitals
  ("avec Excel", "avec SAP" are tools);
* a name after what a firm issues: "les certificats d'étalonnage de Lebon", "la facture de DBV
  Technologies", "le devis d'Akeneo" (acronyms too: "de CILAS");
* a name with the words of a family firm: "Gebr. Hoffmann", "Dupont Frères", "Schmidt &
  Partner", "Bernard et Associés".

A surname alone elsewhere in running text ("l'usine de Menard", "der Kunde Bien") is not found:
French words and German nouns are census surnames too ("Hand", "Post", "Bank", "Art"), and after
"de" a firm reads as a town does unless what precedes is a firm's document.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from ._code import code_around, code_identifier, in_code_position
from ._english_words import is_english_word
from ._eponyms import eponym_after, eponym_elsewhere
from ._german_nouns import is_feminine_noun
from ._given_names import given_names
from ._places import inside_place_name, place_names
from ._table_cells import cells as _cells
from ._surnames import is_plain_surname, is_surname
from ._vocabulary import NOT_SURNAMES, is_common

__all__ = [
    "FIRM_TRADES",
    "AddressBlockCompanyRecognizer",
    "ArticleFirmRecognizer",
    "CompanyCellRecognizer",
    "FamilyFirmRecognizer",
    "IssuerFirmRecognizer",
    "JoinedSurnamesRecognizer",
    "PartnerFirmRecognizer",
    "firm_recognizers",
    "in_prose_code",
]

# one surname as written: "Moran", "McDonald", "O'Neill" (text is normalised: accents folded)
_SN = r"(?:Mc|Mac|O['’]|D['’])?[A-Z][a-z]+"
_CONJ = r"(?:and|&|und|et)"
# a name's end: not inside a longer word, identifier or hyphenated compound
_END = r"(?:$|[^A-Za-z0-9_'’-])"
_GROUP_WORDS = r"(?:Group|Associates|Partners|Brothers|Bros\.)"
_JOINED = re.compile(_SN + r"(?:(?:,[ ]|,?[ ]" + _CONJ + r"[ ]|-)" + _SN + r")+|" + _SN + r"[ ]" + _GROUP_WORDS)
_WORDS = re.compile(r"[A-Za-zß]+(?:['’][A-Za-zß]+)?")  # ß stays in normalised text: "Heß"
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
        place_names()  # and the places (≈ 0.1 s)

    def validate_result(self, pattern_text: str) -> bool:
        return _joined_surnames(pattern_text)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A compound given name ("Jean-Baptiste": each half a common given name); an eponym
        ("the Fisher-Yates shuffle", "Porter-Duff operators", "the Denman-Beavers iteration":
        :mod:`._eponyms`), also where the text names it without its object after
        writing it with one ("the Held-Karp relaxation" … "the Held-Karp solution"); code in
        the place of a name (:mod:`._code`); a place's name ("Monte-Carlo", "Tan-Tan":
        :mod:`._places`)."""
        value = text[start:end]
        if "-" in value and " " not in value and all(p.lower() in given_names(4) for p in value.split("-")):
            # a compound given name ("Jean-Baptiste", "Paul-Olivier"), no firm's: each half common
            # as a given name (4 of the gazetteer's 13 steps; surnames that are given names too,
            # "Hunter", "Moran", "Wagner", are 3 at most)
            return True
        before = _LIST_BEFORE.search(text, max(0, start - 40), start) if "," in value else None
        word = (before.group(1) or before.group(2)) if before is not None else ""
        if word and is_english_word(word) and not is_plain_surname(word):
            # "on Top and Bottom, Left and Right": a longer list of words, no firm's name; a
            # firm before the conjunction ("Skadden and Baker, Botts and Lovell") is a list of firms
            return True
        return (
            eponym_after(text, end, broad=True, hyphenated=" " not in text[start:end])
            or in_code_position(text, start, end)
            or ("-" in text[start:end] and eponym_elsewhere(text, text[start:end]))
            or inside_place_name(text, start, end)
        )


# a capitalised word and a conjunction right before joined names: they continue a list with a
# conjunction of its own ("Top and Bottom, Left and Right"); a firm's name has one conjunction.
# Or a list's first items and a line break: a wrapped list goes on ("special functions like
# Airy,\n Bessel, Whittaker and Lambert"); on one line the pattern takes the list whole, and
# judges it so. A sign-off, a greeting or a heading ends its line with a comma too ("Sincerely,",
# "Hi Team,", "Counsel for the Buyer,") and a firm may follow it
_LIST_BEFORE = re.compile(
    r"\b([A-Z][a-z]+)[ ](?:and|&|und|et)[ ]\Z"
    r"|(?:\b(?:like|including|as|namely|e\.g\.|i\.e\.)[ ]+|,[ ]*)([A-Z][a-z]+),[ \t]*\r?\n[ \t]*(?:(?:#+|//|\*)[ \t]*)?\Z"
)
# not "|": Markdown rows would make every "x: int | None" of code a candidate (≈ 25 ms per MB)
_SEP = ",;\t"
# the longest line judged as a table row (characters); a cell of a longer line is no table's
_ROW_LIMIT = 8192
_COMPANY_HEADERS = (
    r"company|company name|companies|employer|customer|customer name|supplier|supplier name|vendor|"
    r"organi[sz]ation|firm|firma|firmenname|unternehmen|arbeitgeber|kunde|lieferant|hersteller|"
    r"societe|entreprise|employeur|client|fournisseur|raison sociale"
)


def header_cell(words: str) -> re.Pattern[str]:
    """A header cell that is one of ``words`` (an alternation), with nothing but non-word characters around it."""
    return re.compile(rf"(?i)^\W*(?:{words})\W*$")


def header_cell_gate(words: str) -> str:
    """An RE2 regex that finds, anywhere in a text, a cell :func:`header_cell` accepts: from a line's start
    or a separator to the next separator or line end. A cell pattern runs only where it matches
    (the scanner's ``REQUIRES``): without such a header there is no column to be in, and chats
    are full of ", Capitalised" that the cell patterns would otherwise judge one by one. A
    superset by construction: RE2's ``\\W`` is ASCII's, broader than Python's Unicode one."""
    return rf"(?i)(?:^|[,;\t\n])\W*(?:{words})\W*(?:[,;\t\r\n]|$)"


_HEADER_WORD = header_cell(_COMPANY_HEADERS)


def _name_words(value: str) -> bool:
    """Some word of ``value`` is capitalised and no ordinary word ("Lehmann", not "Total")."""
    return any(w[:1].isupper() and not is_common(w) for w in _WORDS.findall(value))


class CompanyCellRecognizer(TiersPatternRecognizer):
    """A cell of a table column whose header names companies: "name;Firma;born\\nAnna;Lehmann;…"."""

    ENTITY = "ORGANIZATION"
    # the header that says what the column holds (a subclass judges another column: people)
    HEADER: re.Pattern[str] = _HEADER_WORD
    REQUIRES = dict.fromkeys(("company_first_cell", "company_cell"), header_cell_gate(_COMPANY_HEADERS))
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
        # (text, block start, searched up to, header cells) of the last table: rows of one table
        # share it, so a long CSV is not searched back once per cell. The text itself is kept,
        # not its id: a freed text's id goes to a later one, which then read this table's header.
        self._table: tuple[str, int, int, tuple[str, ...]] | None = None

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The cell's value without its quotes and spaces; None without a word of a name."""
        value = text.strip(' "\t')
        if not value or len(value) > 80 or not _name_words(value):
            return None
        start = text.index(value)
        return start, start + len(value)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A cell counts under a company header of the same table, in a row of as many cells."""
        # Every cell of a line is a candidate: searching a line of any length for its ends, once
        # per cell, is quadratic (1 MB of "Acme," on one line took 10 s). No table row is this long.
        low = max(0, start - _ROW_LIMIT)
        line_start = text.rfind("\n", low, start) + 1
        if line_start == 0 and low > 0:
            return True
        line_end = text.find("\n", end, end + _ROW_LIMIT)
        if line_end < 0:
            if end + _ROW_LIMIT < len(text):
                return True
            line_end = len(text)
        prefix = text[line_start:start].rstrip(' "')
        rest = text[end:line_end].lstrip(' "').rstrip("\r")
        if rest and rest[0] not in _SEP:
            return True  # the value stops before its cell does
        sep = prefix[-1] if prefix else rest[:1]
        if sep not in _SEP or not sep:
            return True
        header = self._header(text, line_start, sep)
        if len(header) < 2 or self._table is None or line_start == self._table[1]:
            return True  # no table, or the header row itself
        row = _cells(text[line_start:line_end].rstrip("\r"), sep)
        column = len(_cells(text[line_start:start], sep)) - 1
        if len(row) != len(header) or column >= len(header):
            return True
        return self.HEADER.match(header[column].strip()) is None

    def _header(self, text: str, line_start: int, sep: str) -> tuple[str, ...]:
        """The first line of the block (lines up to a blank one) holding ``line_start``, as cells."""
        cached = self._table
        if cached is not None and cached[0] is text and cached[1] <= line_start:
            if text.find("\n\n", cached[2], line_start) < 0:
                self._table = (text, cached[1], max(cached[2], line_start), cached[3])
                return cached[3]
        block = text.rfind("\n\n", 0, line_start)
        block = 0 if block < 0 else block + 2
        stop = text.find("\n", block)
        first = text[block : stop if stop >= 0 else len(text)].rstrip("\r")
        header = tuple(_cells(first, sep)) if sep in first else ()
        self._table = (text, block, line_start, header)
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
            # (a French street often has no number of its own: "rue de Marchal\n75002 Paris")
            r"[ \t]*[^\n]{2,60}\r?\n[ \t]*(?P<value>[A-Z][^\n0-9]{0,60}?)[ \t]*\r?\n(?:[^\n0-9]{2,60}\r?\n)?[^\n]*[0-9]",
            0.6,
        ),
    ]

    def validate_result(self, pattern_text: str) -> bool:
        return _name_words(pattern_text) and _STREET.search(pattern_text) is None


# without a company line the street would take its place: "Ship to:\nJohn Smith\nMain Street\n…"
_STREET = re.compile(
    r"(?i)(?:^|[ ])(?:rue|avenue|av|boulevard|bd|chemin|allee|impasse|place|route|quai|cours|street|st|road|rd|"
    r"lane|avenue|drive|way|court|ct)(?:$|[ .])|(?i:strasse|straße|str\.|weg|allee|platz|gasse|ring|damm)(?:$|[ ])"
)

# one word of a name in German or French running text (accents folded; ß stays: "Heß")
_NAME_WORD = r"(?:Mc|Mac|O['’]|D['’])?[A-Z][a-zß]+"
_NAME_PAIR = _NAME_WORD + r"(?:[ ]" + _NAME_WORD + r")?"
# a brand's own spelling: inner capitals or all capitals ("BlueNext", "DxOMark", "KUKA", "DHL"),
# or capitalised words hyphenated ("Hapag-Lloyd", "T-Systems", "Krauss-Maffei")
_BRAND_WORD = r"(?:[A-Z][a-z]*[A-Z][A-Za-z]*[0-9]*|[A-Z][a-zß]*(?:-[A-Z][A-Za-zß]+)+)"
# a firm's name after a word that says "firm": up to four words, brand-spelt ones included
_FIRM_WORD = r"(?:" + _BRAND_WORD + r"|" + _NAME_WORD + r")"
_FIRM_NAME = _FIRM_WORD + r"(?:[ ](?:(?:&|and|und|et)[ ])?" + _FIRM_WORD + r"){0,3}"
# the name ends where the sentence goes on in lower case or stops; a capitalised word after it
# would make it a noun phrase's first part ("bei der Deutschen Bahn" is taken whole or not at all)
_NAME_STOP = r"(?:[ ]*[,;.:!?)]|[ ]+[a-z]|[ ]*$)"
# nominalised adjectives and participles after "der": "mit der Neuen", "von der Europaischen"
# (not every "-ten": "Baumgarten", "Harten" are surnames)
_ADJECTIVE_ENDINGS = ("ischen", "lichen", "igen", "baren", "samen", "ierten", "enden")
_ADJECTIVES = frozenset(
    "neuen alten ersten letzten zweiten dritten anderen gleichen selben obigen genannten besten grossen "
    "großen kleinen deutschen franzosischen englischen".split()
)


class ArticleFirmRecognizer(TiersPatternRecognizer):
    """A firm after a German preposition and dative feminine "der": "bei der Lehmann", "von der
    Bolander am Dienstag", "mit der Reuter den neuen Liefertermin"."""

    ENTITY = "ORGANIZATION"
    PATTERNS = [
        Pattern(
            "dative_feminine_name",
            r"\b(?:[Bb]ei|[Vv]on|[Mm]it|[Gg]egenuber)[ ]+der[ ]+(?P<value>" + _FIRM_NAME + r")" + _NAME_STOP,
            0.6,
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        is_feminine_noun("Firma")  # read the noun list at start-up, not on the first request

    def validate_result(self, pattern_text: str) -> bool:
        words = [w for w in pattern_text.split() if w not in _CONJUNCTIONS]
        words = words[:1] + [w for w in words[1:] if w.lower() not in FIRM_TRADES]  # "Varnix Logistics"
        if any(
            is_common(w) or w.lower().endswith(_ADJECTIVE_ENDINGS) or w.lower() in _ADJECTIVES or w in _ABBREVIATIONS
            for w in words
        ):
            return False
        if len(words) >= 2 and _UNINFLECTED.search(words[0].lower()):
            # "mit der Deutsche Bahn", "bei der Heidelberger Druckmaschinen": an adjective that
            # "der" would inflect ("der Deutschen Bahn") is uninflected only in a name
            return True
        # a feminine noun first, also as a compound's last part ("bei der Prufung Meier", "bei
        # der Qualitats-Prufung"); one after a name is the firm's trade ("Vector Informatik")
        first = words[0]
        if _BRAND_SPELLING.fullmatch(first):
            return True  # no German noun is spelt "SindoPower", "KUKA" or "T-Systems"
        return not (is_feminine_noun(first) or is_feminine_noun(first.rsplit("-", 1)[-1]))

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """After a comma "der" is a relative pronoun and any noun may follow; code (:mod:`._code`)."""
        return _RELATIVE.search(text, max(0, start - 40), start) is not None or in_prose_code(text, start, end)


# an adjective's uninflected form, as names keep it: "Deutsche", "Europaische", town adjectives
# in -er ("Heidelberger", "Stuttgarter")
_UNINFLECTED = re.compile(r"(?:ische|deutsche|[a-z]{3}er)$")
# abbreviations German writes with a feminine article that name no firm ("bei der FMEA", "mit
# der EDV", "von der EU")
_ABBREVIATIONS = frozenset(
    "FMEA EDV DSGVO ISO DIN EN IT KI QS QM EU UN SPS CNC UV PDF API URL KPI IHK HR GmbH AG KG SE UG PLZ "
    "MwSt USt".split()
)
# inner or all capitals, or a hyphenated word with a one- or two-letter first part ("T-Systems")
_BRAND_SPELLING = re.compile(r"[A-Z][a-z]*[A-Z][A-Za-z]*[0-9]*|[A-Z]{1,2}-[A-Z][A-Za-z]+")


def in_prose_code(text: str, start: int, end: int) -> bool:
    """:func:`._code.in_code_position` for a value after a German or French word of prose ("bei
    der", "chez", "la société"): there inner capitals are a brand's ("SindoPower", "BlueNext"),
    not an identifier's, and only code's other marks count (an underscore, a call, a key)."""
    value = text[start:end]
    if "_" in value:
        return True
    if not any(code_identifier(w) for w in _WORDS.findall(value)):
        return in_code_position(text, start, end)
    return code_around(text, start, end)


_CONJUNCTIONS = frozenset({"&", "and", "und", "et"})
_RELATIVE = re.compile(r",[ ]*(?:[Bb]ei|[Vv]on|[Mm]it|[Gg]egenuber)[ ]+der[ ]+$")


# a partner's name: a surname's article, then up to three words (brands' spellings too)
_PARTNER_NAME = r"(?:(?:Le|La)[ ])?" + _FIRM_NAME
# documents and offers a supplier issues (accents folded)
_ISSUED = (
    r"(?:certificats?|attestations?|factures?|devis|offres?|bons?[ ]+de[ ]+livraison|bons?[ ]+de[ ]+commande|"
    r"rapports?[ ]+d['’]audit|fiches?[ ]+techniques?|declarations?[ ]+de[ ]+conformite|catalogues?|tarifs|"
    r"conditions[ ]+generales|accuses?[ ]+de[ ]+reception)"
)
# a firm's trade after its name, ordinary words elsewhere: "DBV Technologies", "Bolloré
# Logistics", "IMDS Group", "Olea Medical", "Fresenius Medical Care"
FIRM_TRADES = frozenset(
    """group groupe gruppe technologies technology systems system solutions logistics labs laboratories
    laboratory medical pharma pharmaceuticals industries industrie software services platform consulting
    engineering electronics elektronik informatik energy energie motors airlines chemicals materials steel
    metals foods power holding holdings partners associates ventures capital international care health
    devices""".split()
)


class PartnerFirmRecognizer(TiersPatternRecognizer):
    """A firm after French "avec", "chez", "auprès de" ("la date de livraison avec Lebon ;",
    "chez Mercier", "avec Golaem"): mid-sentence, a capitalised word there is a firm or a person
    when it is no ordinary word, product or place of the vocabulary ("avec Excel", "chez
    Google", "auprès de Paris" stay) and not in capitals ("avec SAP", "avec IBM": a tool)."""

    ENTITY = "ORGANIZATION"
    # acronyms are tools here ("avec SAP"), a firm where it issued something ("de CILAS")
    ACRONYMS = False
    PATTERNS = [
        Pattern(
            "partner_name",
            r"\b(?:[Aa]vec|[Cc]hez|[Aa]upres[ ]d(?:e[ ]|['’]))[ ]*(?P<value>" + _PARTNER_NAME + r")" + _NAME_STOP,
            0.6,
        ),
    ]

    def validate_result(self, pattern_text: str) -> bool:
        words = [w for w in pattern_text.split() if w not in _CONJUNCTIONS]
        if words[0] in ("Le", "La") and len(words) > 1:
            words = words[1:]  # a surname's article: "Le Berre", "La Fontaine"
        # the trade after a name is an ordinary word too: "DBV Technologies", "Bolloré Logistics"
        core = words[:1] + [w for w in words[1:] if w.lower() not in FIRM_TRADES]
        if not self.ACRONYMS and any(w.isupper() for w in core):
            return False
        return not any(is_common(w) or w.lower() in NOT_SURNAMES for w in core)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Code, or a part of a place's name ("Blackburn avec Darwen": :mod:`._places`)."""
        return in_prose_code(text, start, end) or inside_place_name(text, start, end)


class IssuerFirmRecognizer(PartnerFirmRecognizer):
    """A firm after what it issued: "les certificats d'étalonnage de Lebon manquaient", "la
    facture de DBV Technologies", "l'offre d'Akeneo"; not "l'usine de Lyon" or "le projet de
    Lille" (places have sites and projects, not invoices and certificates)."""

    ACRONYMS = True
    PATTERNS = [
        Pattern(
            "issuer_name",
            r"\b"
            + _ISSUED
            + r"(?:[ ]+(?:d['’]|de[ ]+)[a-z]+)?[ ]+(?:de[ ]+|d['’])(?P<value>"
            + _PARTNER_NAME
            + r")"
            + _NAME_STOP,
            0.6,
        ),
    ]


# a family firm's own words in German and French (accents folded): "Gebr. Hoffmann", "Dupont
# Frères", "Schmidt & Partner", "Bernard et Associés"
_BROTHERS_BEFORE = r"(?:Gebr\.|Gebruder)"
# "Partner" and "Associés" only joined ("Schmidt & Partner"): "Business Partner", "Ihr Partner"
_AFTER_NAME = r"(?:[ ](?:&|und|et)[ ](?:Freres|Partner|Associes)|[ ]Freres)"


class FamilyFirmRecognizer(TiersPatternRecognizer):
    """A surname with the German or French words of a family firm or partnership."""

    ENTITY = "ORGANIZATION"
    PATTERNS = [
        Pattern("brothers_before", r"\b(?P<value>" + _BROTHERS_BEFORE + r"[ ]" + _NAME_PAIR + r")" + _NAME_STOP, 0.6),
        Pattern("partners_after", r"\b(?P<value>" + _NAME_WORD + _AFTER_NAME + r")" + _END, 0.6),
    ]

    def validate_result(self, pattern_text: str) -> bool:
        # the name's words: none an ordinary word or a German feminine noun ("Beratung und Partner")
        words = [w for w in _WORDS.findall(pattern_text) if w.lower() not in _FAMILY_WORDS]
        return bool(words) and not any(is_common(w) or is_feminine_noun(w) for w in words)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        return in_code_position(text, start, end)


_FAMILY_WORDS = frozenset({"gebr", "gebruder", "freres", "partner", "associes", "und", "et"})


def firm_recognizers() -> list[TiersPatternRecognizer]:
    """The shipped recognizers of companies by shape."""
    return [
        JoinedSurnamesRecognizer(),
        CompanyCellRecognizer(),
        AddressBlockCompanyRecognizer(),
        ArticleFirmRecognizer(),
        PartnerFirmRecognizer(),
        IssuerFirmRecognizer(),
        FamilyFirmRecognizer(),
    ]
