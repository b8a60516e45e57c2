"""Person names without a name list, in English, German and French (``PERSON``).

Three shapes, each a pattern and a check (no statistical model: the scan must stay in the
microseconds per kilobyte, and nothing may be downloaded):

* a given name from the gazetteer (:mod:`._given_names`) followed by one or two capitalised
  words or an upper-case surname: "Maria Gonzalez", "Jean-Luc Picard", "Hans-Peter MÜLLER",
  "Anna von Berg"; and the list form "Gonzalez, Maria"; a given name that is a word too
  ("Amber", "Dawn", "Max": ``WEAK_GIVEN_NAMES``) only right before a common census surname that
  is no word (:mod:`._surnames`): "Dawn Brennan", "Max Müller", not "Max Price";
* a title or honorific and any capitalised words: "Dr. Okonkwo", "Frau Wiśniewska",
  "Mme Lefèvre", "Prof. Dr. Kai Brandt";
* a role or greeting word and any capitalised words: "approved by T. Nakamura", "erstellt von
  Jonas Albrecht", "rédigé par Élodie Marchand", "Dear Ms Quist", "Sehr geehrter Herr Yilmaz".

A particle is part of a name, capitalised too before a word of a name ("Lou-Ann Le Borgne",
"M. Aymane Le Bris"); after a title or sign-off a gazetteer given name takes a census surname
that is a month or word too ("Dr Emy Noel", "Jordan April"). Running text without any of these
is :mod:`.people_prose`'s. Only the name is reported (titles and role words stay). A word from :mod:`._vocabulary`
(months, sentence openers, business nouns, places) ends or cancels a candidate, so headings
("Quality Review Board") and prose ("May Report") stay as they are. Listed names remain the way
to make known people certain (``employee_lists``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from .addresses import COUNTER_WORDS, counter_before
from ._code import in_code_position, spelt_in_code
from ._english_words import is_english_word, is_proper_noun
from ._eponyms import eponym_after, names_an_object
from ._german_nouns import is_feminine_noun
from ._given_names import added_given_names, given_names
from ._places import inside_place_name
from ._surname_shape import code_word
from ._surnames import is_plain_surname, is_surname
from ._vocabulary import (
    _MONTHS_DAYS,
    _NOT_GIVEN,
    AMBIGUOUS_GIVEN_NAMES,
    NOT_GIVEN_NAMES,
    NOT_SURNAMES,
    SURNAME_WORDS,
    WEAK_GIVEN_NAMES,
    is_common,
)

__all__ = ["GivenNamePersonRecognizer", "TitledPersonRecognizer", "person_recognizers"]

# text is normalised first: accents folded to ASCII; ß and other scripts' letters stay
_CAP = r"(?:Mc|Mac|O['’]|D['’])?[A-Z][a-zß]+(?:['’][A-Z]?[a-zß]+)?(?:-[A-Z][a-zß]+)?"  # McLean, O'Neill
_UPPER = r"[A-Z]{2,}(?:-[A-Z]{2,})?"
# Spanish "los" / "las" only after "de" ("Juan Carlos de los Santos"; "Las Vegas" is a city)
_PARTICLE = (
    r"(?:(?:de[ ]+l[ao]s|von|van|de|du|des|der|den|da|do|dos|di|del|della|le|la|zu|ten|ter|af|al|el|bin|ibn)[ ]+)"
)
_INITIAL = r"[A-Z]\."
# the end of a name: RE2's \b is ASCII, so it would fall inside "Spieß" and "Weiß"
_END = r"(?:$|[^A-Za-zß0-9_])"
# the same particles in capitals, before a surname in capitals: "Maria DE SOUSA", "Jean DE LA
# FONTAINE", "Lars VAN DER BERG" (a surname of capitals alone ends the name: "Maria DE")
_UPPER_PARTICLE = r"(?:(?:DE[ ]+L[AO]S|VON|VAN|DE|DU|DES|DER|DEN|DA|DOS|DI|DEL|DELLA|LE|LA|ZU|TEN|TER)[ ]+)"
_SURNAME = f"(?:{_UPPER_PARTICLE}{{1,2}}{_UPPER}|{_PARTICLE}{{0,2}}(?:{_CAP}|{_UPPER}))"
# up to five words: a capitalised noun or two may come first ("Die Mitarbeiterin Leonie Hoffmann"),
# and the check finds where the name starts
# (a middle initial with its full stop or without: "Maria E. Lopez", "Maria E Lopez" of an export)
_LEAD = f"{_CAP}(?:[ ]{{1,2}}(?:{_INITIAL}|[A-Z]|{_CAP})){{0,3}}[ ]{{1,2}}"  # not across column gaps
_NAME = f"(?:{_LEAD}{_SURNAME})"
# A particle is a preposition as often ("Die Reklamation von Leonie Hoffmann", "Demande de Claire
# Martin"): there ``_NAME`` ends at the given name after it. This reading takes the one or two
# words after that along, where the capitalised run ends with them; a longer run is read by
# ``_NAME`` alone, word by word ("Association des Centres Distributeurs Edouard Leclerc").
_AFTER_PARTICLE = (
    f"(?:{_LEAD}{_PARTICLE}{{1,2}}(?:{_CAP}|{_UPPER})(?:[ ]{{1,2}}{_PARTICLE}{{0,2}}(?:{_CAP}|{_UPPER})){{1,2}})"
)
# the end of a capitalised run: no further capitalised word
_RUN_END = r"(?:$|[^A-Za-zß0-9_ ]|[ ]{1,2}(?:$|[^A-Z ]))"

_TITLES = (
    r"Mr|Mrs|Ms|Mx|Miss|Mister|Dr|Prof|Sir|Dame|Herr|Herrn|Frau|Hr|Fr|Mme|Mlle|Monsieur|Madame|"
    r"Mademoiselle|Me|Pr|Dipl\.-Ing|Ing"
)
_TITLE = f"(?:(?:{_TITLES})\\.?[ ]+(?:(?:Dr|Prof)\\.?[ ]+)*)"
_ANY_NAME = f"(?:(?:{_INITIAL}[ ]*|{_CAP}[ ]+){{0,2}}{_SURNAME})"

_ROLES = (
    r"(?i:approved|signed|prepared|reviewed|verified|checked|authored|written|reported|raised|"
    r"submitted|requested|assigned|owned|escalated|confirmed|released|opened|closed)[ ]+(?i:by)|"
    r"(?i:erstellt|gepruft|freigegeben|genehmigt|unterschrieben|gemeldet|verfasst|bearbeitet)[ ]+(?i:von|durch)|"
    r"(?i:redige|approuve|verifie|signe|etabli|valide|rapporte|emis|ouvert)e?[ ]+(?i:par)|"
    r"(?i:contact|contact person|owner|assignee|author|auditor|inspector|reporter|requester|"
    r"ansprechpartner|ansprechpartnerin|verantwortlich|verantwortliche|pruferin|prufer|auditorin|"
    r"interlocuteur|interlocutrice|responsable|auditeur|auditrice|redacteur|redactrice)[ ]*:|"
    # a greeting is a word of its own: "HI" + "STORY" in "HISTORY" is none, nor "hi" + "de X" in "hide X"
    r"(?i:dear|hello|hi|liebe|lieber|hallo|bonjour|cher|chere|sehr geehrte|sehr geehrter)\b|"
    r"(?im:^(?:from|to|cc|von|an|de|a)[ ]*:)"
)
# a sign-off, then the name on the next line (normalised text keeps ß: "Grüßen" is "Grußen")
_SIGN_OFF = (
    r"(?i:best regards|kind regards|regards|sincerely|cheers|thanks|mit freundlichen gru(?:ss|ß)en|"
    r"viele gru(?:ss|ß)e|beste gru(?:ss|ß)e|gru(?:ss|ß)|cordialement|bien cordialement|salutations|bien a vous)"
    r"[ ]*,?[ ]*\r?\n[ \t]*"
)


_WORDS = re.compile(r"[A-Za-zß]+(?:['’-][A-Za-zß]+)*\.?")


_PARTICLES = frozenset(
    "von van de du des der den da do dos di dei degli del della delle los las le la zu ten ter af al el bin ibn".split()
)
# a particle that may open a surname written capitalised ("Marco Di Stefano"); "Las", "Los" open
# a city's name ("Ana Jaimes Las Vegas")
_OPENING_PARTICLES = _PARTICLES - {"los", "las"}


def _until_common(text: str, nouns: bool = False, objects: bool = False, given_first: bool = False) -> int:
    """Where the name in ``text`` ends: before its first ordinary word ("Maria Gonzalez Review"
    -> "Maria Gonzalez"); 0 when it starts with one. A lower-case particle before a capitalised
    word is part of the name ("Anna von Berg"), and so is a capitalised one before a word of a
    name ("Lou-Ann Le Borgne", "Marco Di Stefano", "Eva Van Dyke"). ``nouns``: after the first
    word, a title's noun (:func:`title_noun`) ends it too ("Sage Handbook" -> "Sage"; "Anthony
    Baker" stays whole). ``objects``: an eponym's object right after the first word ends it
    (:func:`._eponyms.names_an_object`: "Lucas Theorem" -> "Lucas"). A place's noun after the
    first word makes it a place: 0 ("Solomon Islands"), unless a surname comes before the noun
    ("Anna Kowalski Region Lead": the name ends there). ``given_first``: the first word is a given
    name, and two particles after it may lead to the surname ("Ursula von der Leyen"; after a
    surname they lead to a department: "Frau Müller von der Buchhaltung"). Particles that are no
    common word stay in the name as any such word does ("Juan Pérez de la Cruz", "Sanne Jansen van
    der Meer")."""
    keep = 0
    words = list(_WORDS.finditer(text))
    for i, m in enumerate(words):
        w = m.group()
        after = words[i + 1].group() if i + 1 < len(words) else ""
        chain = given_first and _chain_names(words, i)
        if w == "do" and not _portuguese_surname(after):
            break  # English "do" ("Does Amanda do Yoga?"); Portuguese "do" before a surname ("Paulo do Carmo")
        if keep and w in _PARTICLES and (after[:1].isupper() or chain):
            continue  # "Anna von Berg", "Ursula von der Leyen"
        if (
            keep
            and w.lower() in _OPENING_PARTICLES
            and after[:1].isupper()
            # "VON DER LEYEN": a particle before another; "der" is a common word alone
            and (not is_common(after) or chain)
        ):
            continue
        if keep and w.lower() in _PLACE_NOUNS and title_noun(w):
            # the words before name a place ("Lao People's Democratic Republic", "Mariana
            # Islands") unless a surname stands among them: "Anna Kowalski Region Lead" ends
            # the name before the noun
            if any(is_surname(x.group()) and "'" not in x.group() for x in words[1:i]):
                break
            return 0
        if keep and (len(w) == 1 or (len(w) == 2 and w[1] == ".")) and w[0].isupper() and after[:1].isupper():
            # a middle initial, "A." and "I." too, which are words alone ("Maria A. Lopez"), and one
            # without its full stop ("Maria E Lopez"): part of the name once a name's word follows
            continue
        if is_common(w) or (nouns and keep and title_noun(w)):
            break
        if objects and i == 1 and names_an_object(w) and not is_surname(w):
            # "Lucas Theorem", "Dixon Resultant": after a given name alone, the object an
            # eponym names, as "Lucas theorem" says in lower case. After two names a capitalised
            # word may be a job or a product ("Karen Garcia Estimator"): the name keeps it
            break
        keep = m.end()
    return keep


# words after a particle that end places' names, not surnames ("Estrela do Norte", "Vila do Mar",
# "Santa Cruz de la Sierra")
PLACE_WORDS_AFTER_PARTICLE = frozenset(
    "norte sul sur leste oeste este mar rio lago lagos serra sierra ilha ilhas isla islas praia playa cabo vila villa".split()
)


def _portuguese_surname(word: str) -> bool:
    """The word after Portuguese "do": capitalised, no English word and no place's ("Carmo",
    "Amaral", "Nascimento"; not "Reviews", "Yoga": English "do"; not "Norte")."""
    return (
        word[:1].isupper()
        and not is_english_word(word)
        and not is_common(word)
        and word.lower() not in PLACE_WORDS_AFTER_PARTICLE
    )


# the endings of German and French nouns of a function or a department ("Buchhaltung",
# "Redaktion", "Geschäftsleitung", "Universität"), which no surname after "von der" has (in a
# word of seven letters or more: "Dion", "Marion" are names)
_DEPARTMENT_ENDINGS = ("ung", "ion", "heit", "keit", "schaft", "itat", "erei")


def _chain_names(words: list[re.Match[str]], i: int) -> bool:
    """Whether two particles at word ``i``, right after given names only, lead to a capitalised
    word that is no common one: "Ursula von der Leyen", "Hans VON DER LEYEN", "Jan-Willem van der
    Berg". German "von" and "der" are common words, so without this the name ends before them;
    after a surname they lead to where the person works ("Thomas Hell von den Stadtwerken"), and
    so they do to a department's noun after given names ("Sabine von der Buchhaltung")."""
    if i < 1 or len(words) < i + 3 or words[i].group().lower() not in _PARTICLES:
        return False
    if words[i + 1].group().lower() not in _PARTICLES:
        return False
    last = words[i + 2].group()
    if not last[:1].isupper() or is_common(last) or (len(last) >= 7 and last.lower().endswith(_DEPARTMENT_ENDINGS)):
        return False
    known = given_names(1)
    # the text is folded already; each half of "Jan-Willem" is a given name
    return all(
        (g := w.group().lower()) not in _PARTICLES and all(part in known for part in g.split("-")) for w in words[:i]
    )


def _title_case(given: str) -> bool:
    """A given name written as one, each part of a hyphenated one too: "Evamaria", "Ernst-Dieter";
    not "McKinsey", "DevOps"."""
    return all(p[:1].isupper() and p[1:].islower() for p in given.split("-"))


def _upper_surname(word: str) -> bool:
    """A surname in capitals that the census spells, in each part of a hyphenated one
    ("DUPONT-MORETTI"), and no ordinary word here unless among its commonest ("MARTIN",
    "LAMBERT"; not "DOWN", "CASE", "SIZE")."""
    return all(
        len(p) >= 3
        and is_surname(p)
        and not is_common(p)
        and (not is_english_word(p) or is_surname(p, _UPPER_WORD_SURNAME_RANK))
        for p in word.split("-")
    )


def title_noun(word: str) -> bool:
    """A capitalised English word that no census surname spells and no given name: the noun of a
    title or a term ("Handbook", "Resource", "Actors"). Rare surnames are words of the dictionary
    too ("Penfold", "Retter"): the census keeps them names."""
    w = word.rstrip(".")
    return (
        w[:1].isupper()
        and not w.isupper()
        and not is_surname(w)
        # a middle name that is a word too stays in the name ("Kadir Can Ozden", "Mary Rose Hill")
        and w.lower() not in given_names(1)
        and is_english_word(w)
    )


# the names documentation and forms use for nobody in particular ("John Doe", "Max Mustermann")
_PLACEHOLDER_NAMES = frozenset(
    """john doe|jane doe|richard roe|jane roe|joe bloggs|fred bloggs|joe schmoe|john q. public|
    max mustermann|erika mustermann|otto normalverbraucher|hans muster|jean dupont|marie dupont|
    monsieur dupont|madame dupont|john smith doe|nguyen van a|nguyen thi b|joe blow""".replace("\n", "").split("|")
)


def placeholder_name(value: str) -> bool:
    """One of the names used for nobody in particular, a middle initial or not ("John X. Doe")."""
    words = value.lower().split()
    if " ".join(words) in _PLACEHOLDER_NAMES:
        return True
    return len(words) == 3 and len(words[1].rstrip(".")) == 1 and f"{words[0]} {words[2]}" in _PLACEHOLDER_NAMES


# the nouns of places' names ("Mariana Islands", "Solomon Islands", "Ellice Islands"): the
# capitalised words before one name that place when no surname stands among them (other nouns of
# titles end a name only after a given name that is a word too: "Sage Handbook"); the ones a
# census surname spells ("Isles", "Coast", "Kingdom", "Bay") are no title's nouns
_PLACE_NOUNS = frozenset(
    """islands archipelago atoll mountains highlands lowlands plateau peninsula republic principality
    emirate emirates territory territories provinces region county district prefecture governorate
    desert straits gulf""".split()
)
_SALUTATIONS = frozenset(
    "welcome hello hi hey thanks thank cheers congratulations congrats sorry goodbye bye morning evening "
    "afternoon night greetings regards dear hallo danke willkommen bonjour merci salut bienvenue".split()
)
# a street named after a person: "1895 Preston White Drive", "12 rue Victor Hugo" (the address
# recognizer finds the address; the name in it is the street's, not a person's)
# in any case, as addresses are written in capitals too; no surname, no verb ("Lane", "Close",
# "Place" are both), and "Dr" is a title as often
_STREET_TYPES = frozenset("street avenue boulevard drive parkway highway road st ave blvd rd pkwy hwy".split())
# the rest of a street's name after a person's name in it: more capitalised words, a suffix
# ("1400 Martin Luther King Jr Blvd"), up to the street's type
_WORDS_AFTER = re.compile(r"[ ]+([A-Za-z]+)")
_SAINT_AFTER = re.compile(r"\.?[ ]+[A-Z][a-z]")
_COUNTER_BEFORE = counter_before(COUNTER_WORDS)
# a house number: digits (and a letter), not after what ends an id's label or a list's item
_NUMBER_BEFORE = re.compile(r"\b[0-9]{1,5}[A-Za-z]?[ ]+\Z")
_NOT_BEFORE_A_HOUSE_NUMBER = frozenset(",.:#/-")
_STREET_BEFORE = re.compile(
    r"\b[0-9]{1,4}(?:[ ]?(?:bis|ter))?,?[ ]+(?:rue|avenue|boulevard|allée|allee|quai|chemin|impasse)[ ]+\Z"
)
# a given name after these is part of a place or a team ("Los Angeles Kings", "New York Bulls")
_PLACE_PREFIXES = frozenset("los las new san santa santo sao saint sainte st fort port mount lake el".split())
# the first words of places of two words ("Hong Kong", "Sri Lanka", "Porto Rico", "Mont Blanc",
# "Costa Rica", "Sierra Leone", "Burkina Faso", "Nouvelle Aquitaine")
_PLACE_FIRST = frozenset(
    "hong sri costa puerto porto mont monte sierra buenos rio cap cape burkina sao nouvelle nueva papouasie "
    "arabie cote coree terre ile iles val vallee lac bois pays haute haut basse bas grande grand".split()
)
_UMLAUT_SPELLING = re.compile(r"([uoa])e")
_DERIVED = ("ing", "ed", "ly", "tion", "ment", "ness", "able", "ible", "ity", "ive", "ize", "ise", "ful", "less")
_WEAK_SURNAME_RANK = 10_000
_VOWELS = frozenset("AEIOUY")
# an ordinary word in capitals after a given name that is a word too is a surname only this common
# in the census ("Guy MARTIN" 16, "Victor LAMBERT" 292; "Mark CASE" 813, "Max FREE" 2,951 are none)
_UPPER_WORD_SURNAME_RANK = 500
# after a given name of the gazetteer's second source, a surname this common in the census
# (Mensah, Patel, Okafor: ranks 9,000 and up are "Mall", "Market", "Stars" as often)
_ADDED_VOUCHED_RANK = 10_000
# endings of English abstract nouns ("Approximation", "Connectivity"), which census surnames
# have only as listed names (Garrity, Clement, Harkness)
_ABSTRACT_NOUN = ("tion", "tions", "ity", "ities", "ment", "ments", "ness", "ism", "ics", "ogy")
# a journal's abbreviated title after a list-form candidate: "Random Graphs, Ann. Math. Stat."
_ABBREVIATION_AFTER = re.compile(r"\.[ ]?[A-Z][a-z]{1,5}\.")
_RAISED_BY_CODE = re.compile(
    r"(?i:\b(?:exceptions?|errors?|warnings?|signals?|interrupts?)\b[^.\n]{0,50}\braised[ ]+by)[ ]*\Z"
)
_MONTH_WORDS = frozenset(_MONTHS_DAYS.split())
_TITLE_ALONE = re.compile(r"(?:" + _TITLES + r")\.?")
_ENUMERATION_AFTER = re.compile(r"[ ]*(?:,|(?:and|or|und|oder|et|ou)[ ])")


@lru_cache(maxsize=1)
def word_given_names() -> frozenset[str]:
    """Gazetteer given names that are ordinary words too ("Max", "Georgia", "June", "Jan" of
    January): a name only where the layout or a title says a person stands ("Frau Georgia
    Kralert", "Hi Max,"), never from the word alone. Not the gazetteer's accidental words
    ("The", "You", "In": names in other scripts' transcriptions)."""
    months = _MONTHS_DAYS.split()
    words = set(_NOT_GIVEN.split()) | set(months) | {m[:3] for m in months} | WEAK_GIVEN_NAMES | AMBIGUOUS_GIVEN_NAMES
    return frozenset(words) & given_names(1)


def _street_name(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` names a street: a house number right before it and a street's
    type as its last word or after it, past the rest of the street's name ("1895 Preston White
    Drive", "1400 MARTIN LUTHER KING JR BLVD"), or a house number and a
    French street's type before it ("12 rue Victor Hugo"). Only types that are no surname and no
    verb count ("Diane Lane", "Glenn Close", "place Maria on the list" stay people)."""
    before = text[max(0, start - 24) : start]
    if before[-1:] != " ":
        return False
    if _STREET_BEFORE.search(before) is not None:
        return True
    number = before.rstrip(" ")  # "1895 ", "12a "
    m = _NUMBER_BEFORE.search(before) if number[-1:].isdigit() or number[-2:-1].isdigit() else None
    if m is None or before[: m.start()].rstrip(" ")[-1:] in _NOT_BEFORE_A_HOUSE_NUMBER:
        return False  # no number, or an id's ("ID: 4711", "ticket #4711", "10442, ")
    number_at = max(0, start - 24) + m.start()
    if _COUNTER_BEFORE.search(text, max(0, number_at - 12), number_at):
        return False  # the number counts something else: "Chapter 3 Maria Gonzalez road trip"
    word = text[start:end].rsplit(None, 1)[-1]
    if _street_type(text, end - len(word), end):
        return True
    pos = end
    for _ in range(3):
        if text[pos : pos + 1] == "." and len(word) <= 3:
            pos += 1  # an abbreviation's point ("Jr. Blvd"), not a sentence's end
        after = _WORDS_AFTER.match(text, pos)
        if after is None:
            return False
        word = after.group(1)
        if _street_type(text, after.start(1), after.end(1)):
            return True
        if not word[:1].isupper():
            return False
        pos = after.end()
    return False


def _street_type(text: str, start: int, end: int) -> bool:
    """A street's type, capitalised ("Drive", "BLVD"; a lower-case "road trip" is none), and no
    "St" before a capitalised word ("St Thomas Hospital": a saint's)."""
    word = text[start:end]
    if not word[:1].isupper() or word.lower() not in _STREET_TYPES:
        return False
    return not (word.lower() == "st" and _SAINT_AFTER.match(text, end))


class _NameRecognizer(TiersPatternRecognizer):
    # a place's name read as a person's is dropped (:mod:`._places`); a title says a person stands
    PLACES_VETO = True

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Code in the place of a name (:mod:`._code`), a placeholder name, an eponym before
        what science names after it ("the Kampe de Feriet function": :mod:`._eponyms`), or a
        country's, region's, currency's, language's or script's name ("Viet Nam", "Ben Arous":
        :mod:`._places`)."""
        value = text[start:end]
        return (
            placeholder_name(value)
            or ("," not in value and eponym_after(text, end))  # "Vazirani, Vijay Approximation …" cites
            or in_code_position(text, start, end)
            or spelt_in_code(text, start, end)
            or _street_name(text, start, end)
            or (self.PLACES_VETO and inside_place_name(text, start, end))
            or _CHARACTER_NAME_BEFORE.search(text, max(0, start - 24), start) is not None
            or _weekday_header(text, start, end)
            or _than_after_comparative(text, start)
        )


# the days of a calendar's header, abbreviated ("Mo Tu We Th Fr Sa Su", "Mon Tue Wed …"): "Fr" is
# a priest's title and "Sa Su" a name of the shape Korean names have, in a row of days neither
_WEEKDAYS = frozenset("mo tu we th fr sa su mon tue wed thu fri sat sun".split())
_WORD_BEFORE = re.compile(r"([A-Za-z]+)[ \t]+\Z")
_WORD_AFTER = re.compile(r"[ \t]+([A-Za-z]+)")


def _weekday_header(text: str, start: int, end: int) -> bool:
    """Whether the candidate is days of a calendar's header: every word a day's abbreviation, and
    so is the word before or after it ("Sa Su" alone may still be somebody)."""
    words = text[start:end].split()
    if not words or any(w.lower() not in _WEEKDAYS for w in words):
        return False
    before = _WORD_BEFORE.search(text, max(0, start - 12), start)
    after = _WORD_AFTER.match(text, end)
    return (before is not None and before[1].lower() in _WEEKDAYS) or (
        after is not None and after[1].lower() in _WEEKDAYS
    )


# what "than" follows as a conjunction ("Test Using Larger Than Block-Size Key"); "Than" is a
# Burmese given name too ("Than Shwe"), after anything else
_COMPARATIVES = frozenset(
    """more less rather other larger smaller greater bigger longer shorter higher lower older newer wider
    narrower faster slower earlier later fewer better worse stronger weaker heavier lighter deeper""".split()
)


def _than_after_comparative(text: str, start: int) -> bool:
    if text[start : start + 5].lower() != "than ":
        return False
    before = _WORD_BEFORE.search(text, max(0, start - 16), start)
    return before is not None and before[1].lower() in _COMPARATIVES


# a character's Unicode name, as codec tables and tests write it ("THAI CHARACTER CHO CHAN",
# "HANGUL SYLLABLE KIM", "(Thai Character Ko Kai)"): the words after it name a glyph
_CHARACTER_NAME_BEFORE = re.compile(r"(?:\b(?:CHARACTER|SYLLABLE|IDEOGRAPH|LIGATURE)|[A-Z][a-z]+[ ]Character)[ ]+\Z")


class GivenNamePersonRecognizer(_NameRecognizer):
    """A gazetteer given name and a surname ("Maria Gonzalez"), or the list form ("Gonzalez,
    Maria")."""

    ENTITY = "PERSON"
    PATTERNS = [
        Pattern("given_surname", r"\b(?P<value>" + _NAME + r")" + _END, 0.6),
        Pattern("given_surname_after_particle", r"\b(?P<value>" + _AFTER_PARTICLE + r")" + _RUN_END, 0.6),
        Pattern("surname_comma_given", r"\b(?P<value>" + _CAP + r",[ ]?" + _CAP + r")" + _END, 0.6),
    ]

    def __init__(self, min_frequency: int = 1) -> None:
        super().__init__()
        self._given = given_names(min_frequency) - NOT_GIVEN_NAMES
        # before an upper-case surname a rare given name is too weak: "Revert MOVING", "Save ACL"
        # in code comments; "Jean DUPONT" has a common one
        self._common_given = given_names(max(min_frequency, 2)) - NOT_GIVEN_NAMES
        # the halves of a hyphenated given name may be words alone ("Jan", a month's
        # abbreviation, in "Jan-Peter"); joined to a given name that is none they are a name
        self._any_given = given_names(min_frequency)
        self._added = added_given_names()
        # capitalised runs recur (headings, the same people); a lookup is ≈ 10x a check
        self.refine_span = lru_cache(maxsize=16384)(self._refine)
        is_english_word("")  # read the dictionary while the classifier is built, not on a request

    def _is_given(self, word: str) -> bool:
        w = word.lower()
        if w in self._given or w.split("-")[0] in self._given or w in AMBIGUOUS_GIVEN_NAMES:
            return True
        halves = w.split("-")
        if len(halves) == 2 and halves[0] in self._any_given and halves[1] in self._given:
            return True
        # German names spelt without umlauts ("Juergen", "Joerg", "Baerbel"): the gazetteer has
        # them folded ("jurgen"), as the normaliser folds "Jürgen"
        return ("ue" in w or "oe" in w or "ae" in w) and _UMLAUT_SPELLING.sub(r"\1", w) in self._given

    def _refine(self, text: str) -> tuple[int, int] | None:
        """The name in a candidate: from its first given name that a surname follows, up to
        an ordinary word; None when there is none."""
        if not any(self._is_given(w.rstrip(".,")) or w.lower() in WEAK_GIVEN_NAMES for w in text.split()):
            return None  # most candidates: capitalised words without a given name
        words = _WORDS.findall(text)
        if "," in text:  # the list form: the given name comes last ("Certainly, Jane" is none)
            if len(words) == 2 and words[0].lower() in _SALUTATIONS and self._is_given(words[1]):
                # "Welcome, John", "Hey, Samuel": a greeting before the comma, no surname; the
                # given name after it is the one greeted
                return text.rindex(words[1]), len(text)
            if (
                len(words) == 2
                and self._is_given(words[1])
                and not any(map(is_common, words))
                and not words[0].lower().endswith(_DERIVED)
                # "Conference, George", "Proceedings, Anna": a title's noun is no surname (the
                # census spells every surname the dictionary has that is one: "Penfold, Sarah")
                and not title_noun(words[0])
                and self._listed_surname_holds(words[0], words[1])
                and self._added_vouches(words[1], words[0])
            ):
                return 0, len(text)
            return None
        # the name may start after a capitalised noun the pattern took along ("Mitarbeiterin
        # Leonie Hoffmann", "Kunde Jonas Brandt")
        previous = ""
        for m in _WORDS.finditer(text):
            word = m.group().rstrip(".")
            if previous.lower() in _PLACE_PREFIXES:
                pass
            elif word.lower() in WEAK_GIVEN_NAMES and not self._is_given(word):
                # "Amber", "Dawn", "Max": a name only before a census surname that is no word
                # ("Dawn Brennan", "Max Muller"; not "Max Price", "Amber Alert", "Chelsea Flower")
                after = _WORDS.match(text, m.end() + 1)
                if after is not None and after.start() == m.end() + 1 and self._weak_surname(after.group()):
                    return m.start(), after.end()
            elif word[:1].isupper() and self._is_given(word) and word.lower() not in _PLACE_FIRST:
                # a particle starts no name, though some are given names too ("Di", "Van"):
                # "Faa di Bruno's formula" has none
                # a title's noun ends a name only after a given name that is a word too ("Sage
                # Handbook", "Free Lattices", "Ray Actors"): "Marie Curie", "Georg Ohm" stay names
                rest, nouns = text[m.start() :], is_english_word(word)
                longest = _until_common(rest, nouns=nouns, objects=True, given_first=True)
                for end in (longest, None):
                    if end is None:
                        # particles after given names may lead to a department as well ("Leonie
                        # Vries von den Redaktion", "Vries" a given name too): the name before them
                        end = _until_common(rest, nouns=nouns, objects=True)
                        if end == longest:
                            break
                    keep = m.start() + end
                    name = _WORDS.findall(text[m.start() : keep])
                    # after a given name, or a given and a middle name ("Mary Rose"): a surname that
                    # is an ordinary word too ("Anthony Hill", "Mary Rose Hill"; the name ended before)
                    while len(name) == 1 or (len(name) == 2 and name[1].lower() in self._any_given):
                        after = _WORDS.match(text, keep + 1)
                        if after is None or after.group().lower() not in SURNAME_WORDS:
                            break
                        keep, name = after.end(), [*name, after.group()]
                    if len(name) >= 2 and self._surname_holds(word, name[-1], name[1:-1]):
                        return m.start(), keep
            previous = word
        return None

    @staticmethod
    def _listed_surname_holds(surname: str, given: str) -> bool:
        """In the list form only the given name after the comma vouches for the word before it.
        A given name that is a word too (``Ray``, ``Mark``) or of three letters at most (``Mat``,
        ``Sy``) vouches for a census surname only: "Phillips, Mark", "Kowalczyk, Tom", "Wang, Li"
        are names; "PySpark, Dask, Ray", "Erdős and Gallai, Mat. Lapok", "# Sx, Sy" are none."""
        g = given.lower()
        return (len(g) > 3 and g not in AMBIGUOUS_GIVEN_NAMES) or is_surname(surname)

    @staticmethod
    def _weak_surname(word: str) -> bool:
        w = word.rstrip(".")
        # a common surname only (the census's first 10,000: Brennan 744, Muller 1345): the rare
        # ones are words as often ("Alert", "Show" rank beyond 20,000)
        return (
            w[:1].isupper()
            and not w.isupper()
            and not w.lower().endswith(_DERIVED)
            and is_plain_surname(w)
            and is_surname(w, _WEAK_SURNAME_RANK)
        )

    def _added_vouches(self, given: str, surname: str) -> bool:
        """A given name of the gazetteer's second source (rare in most text, and "Okta", "Lega",
        "Verde" are names too) vouches only for a census surname or a word of no dictionary here:
        "Okta Verify", "Lega Nord", "Verde Energie", "Raksha Bandhan" name no one; "Wanjiru
        Kamau", "Budi Santoso" do."""
        if given.lower() not in self._added or is_surname(surname, _ADDED_VOUCHED_RANK):
            return True
        w = surname.rstrip(".")
        return not (is_english_word(w) or is_proper_noun(w) or is_feminine_noun(w))

    def _surname_holds(self, given: str, surname: str, middle: Sequence[str] = ()) -> bool:
        if not self._added_vouches(given, surname):
            return False
        if surname.lower().endswith(_ABSTRACT_NOUN) and not is_surname(surname):
            return False  # a term in a title ("Vazirani, Vijay Approximation Algorithms"); Garrity stays
        if any(w.lower().endswith(_ABSTRACT_NOUN) and not is_surname(w) for w in middle):
            return False  # the same term inside: "Constant Deprecation Reason" (a code comment)
        if any(title_noun(w) for w in middle):
            # a word inside that is no given name, no surname, but English: a title or a place
            # ("Hong Kong Special Administrative Region", "Lao People's Democratic Republic");
            # a person's middle names are given names or surnames ("Mary Rose Hill")
            return False
        if given.lower() in AMBIGUOUS_GIVEN_NAMES:
            # "Mark", "Christian", "Jean" are words too: only before a surname that is neither
            # another such word nor shaped like an English derived word ("Mark Completed"), and in
            # upper case only a census surname that is no ordinary word, as French documents write
            # "Jean DUPONT", "Claire MOREAU" ("Mark TODO", "Max SIZE" are none)
            s = surname.lower()
            if s in AMBIGUOUS_GIVEN_NAMES or s.endswith(_DERIVED):
                return False
            if surname.isupper():
                return given[1:].islower() and _upper_surname(surname)
            return True
        if not surname.isupper():
            return True
        if len(surname) < 4:
            return False  # "Dylan LID", "Save ACL": an acronym after a word
        if any(not _VOWELS.intersection(part) for part in surname.split("-")):
            return False  # "Janus VQ-VAE", "Maria HTTP": a part without a vowel is an acronym
        if code_word(surname):
            return False  # "Hans-Peter README", "Julia CUDA"
        w = given.lower()
        common = w in self._common_given or w.split("-")[0] in self._common_given
        # a rarer given name vouches for a census surname that is no ordinary word: French and
        # German documents write "Zacharie CHAUVEAU", "Otfried FINKE", "Ernst-Dieter HOFFMANN".
        # Not for any word shaped as a surname ("Evamaria SCHMIEDT" is missed): rarer given names
        # are German and Romance words too, and such words in capitals are nouns of headings and
        # labels ("Davon BETROFFEN", "Buono REGALO", "Orkan KYRILL")
        rare = _title_case(given) and _upper_surname(surname)
        return (common or rare) and (
            # "Revert MOVING", "Build FAILED": a participle in capitals; "Ditmar REISING", "Anna
            # FLEMING" are census surnames that no dictionary here has
            not surname.endswith(("ING", "ED")) or (is_surname(surname) and not is_english_word(surname))
        )

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Besides code and placeholders: "Settings, Ping and WindowUpdate" enumerates, it is
        no "Surname, Given", nor "Graphs, Ann." before more abbreviations (a journal's title);
        a key of a code table whose other keys are no names is a term ("Tai Tham" among
        Unicode's block names)."""
        if "," in text[start:end] and (_ENUMERATION_AFTER.match(text, end) or _ABBREVIATION_AFTER.match(text, end)):
            return True
        if _one_word_listed(text, start, end):
            return True
        return super().reject_at(text, start, end) or self._term_table(text, start, end)

    def _term_table(self, text: str, start: int, end: int) -> bool:
        """Whether the candidate is inside the quoted key that starts its line (or a value that
        repeats that key: ``"Tai Tham": "Tai Tham",``) and most capitalised keys of the rows
        around it, up to three above and three below, hold no name (keys of capitalised words
        only; codes such as "E11" are no terms): a table of terms, such as
        ``"Buginese": range(…)``, ``"Tai Tham": range(…)``, ``"Combining Diacritical Marks
        Extended": …``: two of them at least are no names, and no more are names. A table of
        people (``"Maria Gonzalez": 3,`` among others) is one of names."""
        row = _row_start(text, start)
        key = _ROW_KEY.match(text, row) if row is not None else None
        if row is None or key is None:
            return False
        if not key.start(2) <= start < end <= key.end(2):
            # a value repeating its key: the same string quoted again later on the row
            quoted = key.group(1) + key.group(2) + key.group(1)
            again = text.find(quoted, key.end(), _line_end(text, key.end()))
            if again < 0 or not again < start < end < again + len(quoted):
                return False
        keys = [k for k in _neighbour_keys(text, row) if _TERM_SHAPE.fullmatch(k)]
        names = sum(self.refine_span(k) is not None for k in keys)
        return len(keys) - names >= 2 and names <= len(keys) - names


def _one_word_listed(text: str, start: int, end: int) -> bool:
    """ "Lorentz, Lorentz" inside a list that repeats the word a third time (sympy's index types,
    ``[Lorentz, Lorentz, Lorentz]``): a list of one term, no "Surname, Given" ("Thomas, Thomas"
    alone may be a person's name)."""
    first, comma, second = text[start:end].partition(",")
    word = first.strip()
    if not comma or not word or word != second.strip():
        return False
    return text.startswith(", " + word, end) or text.endswith(word + ", ", 0, start)


# a quoted string that starts its line, as a dict's key or a list's item does
_ROW_KEY = re.compile(r"[ \t]*([\"'])([^\"'\n]{1,80})\1[ \t]*[:,]")
# the keys a row of terms is judged beside: capitalised words, no codes ("E11" among people in
# networkx's bipartite tables says nothing about them)
_TERM_SHAPE = re.compile(r"[A-Z][a-z]{2,}(?:[ -][A-Za-z][A-Za-z]*)*")
_ROW_LIMIT = 200  # the longest line read as a table's row
_TABLE_ROWS = 3  # rows read above and below a candidate's


def _row_start(text: str, pos: int) -> int | None:
    """Where the line holding ``pos`` starts; None on a line longer than a row."""
    lo = max(0, pos - _ROW_LIMIT)
    newline = text.rfind("\n", lo, pos)
    return None if newline < 0 and lo > 0 else newline + 1


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos, pos + _ROW_LIMIT)
    return end if end >= 0 else min(len(text), pos + _ROW_LIMIT)


def _neighbour_keys(text: str, row: int) -> list[str]:
    """The quoted keys of the rows right above and below the row starting at ``row``, up to
    ``_TABLE_ROWS`` each way; the table ends at the first line that is no such row."""
    keys: list[str] = []
    pos = row
    for _ in range(_TABLE_ROWS):
        above = _row_start(text, pos - 1) if pos > 0 else None
        m = _ROW_KEY.match(text, above) if above is not None else None
        if above is None or m is None:
            break
        keys.append(m.group(2))
        pos = above
    pos = _line_end(text, row)
    for _ in range(_TABLE_ROWS):
        m = _ROW_KEY.match(text, pos + 1) if text[pos : pos + 1] == "\n" else None
        if m is None:
            break
        keys.append(m.group(2))
        pos = _line_end(text, pos + 1)
    return keys


# a greeting right before one word, and a version number after it
_GREETING_BEFORE = re.compile(r"(?i:\b(?:hello|hi|hallo|bonjour))[ ]*,?[ ]*\Z")
_VERSION_AFTER = re.compile(r"[ ]+[0-9]+(?:\.[0-9]+)*[ ]*(?:[!?.,;:)'\"]|$)", re.MULTILINE)
# "by" (or "von", "durch", "par") right before a name: a role's, with no title between
_BY_BEFORE = re.compile(r"(?i:\b(?:by|von|durch|par))[ ]*:?[ ]*\Z")


def _acronym_after_by(text: str, start: int, end: int) -> bool:
    """An acronym of five capitals at most and no vowel, alone or after a possessive, right after
    "by": a program or a library ("reported by NVML", "closed by Python's GC"), unless the census spells
    it as a surname ("by CUDA" stays: Cuda is one) or the gazetteer as a given name ("by AMIT").
    A title, a given name or a sign-off before it keeps a name ("Signed by Ngozi OKONJO", "Dear
    Mr. VOLKOVSKY")."""
    words = text[start:end].split()
    last = words[-1].rstrip(".,") if words else ""
    if not (last.isupper() and last.isalpha() and len(last) <= 5) or is_surname(last):
        return False
    if any(c in "AEIOUY" for c in last):
        return False  # a name in capitals has a vowel ("Approved by TEMBO"); "NVML", "GC" none
    if last.lower() in given_names(1):
        return False  # "Approved by AMIT", "by OLGA": a given name in capitals
    if len(words) > 2 or (len(words) == 2 and not words[0].endswith(("'s", "’s"))):
        return False
    return _BY_BEFORE.search(text, max(0, start - 16), start) is not None


def _version_greeted(text: str, start: int, end: int) -> bool:
    """One word after a greeting and before a version that ends the clause, neither a given name
    nor a census surname: a language greeted ("Hello, Fortran 77!", "Hi Delphi 7."); "Hi Priya 2
    quick questions" greets a person."""
    word = text[start:end]
    return (
        _VERSION_AFTER.match(text, end) is not None
        and " " not in word
        and _GREETING_BEFORE.search(text, max(0, start - 16), start) is not None
        and word.lower() not in given_names(1)
        and not is_surname(word)
    )


# a compound's second part in lower case after the word ("CUPTI-based", "GPU-accelerated")
_COMPOUND_AFTER = re.compile(r"-([a-z]{4,})\b")


def _product_after_by(text: str, start: int, end: int) -> bool:
    """One word in capitals after "by" as the first part of a compound with an English word
    ("reported by CUPTI-based profilers"): a program's name qualifying a noun. A person in a
    form stands alone, before a given name or a role ("Approved by OKAFOR QA"), or with an
    account's suffix ("TEMBO-ext", "DUPONT-martin"), and stays."""
    word = text[start:end]
    if not (word.isupper() and word.isalpha()):
        return False
    m = _COMPOUND_AFTER.match(text, end)
    return (
        m is not None
        and is_english_word(m.group(1))
        and m.group(1) not in given_names(1)
        and not is_surname(m.group(1))
        and _BY_BEFORE.search(text, max(0, start - 16), start) is not None
    )


class TitledPersonRecognizer(_NameRecognizer):
    """A name after a title, a role word or a sign-off: any capitalised words count."""

    PLACES_VETO = False  # "Dr. Francisco Morazán" is the man, not the Honduran department

    ENTITY = "PERSON"
    PATTERNS = [
        Pattern("title_name", r"\b" + _TITLE + r"(?P<value>" + _ANY_NAME + r")" + _END, 0.7),
        # French "M." (Monsieur) before a given name and a surname: "M. Yanis Collet"; not an
        # initial ("M. E. J. Newman", "M. Held and R. Karp" cite authors), nor "10 M Euro"
        Pattern(
            "monsieur_name",
            r"\bM\.[ ]+(?P<value>"
            + _CAP
            + r"[ ]+(?:(?:Le|La|De|Du|Des|Da|Di|Del|Van|Von)[ ]+)?"
            + _SURNAME
            + r")"
            + _END,
            0.7,
        ),
        Pattern(
            "role_name",
            r"\b(?:" + _ROLES + r")[ ]*,?[ ]*" + _TITLE + r"?(?P<value>" + _ANY_NAME + r")" + _END,
            0.7,
        ),
        Pattern("sign_off_name", _SIGN_OFF + r"(?P<value>" + _ANY_NAME + r")[ \t]*(?:\r?\n|$)", 0.7),
    ]

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Besides code and placeholders: what raises an exception, an error or a warning is
        code ("redirect exceptions raised by Werkzeug"); people raise issues."""
        if _RAISED_BY_CODE.search(text, max(0, start - 80), start):
            return True
        if _version_greeted(text, start, end):
            return True
        if _TITLE_ALONE.fullmatch(text, start, end):
            return True  # a title names nobody without a name: "Hello Mr. {name}", "Dear Dr. <NAME>"
        word = text[start:end].strip().rstrip(".")
        if word.isupper() and word.isalpha() and is_english_word(word.lower()) and not is_surname(word):
            return True  # "Author: UNKNOWN", "Owner: NONE": a word in capitals, no surname
        if _acronym_after_by(text, start, end) or _product_after_by(text, start, end):
            return True
        if " " not in text[start:end] and eponym_after(text, end, genitive=True):
            # "checked by Euler's formula": the formula checked; a surname alone, as science
            # writes an eponym ("Maria Gonzalez's method" keeps its given name and stays)
            return True
        return super().reject_at(text, start, end)

    def __init__(self) -> None:
        super().__init__()
        self._word_given = word_given_names()
        self._any_given = given_names(1)

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The name without trailing ordinary words; None when nothing else is left. A given
        name that is a word too counts before a word that is none ("Herr Max Krabert")."""
        keep = _until_common(text)
        words = list(_WORDS.finditer(text)) if keep == 0 else []
        if len(words) >= 2 and words[0].group().rstrip(".").lower() in self._word_given:
            rest = _until_common(text[words[1].start() :])
            keep = words[1].start() + rest if rest else 0
        if keep == 0 or (keep <= 3 and text[:keep].isupper()):
            return None  # nothing but ordinary words, or an acronym ("To: VE")
        pair = _WORDS.findall(text)
        if len(_WORDS.findall(text[:keep])) == 1 and not _TITLE_ALONE.match(text) and title_noun(text[:keep]):
            # one word the dictionary has and no census surname or given name spells: a role's
            # holder or a thing ("prepared by Licensee.", "A: Activations"), not a person's name
            return None
        if len(pair) == 2 and keep == len(pair[0]) and self._word_surname(pair[0], pair[1]):
            return 0, len(text.rstrip())
        if (
            len(pair) == 3
            and text[:keep].split() == pair[:2]
            and pair[1].lower() in self._any_given
            and self._word_surname(pair[0], pair[2])
        ):
            return 0, len(text.rstrip())  # a middle name between: "Angel Rose Day"
        return 0, keep

    def _word_surname(self, given: str, surname: str) -> bool:
        """After a title or sign-off, a gazetteer given name and a census surname that is a
        month or an ordinary word too: "Dr Emy Noel", "Cordialement,\nJordan April"."""
        s = surname.lower()
        return (
            given.lower() in self._any_given
            and surname[:1].isupper()
            and not surname.isupper()
            and is_surname(surname)
            and (s not in NOT_SURNAMES or s in _MONTH_WORDS)
        )


def person_recognizers() -> list[TiersPatternRecognizer]:
    """The shipped person-name recognizers."""
    return [GivenNamePersonRecognizer(), TitledPersonRecognizer()]
