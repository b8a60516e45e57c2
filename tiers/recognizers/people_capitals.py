"""Names in capitals throughout (``PERSON``): "MARIA GONZALEZ", "JAMES T. WILSON", "GONZALEZ,
MARIA", "SMITH/JOHN MR", as passports, ID cards, boarding passes and HR or payroll exports write
them.

:mod:`.people` takes a surname in capitals only after a given name in mixed case ("Jean DUPONT"),
because capitals are mostly acronyms and headings ("Save ACL", "MARK AS READ"). With both in
capitals the words must say it alone, so both are held to more: a given name common somewhere
(frequency 2 or more in the gazetteer) that is none of the given names that are words too
("MARK", "GRANT", "WILL", "ROSE", "JUNE"), and a census surname of the first 20,000 that is no
ordinary word, an English word only among the commonest thousand ("SMITH", "BROWN"; "CORE",
"CLOSE" are code's words: "PIL CORE", "CLOSE, PING"). Two English words together are no name
("JET BLACK", "EDIT FIELDS", "GRACE CHURCH"), nor two words of the spelling alphabet ("CHARLIE
ROMEO"), nor the list form inside an enumeration ("BLACK, SILVER, GOLD"). The name is looked for
inside a run of capitals ("MRS MARIA GONZALEZ", "EMPLOYEE JOHN SMITH WAS TERMINATED"), the
longest one ("HANS PETER BECKER"). Code's constants are joined by "_", not blanks, and stay out
of the pattern.

Where a form puts a name (:class:`CapitalsFieldPersonRecognizer`: a label's colon or a line's or
cell's start before it, the line's or cell's end after it) a strong given name (four letters or
more and no English word, or one of the commonest names: "GERALD", "MARIA") vouches for more:
any census surname, or a word of no list here shaped as a surname ("NAME OF HOLDER: PAULA KLEMT",
"ROBERT PRUVOST": the census is American, and passports write German and French surnames in
capitals too); the surname may come first ("GONZALEZ MARIA"). In running capitals the same
reading took phrases of other languages, products and models ("PASTA ALLA CARBONARA", "ESTA
GARANTÍA", "BERT ONNX", "MARGHERITA BUFALA"), and any given name took code ("ALTER DATABASE",
"JIT WORKAROUND"): there the census alone vouches.
"""

from __future__ import annotations

import re
from functools import lru_cache

from presidio_analyzer import Pattern

from ._english_words import is_english_word, is_entry, is_proper_noun
from ._given_names import given_names
from ._surname_shape import name_shaped
from ._surnames import is_surname
from ._vocabulary import AMBIGUOUS_GIVEN_NAMES, NOT_GIVEN_NAMES, NOT_SURNAMES, WEAK_GIVEN_NAMES, is_common
from .people import _END, _PLACE_PREFIXES, PLACE_WORDS_AFTER_PARTICLE, _NameRecognizer
from .people_vietnamese import vietnamese_syllable

__all__ = ["CapitalsFieldPersonRecognizer", "CapitalsPersonRecognizer", "capitals_recognizers"]

_WORD = r"(?:[A-Z]['’])?[A-Z]{3,15}(?:-[A-Z]{3,15})?"  # "O'BRIEN", "JEAN-LUC"
_INITIAL = r"[A-Z]\."
_SURNAME_RANK = 20_000
# the gazetteer's frequency (1 – 13) from which a given name that is an English word too may still
# vouch for a surname of no list ("MARIA" 12, "JAMES" 9; "ROSE", "FRANK" 8; "ALTER", "DONE" 4)
_COMMONEST_GIVEN = 9
_WORD_SURNAME_RANK = 1_000
_WORDS = re.compile(r"[A-Z]\.|(?:[A-Z]['’])?[A-Z]+(?:-[A-Z]+)?")
# given names that are no name in capitals: labels ("EDIT", "DONE", "SUB"), a greeting ("HEY"),
# SQL's verb ("GRANT")
_NOT_IN_CAPITALS = frozenset("edit done sub hey grant".split())
_SPELLING_ALPHABET = frozenset(
    "alpha alfa bravo charlie delta echo foxtrot golf hotel india juliet juliett kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu fox".split()
)
_TITLES = r"(?:MR|MRS|MS|MISS|MSTR|DR)"
# a surname's particles in capitals ("JEAN DE LA FONTAINE", "JUAN CARLOS DE LOS SANTOS", "LARS VAN
# DER BERG"); the pattern's words have three letters or more, so the short ones are named
_SHORT_PARTICLE = r"(?:DE|DA|DI|DO|DU|LA|LE|ZU)"
_PARTICLES = frozenset("von van de du des der den da do dos di del della le la zu ten ter".split())
# the pairs a surname opens with ("DE LOS SANTOS", "VAN DER BERG"); any other pair is a phrase's
# words ("JOAO DI LOS CARMEN", "DOLORES DA LOS")
# Dutch and German particles: no preposition of a Romance language reads "VAN", "VON", "TEN"
_GERMANIC_PARTICLES = frozenset("van von ten ter".split())
_PARTICLE_PAIRS = frozenset(
    {("de", "la"), ("de", "los"), ("de", "las"), ("de", "le"), ("van", "der"), ("van", "den"), ("van", "de"),
     ("von", "der"), ("von", "den"), ("von", "dem"), ("von", "und")}
)  # fmt: skip


def _trailing_particles(words: list[str]) -> int:
    """How many of the last words of ``words`` (none, one or two) are a surname's particles."""
    return next((n for n in (2, 1) if len(words) >= n and _leading_particles(words[-n:]) == n), 0)


def _leading_particles(words: list[str]) -> int:
    """How many of the first words of ``words`` (none, one or two) are a surname's particles."""
    if len(words) >= 2 and (words[0].lower(), words[1].lower()) in _PARTICLE_PAIRS:
        return 2
    return 1 if words and words[0].lower() in _PARTICLES else 0


# another item of an enumeration right after the list form, or right before it
_MORE_AFTER = re.compile(r",[ ]?[A-Z]{2,}")
_MORE_BEFORE = re.compile(r"[A-Z]{2,},[ ]?\Z")


class CapitalsPersonRecognizer(_NameRecognizer):
    """A common given name and a common surname, both in capitals; middle names or an initial
    between them; the list form "SURNAME, GIVEN"; the airline's "SURNAME/GIVEN MR"."""

    ENTITY = "PERSON"
    # the readings a name's place in a form allows (:class:`CapitalsFieldPersonRecognizer`)
    LENIENT = False
    PATTERNS = [
        # a run of up to eight words in capitals; the name is looked for inside it ("MRS MARIA
        # GONZALEZ", "EMPLOYEE JOHN SMITH WAS TERMINATED")
        Pattern(
            "capitals_given_surname",
            r"\b(?P<value>" + _WORD + r"(?:[ ](?:" + _INITIAL + "|" + _WORD + r")){1,7})" + _END,
            0.6,
        ),
        # a given name or four, one or two particles, a surname or two: "JEAN DE LA FONTAINE",
        # "JUAN CARLOS DE LOS SANTOS" (the run above stops at a particle of two letters)
        Pattern(
            "capitals_particle_surname",
            rf"\b(?P<value>{_WORD}(?:[ ]{_WORD}){{0,3}}(?:[ ](?:{_SHORT_PARTICLE}|{_WORD})){{1,2}}[ ]{_WORD}(?:[ ]{_WORD})?){_END}",
            0.6,
        ),
        Pattern("capitals_surname_given", r"\b(?P<value>" + _WORD + r",[ ]" + _WORD + r")" + _END, 0.6),
        # an airline's form with its title: "SMITH/JOHN MR", "GONZALEZ/MARIA ELENA MRS" (without
        # one only as a form's value: "UNICODE/ANSI", "IEEE/ANSI" are pairs of terms)
        Pattern(
            "capitals_surname_slash_given",
            r"\b(?P<value>" + _WORD + r"/" + _WORD + r"(?:[ ]" + _WORD + r")?)[ ]" + _TITLES + _END,
            0.6,
        ),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._given = given_names(2) - NOT_GIVEN_NAMES - AMBIGUOUS_GIVEN_NAMES
        # a hyphenated given name the gazetteer lists whole is one, whatever its halves are
        # ("JEAN-LUC": "Jean" is a word too)
        self._hyphenated = frozenset(n for n in given_names(1) if "-" in n)
        self._commonest = given_names(_COMMONEST_GIVEN) - AMBIGUOUS_GIVEN_NAMES - WEAK_GIVEN_NAMES
        self.refine_span = lru_cache(maxsize=4096)(self._refine)

    def _given_name(self, word: str) -> bool:
        w = word.lower()
        if w in self._hyphenated:
            return True
        return w.split("-")[0] in self._given and w not in WEAK_GIVEN_NAMES and w not in _NOT_IN_CAPITALS

    def _surname(self, word: str, given: str, particle: str = "") -> bool:
        """A census surname of the first 20,000 that is no ordinary word, and an English one only
        when it is common ("SMITH", "BROWN"; "CORE", "CLOSE" are code's words: "PIL CORE",
        "CLOSE, PING"). As a form's value after a strong given name (``LENIENT``) also a rarer
        census surname and a word of no list here shaped as a surname ("PAULA KLEMT", "ROBERT
        PRUVOST": the census is American, its German and French surnames few). After a
        surname's ``particle`` (its first word, lower case) any census surname that is no word
        nor a place's noun ("JUAN CARLOS DE LOS SANTOS"), and as a form's value after Dutch and
        German particles, which are no preposition of the Romance languages, also a word shaped
        as a surname ("Name: MART VAN BERKEL", "ELISABETH VAN DER ZWAAN")."""
        last = word.split("-")[-1]
        if is_common(last):
            return False
        if is_surname(word, _SURNAME_RANK):
            # the entry itself, not a plural's singular: "DAVIES" is no plural of "davy"
            return not is_entry(last) or is_surname(word, _WORD_SURNAME_RANK)
        if particle:
            # after "DO", "DE LOS" only the census vouches: the words after them name places and
            # institutions as often ("CONCEICAO DO ARAGUAIA", "LIGA DE LAS NACIONES")
            if is_entry(last) or last.lower() in PLACE_WORDS_AFTER_PARTICLE:
                return False
            if is_surname(word):
                return True
            if not (self.LENIENT and particle in _GERMANIC_PARTICLES) or vietnamese_syllable(given):
                return False  # "NGUYEN VAN AN": Vietnamese "Van" is a middle name
            return last.lower() not in NOT_SURNAMES and last.lower() not in self._given and name_shaped(last)
        if not (self.LENIENT and self._strong_given(given)) or is_entry(last):
            return False
        if vietnamese_syllable(given) and vietnamese_syllable(last):
            return False  # Vietnamese ("TRUONG DAI HOC", "PHAN TICH DU LIEU"): .people_vietnamese reads its names
        if is_surname(word):
            return True
        w = last.lower()
        return w not in NOT_SURNAMES and w not in self._given and name_shaped(last)

    def _strong_given(self, given: str) -> bool:
        """A given name that can vouch for a surname of no list: four letters or more and no
        English word ("GERALD", "HEIDELORE"; not "ALTER", "DONE", "JIT", "PIL"), or one of the
        commonest names anywhere that the dictionary lists as a name ("MARIA", "JAMES", "PETER";
        not "PING", "LONG", "YOUNG", which are words first)."""
        first = given.split("-")[0].lower()
        if len(first) < 4:
            return False
        return not is_english_word(first) or (len(first) >= 5 and first in self._commonest and is_proper_noun(first))

    @staticmethod
    def _pair_holds(given: str, surname: str) -> bool:
        """Two words a heading or a label reads as well: both English words ("JET BLACK", "EDIT
        FIELDS", "GRACE CHURCH", "SILVER FOX") or both of the spelling alphabet ("CHARLIE
        ROMEO") are no name."""
        if is_entry(given.split("-")[0]) and is_entry(surname.split("-")[-1]):
            return False
        return not (given.lower() in _SPELLING_ALPHABET and surname.lower() in _SPELLING_ALPHABET)

    def _refine(self, text: str) -> tuple[int, int] | None:
        """The first name inside the run: a given name, at most three middle names or initials,
        a surname's particles or none, and a surname, the longest such ("HANS PETER BECKER", not
        "HANS PETER"; "MARIA EUGENIA VIRGINIA DEL VALLE"), with a second surname beside particles
        (:meth:`_second_surname`); the list form; the airline's. As a form's value (``LENIENT``)
        also a surname before a strong given name ("GONZALEZ MARIA", as a passport's name line
        reads). None when there is none."""
        if "," in text:
            surname, given = (w.strip() for w in text.split(","))
            ok = self._given_name(given) and self._surname(surname, given) and self._pair_holds(given, surname)
            return (0, len(text)) if ok else None
        if "/" in text:
            surname, rest = text.split("/", 1)
            given, *middle = rest.split(" ")
            if not (self._given_name(given) and self._surname(surname, given) and self._pair_holds(given, surname)):
                return None
            # a middle name is kept; a title's word after the name is not ("SMITH/JOHN MRS")
            return 0, len(text) if middle and self._given_name(middle[0]) else len(surname) + 1 + len(given)
        words = [(m.start(), m.end(), m.group()) for m in _WORDS.finditer(text)]
        for i, (start, _, first) in enumerate(words):
            if not self._given_name(first) or (first.lower() in _PARTICLES and len(first) <= 3):
                continue  # "DA", "DEL" are given names too, and particles first ("DELLA REESE" is a name)
            if i > 0 and words[i - 1][2].lower() in _PLACE_PREFIXES:
                continue  # a saint's town: "SAO JOSE DOS CAMPOS", "SAN CRISTOBAL DE LAS CASAS"
            found = None
            for j in range(i + 1, min(i + 6, len(words))):
                middle = [w for _, _, w in words[i + 1 : j]]
                # one or two particles may stand right before the surname ("JEAN DE LA FONTAINE")
                k = len(middle) - _trailing_particles(middle)
                if k > 3 or not all(self._given_name(w) or (len(w) == 2 and w.endswith(".")) for w in middle[:k]):
                    if all(w.lower() in _PARTICLES or self._given_name(w) for w in middle):
                        continue  # "JUAN DEL ...": "DEL" a given name or a particle
                    break
                last = words[j][2]
                if last.lower() in _PARTICLES or last.lower() in ("los", "las"):
                    continue  # "SANTIAGO DE LOS": the surname is still to come
                particle = middle[k].lower() if k < len(middle) else ""
                if self._surname(last, first, particle=particle) and self._pair_holds(first, last):
                    found = (start, self._second_surname(words, j, first, bool(particle)))
            if found is not None:
                return found
        if self.LENIENT and len(words) == 2 and self._surname_first(words[0][2], words[1][2]):
            return 0, len(text)
        return None

    def _second_surname(self, words: list[tuple[int, int, str]], j: int, first: str, particle: bool) -> int:
        """Where a name whose surname is word ``j`` ends: a second surname after particles is
        taken along ("MARIA GONZALEZ DE LA CRUZ"), as Spanish and Portuguese names write both
        parents'; so is one right after a first surname that followed particles ("LUIS CARLOS DE
        LA GARZA PUENTE"). Otherwise the word after a surname is a place as often ("JOHN SMITH
        DALLAS TX"): the name ends at the surname."""
        n = _leading_particles([w for _, _, w in words[j + 1 : j + 3]])
        k = j + 1 + n
        if (
            k < len(words)
            and (n or particle)
            and self._surname(words[k][2], first, particle=words[j + 1][2].lower() if n else "")
        ):
            return words[k][1]
        return words[j][1]

    def _surname_first(self, surname: str, given: str) -> bool:
        """Two words alone, a census surname of the first 20,000 that is no English word and no
        place's first word before a strong given name: "GONZALEZ MARIA". A word first is a
        product's or a heading's ("BLACK SAKURA" on a receipt), and "SANTA CLARA" a town, so
        "SMITH JOHN" is left to the forms with a comma or a slash."""
        if not (self._given_name(given) and self._strong_given(given)) or is_common(surname):
            return False
        if surname.lower() in _PLACE_PREFIXES or is_entry(surname):
            return False
        return is_surname(surname, _SURNAME_RANK) and self._pair_holds(given, surname)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Besides code, placeholders and places: the list form inside an enumeration ("COLORS:
        BLACK, SILVER, GOLD") is no "SURNAME, GIVEN"."""
        if "," in text[start:end] and (_MORE_AFTER.match(text, end) or _MORE_BEFORE.search(text, 0, start)):
            return True
        return super().reject_at(text, start, end)


class CapitalsFieldPersonRecognizer(CapitalsPersonRecognizer):
    """A name in capitals that is the whole value of a form's field for a person ("NAME OF
    HOLDER: PAULA KLEMT", "Passenger: GONZALEZ MARIA", "Payee: BOHNBACH, HEIDELORE, net 30",
    "Passenger: KLEMT/PAULA"): the label names a person's role (:data:`_PERSON_LABELS`), the value
    runs to the line's or the cell's end. There the rarer readings hold: any census surname or a
    surname-shaped word after a strong given name, the surname first, the airline's form without
    its title. Elsewhere the same words are a phrase, a product or a place as often: in running
    capitals ("PASTA ALLA CARBONARA", "BERT ONNX EXPORT") and in other fields ("HORARIO: DOMINGO
    CERRADO", "VEHICLE: MERCEDES ACTROS", "ENTIDAD: CRUZ ROJA", "ENCODING: UNICODE/ANSI")."""

    LENIENT = True
    _NAME = (
        r"(?:" + _WORD + r"(?:[ ](?:" + _INITIAL + "|" + _SHORT_PARTICLE + "|" + _WORD + r")){1,5}"
        r"|" + _WORD + r",[ ]" + _WORD + r"|" + _WORD + r"/" + _WORD + r"(?:[ ]" + _WORD + r")?)"
    )
    PATTERNS = [Pattern("capitals_field_value", r":[ ]*(?P<value>" + _NAME + r")[ ]*(?:$|[,;|\t\r])", 0.6)]

    def __init__(self, strict: CapitalsPersonRecognizer) -> None:
        super().__init__()
        self._strict = strict  # the registry's own: one cache of its verdicts

    def _refine(self, text: str) -> tuple[int, int] | None:
        """The whole value, when only a form's place makes it a name (what the strict reading
        finds is :class:`CapitalsPersonRecognizer`'s, counted once)."""
        span = super()._refine(text)
        if span != (0, len(text)):
            return None
        if "/" in text:
            # the strict pattern takes the airline's form only with a title, never inside this
            # value; without one a surname that is a given name too is a pair of terms as often
            # ("BERT/ROBERTA", "ORIN/XAVIER")
            return None if text.split("/", 1)[0].lower() in self._given else span
        return None if self._strict.refine_span(text) is not None else span

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Besides the strict reading's checks: a label that names no person's role."""
        return not _person_label(text, start) or super().reject_at(text, start, end)


# the last word of a form's label for a person ("Name of holder", "Passenger", "Payee", "Approved
# by", "Nom du titulaire", "Kontoinhaber" …), folded as the scanner sees text
_PERSON_LABELS = frozenset(
    """name names surname surnames forename forenames firstname lastname holder cardholder passenger
    passengers traveller traveler guest payee payer beneficiary employee applicant patient customer
    client contact recipient attn attention addressee signatory witness driver owner tenant buyer
    seller student member author by person insured policyholder claimant debtor creditor consignee
    shipper nom prenom prenoms titulaire beneficiaire passager voyageur salarie employe destinataire
    expediteur locataire proprietaire conducteur vorname vornamen nachname familienname inhaber
    kontoinhaber karteninhaber empfanger empfaenger auftraggeber mitarbeiter mitarbeiterin fahrer
    kunde kundin ansprechpartner ansprechpartnerin reisender reisende patientin mieter""".split()
)
_LABEL_BEFORE = re.compile(r"([A-Za-z]+)[ ]*(?:\([^)]{0,20}\))?[ ]*:[ ]*\Z")


def _person_label(text: str, start: int) -> bool:
    """Whether the label right before ``start`` (its colon, on the same line) ends in a word that
    names a person's role."""
    m = _LABEL_BEFORE.search(text, max(0, start - 48), start)
    return m is not None and m.group(1).lower() in _PERSON_LABELS


def capitals_recognizers() -> list[CapitalsPersonRecognizer]:
    strict = CapitalsPersonRecognizer()
    return [strict, CapitalsFieldPersonRecognizer(strict)]
