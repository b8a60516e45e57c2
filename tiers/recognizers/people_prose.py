"""Person names in German and French running text, where the sentence says a person stands
(``PERSON``), whatever the given name.

:mod:`.people` needs a gazetteer given name or a title, role word or sign-off; a rare or newer
given name ("Kelyan", "Maelly", "Wigburg") in running text, with nothing of the kind around it,
is then missed, and so is one that is a word too ("Oscar", "Victoria"). The sentence still says
it when the name is its subject and a verb of what people do follows, or when the person is said
to be of a company:

* French: at a sentence's or a clause's start (after ". ", ", ", ": ", "et ", "que ") and before
  "a" / "ont" / "avait" and a past participle, "s'est", "est venu(e)", a verb of reporting
  ("confirme", "indique", "signale" …), or "de la société" / "du groupe" / "de chez":
  "Lors de l'audit, Kaina Dufresne a constaté …", "Comme convenu, Oscar Labrecque de la
  société …";
* German: the same before "hat", "ist", "sagte", "bestätigte" … or "von der" / "vom"; and, as
  German puts the finite verb second, right after such a verb and before a lower-case word:
  "Beim Audit stellte Wigburg Garber fest", "Wie besprochen kommt Melusina Hass von der …".

The candidate is two or three capitalised words (a particle between them: "Le Roy", "von
Berg"), none an ordinary word of :mod:`._vocabulary` ("Das Werk Hamburg hat", "Le projet
Atlas a"), none upper case, no code identifier, and it reads as a name: its first word a given
name of the gazetteer (words-too ones included) or a feminine or masculine form of one, or its
last word a census surname. A German feminine noun never starts one ("bei der Prüfung Meier").
The sentence shape is not used in English: code comments are English, and the English carriers
name people with titles and role words already.
"""

from __future__ import annotations

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from ._german_nouns import is_feminine_noun
from ._given_names import given_names
from ._surnames import is_surname
from ._vocabulary import NOT_SURNAMES, is_common
from .people import _CAP, _PLACE_FIRST, _PLACE_PREFIXES, _WORDS, _NameRecognizer
from .people_fields import _given_like

__all__ = ["FrenchSubjectPersonRecognizer", "GermanSubjectPersonRecognizer", "prose_recognizers"]

# a particle inside a name: "Nesrine Le Roy", "Anna von Berg", "Jean de La Fontaine"; one word
# only, so that "von der" and "de la" stay the preposition of "kommt X Y von der Firma", "X Y de
# la société"
_IN_PARTICLE = r"(?:(?:Le|La|De|Du|Des|Van|Von|le|la|de|du|des|van|von|zu)[ ]+)"
_NAME = f"(?:{_CAP}(?:[ ]{_IN_PARTICLE}?{_CAP}){{1,2}})"
# where a clause begins: a line, a sentence, after a comma or colon, after "and" / "that"
_CLAUSE_FR = r"(?:^|[.!?;:][ ]+|,[ ]*|\((?:[ ]*)|\b(?:et|que|qu['’]|mais|puis|donc|lorsque|quand)[ ]+)"
_CLAUSE_DE = r"(?:^|[.!?;:][ ]+|,[ ]*|\((?:[ ]*)|\b(?:und|dass|aber|weil|als|wenn|ob|sondern|denn)[ ]+)"
# what follows a French subject that is a person (text is normalised: "constaté" is "constate")
_VERB_FR = (
    r"(?:(?:a|ont|avait|aura|avaient)[ ]+(?:(?:bien|deja|aussi|egalement|hier|alors|ensuite|enfin)[ ]+)?"
    r"[a-z]{2,}(?:e|es|i|is|it|u|us|t)|"
    r"s['’](?:est|etait|engage|occupe|charge)|est[ ]+(?:venue?|passee?|arrivee?|partie?|revenue?|chargee?)|"
    r"sera|viendra|passera|enverra|fournira|prendra|rappellera|reviendra|doit|devra|va|peut|pourra|souhaite|"
    r"confirme|indique|signale|demande|propose|precise|rappelle|estime|explique|constate|informe|attend|"
    r"de[ ]+la[ ]+societe|du[ ]+groupe|de[ ]+chez|du[ ]+service|de[ ]+l['’]entreprise)(?:$|[^A-Za-z])"
)
_VERB_DE = (
    r"(?:hat|hatte|ist|war|wird|wurde|will|wollte|soll|sollte|kann|konnte|muss|musste|sagte|sagt|meldete|meldet|"
    r"bestatigte|bestatigt|teilte|teilt|stellte|stellt|schickte|schickt|schrieb|schreibt|kommt|kam|bittet|bat|"
    r"fragte|fragt|erklarte|erklart|berichtete|berichtet|lieferte|liefert|ubernimmt|ubernahm|leitet|leitete|"
    r"prufte|pruft|informierte|informiert|bleibt|arbeitet|besucht|besuchte|ruft|rief|"
    r"von[ ]+der|vom)(?:$|[^A-Za-z])"
)
# German verb-second order: the finite verb, then the subject ("Beim Audit stellte X Y fest")
_VERB_FIRST_DE = (
    r"\b(?:hat|hatte|ist|war|wird|will|soll|kann|muss|sagte|meldete|bestatigte|teilte|stellte|schickte|"
    r"schrieb|kommt|kam|bat|fragte|erklarte|berichtete|lieferte|prufte|informierte|besuchte|rief)[ ]+"
)
# after the subject in that order: a lower-case word (German nouns are capitalised) or a stop
_AFTER_DE = r"(?:[ ]+[a-z]|[ ]*[,.;:])"


class _SubjectRecognizer(_NameRecognizer):
    ENTITY = "PERSON"

    def __init__(self) -> None:
        super().__init__()
        self._given = given_names(1)

    def validate_result(self, pattern_text: str) -> bool:
        words = _WORDS.findall(pattern_text)
        caps = [w for w in words if w[:1].isupper() and w.lower() not in _PARTICLE_WORDS]
        if not 2 <= len(caps) <= 3 or any(is_common(w) or w.isupper() for w in words):
            return False
        first, last = caps[0], caps[-1]
        f = first.lower()
        if f in _PLACE_PREFIXES or f in _PLACE_FIRST or f in NOT_SURNAMES or self._noun(first):
            return False  # "Hong Kong a connu", "Paris Saint-Germain a", "bei der Prüfung Meier"
        if _given_like(first, self._given):
            return True
        # a town's name before a noun: "Hamburg Hafen hat" (a given name may end so: "Wigburg")
        return not f.endswith(_TOWN_ENDINGS) and is_surname(last) and last.lower() not in NOT_SURNAMES

    def _noun(self, word: str) -> bool:
        return False


# endings of German and French town names ("Hamburg", "Ludwigshafen", "Offenbach", "Abbeville")
_TOWN_ENDINGS = ("burg", "hafen", "bach", "berg", "dorf", "heim", "hausen", "stadt", "ingen", "furt", "ville")
_PARTICLE_WORDS = frozenset("le la de du des van von der den zu".split())


class FrenchSubjectPersonRecognizer(_SubjectRecognizer):
    """A name as a French clause's subject, or as the person of a company (module docstring)."""

    PATTERNS = [
        Pattern("subject_fr", _CLAUSE_FR + r"(?P<value>" + _NAME + r")[ ]+" + _VERB_FR, 0.6),
    ]


class GermanSubjectPersonRecognizer(_SubjectRecognizer):
    """A name as a German clause's subject, before or right after its verb (module docstring)."""

    PATTERNS = [
        Pattern("subject_de", _CLAUSE_DE + r"(?P<value>" + _NAME + r")[ ]+" + _VERB_DE, 0.6),
        Pattern("verb_subject_de", _VERB_FIRST_DE + r"(?P<value>" + _NAME + r")" + _AFTER_DE, 0.6),
    ]

    def _noun(self, word: str) -> bool:
        return is_feminine_noun(word)


def prose_recognizers() -> list[TiersPatternRecognizer]:
    """The running-text person recognizers."""
    return [FrenchSubjectPersonRecognizer(), GermanSubjectPersonRecognizer()]
