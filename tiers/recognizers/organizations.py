"""Company names without a list (``ORGANIZATION``), in English, German and French.

Three shapes:

* capitalised words ending in a legal form: "Müller Präzisionsteile GmbH", "Acme Widgets Ltd",
  "Société Générale SA", "Schneider Metallbau GmbH & Co. KG", "BASF SE";
* a customer or supplier word and the capitalised words after it: "customer Northwind
  Traders", "supplier: Contoso", "Kunde Brandt Logistik", "Lieferant Hoffmann", "client
  Dufresne Industrie", "fournisseur Lambert & Fils"; a trade word after the name and joiners
  inside it are the name's ("Olea Medical", "Compagnie des Alpes"), and after a German or French
  role word inner capitals are a brand's, not code's ("Arbeitgeber: SinnerSchrader");
* a group or house word and a name: "Groupe Bull", "Établissements Martin", "Maison Breguet".

Leading ordinary words ("The", "Our", "Die", "Le") are not part of the name; a role word
followed only by ordinary words ("customer Service", "Lieferant Bewertung") is no name. Known
customers and suppliers are still best listed (``customer_lists``, ``supplier_lists``).
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from ._code import in_code_position
from .firms import FIRM_TRADES, in_prose_code
from ._vocabulary import is_common

__all__ = ["OrganizationRecognizer"]

# one word of a company name: capitalised, upper-case (IBM, BASF) or with digits (3M, X-Tech)
_WORD = r"(?:[A-Z][A-Za-zß0-9]*(?:['’.-][A-Za-zß0-9]+)*|[0-9]+[A-Za-z][A-Za-z0-9]*)"
_JOIN = r"(?:[ ]+(?:&|and|und|et|of|de|du|des|la|le|der|die|für|fur)[ ]+|[ ]+|-)"
_LEGAL = (
    # German forms and their combinations ("AG & Co. KGaA", "OHG mbH", "Stiftung & Co. KG")
    r"(?:GmbH|AG|KG|OHG|GbR|SE|UG|Stiftung)[ ]&[ ]Co\.?[ ](?:KGaA|KG|OHG)|(?:OHG|KG|GbR)[ ]mbH|"
    r"GmbH|gGmbH|AG|SE|KGaA|KG|OHG|GbR|UG(?:[ ]\(haftungsbeschrankt\))?|e\.[ ]?V\.|e\.[ ]?G\.|eG|"
    # family firms and holdings ("Lambert et Fils", "Smith and Sons"); not "Group": "RBAC Group",
    # "Instance Group", "Consumer Group" fill API references
    r"Holdings?|(?:and|&)[ ]Sons|(?:et|&)[ ]Fils|&[ ]So(?:hne|ehne)|&[ ]Cie\.?|"
    r"S\.A\.S\.U?|SASU|SAS|S\.A\.R\.L\.|SARL|EURL|E\.U\.R\.L\.|SNC|S\.N\.C\.|S\.A\.|SA|SCA|S\.C\.A\.|"
    r"SCI|SCOP|SELARL|SELAS|GIE|"
    r"Ltd\.?|Limited|LLC|L\.L\.C\.|LLP|L\.P\.|LP|Inc\.?|Incorporated|Corp\.?|Corporation|PLC|plc|"
    r"Co\.[ ]?Ltd\.?|Pty\.?[ ]Ltd\.?|N\.V\.|NV|B\.V\.|BV|S\.p\.A\.|SpA|S\.r\.l\.|Srl|AB|ASA|Oy|A/S|ApS|"
    r"Sp\.[ ]z[ ]o\.o\.|s\.r\.o\.|a\.s\.|Kft\.?"
)
_ROLE = (
    r"(?:customer|customers|client|clients|supplier|suppliers|vendor|subcontractor|distributor|"
    r"manufacturer|contract manufacturer|fournisseur|fournisseurs|sous-traitant|fabricant|"
    r"distributeur|prestataire|employer|employeur|societe)"
)
_ROLE_DE = (
    r"(?:Kunde|Kunden|Kundin|Lieferant|Lieferanten|Lieferantin|Auftraggeber|Hersteller|Zulieferer|Dienstleister|"
    r"Arbeitgeber|Firma)"
)


class OrganizationRecognizer(TiersPatternRecognizer):
    """Company names by legal form or by a customer / supplier word (module docstring)."""

    ENTITY = "ORGANIZATION"
    PATTERNS = [
        Pattern(
            "legal_form",
            # a Dutch particle may open it: "van der Dussen Stiftung & Co. KGaA" ("von der" is
            # the German preposition: "kommt sie von der Müller GmbH")
            r"\b(?P<value>(?:van[ ]+(?:der[ ]+|den[ ]+|de[ ]+)?)?"
            + _WORD
            + r"(?:"
            + _JOIN
            + _WORD
            + r"){0,5},?[ ]+(?:"
            + _LEGAL
            + r"))(?:$|[^A-Za-z0-9/-])",
            0.6,
        ),
        # a group or house word and a name, wherever it stands: "chez le Groupe Bull", "les
        # Établissements Martin", "la Compagnie des Alpes", "Maison Breguet"
        Pattern(
            "prefixed_name",
            r"\b(?P<value>(?:Groupe|Gruppe|Compagnie|Etablissements|Ets\.|Maison)[ ]+"
            + _WORD
            + r"(?:"
            + _JOIN
            + _WORD
            + r"){0,3})",
            0.6,
        ),
        Pattern(
            "role_name",
            # the role word stands alone: "clientCredentials" is no client called Credentials
            r"(?:\b(?:" + _ROLE + r"|" + _ROLE_DE + r")(?:[ ]*:[ ]*|[ ]+)|(?i:\b" + _ROLE + r")[ ]*:[ ]*)"
            r"(?P<value>" + _WORD + r"(?:" + _JOIN + _WORD + r"){0,3})",
            0.6,
        ),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The company name: leading ordinary words dropped; for a role candidate (no legal
        form), trailing ordinary words too; None when no word of a name is left."""
        words = list(_TOKENS.finditer(text))
        start = 0
        for i, m in enumerate(words):
            if not is_common(m.group()):
                start = m.start()
                break
            if m.group() in _NAME_ARTICLES and i + 1 < len(words) and not is_common(words[i + 1].group()):
                start = m.start()  # a Breton or Norman surname: "Le Gall", "Le Goff", "La Fontaine"
                break
            if m.group() in _FIRM_PREFIXES and _name_follows(words, i + 1):
                start = m.start()  # a group or house and its name: "Groupe Bull", "Compagnie des Alpes"
                break
        else:
            return None
        legal = _LEGAL_END.search(text)
        if legal is not None:
            # the name needs a word of its own before the legal form: "The GmbH" is none, nor a
            # list of legal forms ("GmbH, AG") or a car plate's letters before Swedish "AB"
            core = [
                m.group()
                for m in words
                if start <= m.start() < legal.start()
                and not is_common(m.group())
                and not _LEGAL_WORD.fullmatch(m.group())
            ]
            form = legal.group().strip(" ,")
            if not core or (len(form) <= 2 and max(len(w) for w in core) < 3):
                return None
            if form in _ACRONYM_FORMS and max(len(w) for w in core) < 2:
                return None
            return start, len(text)
        end = start
        for i, m in enumerate(words):
            if m.start() < start:
                continue
            w = m.group()
            if m.start() == start and w in _FIRM_PREFIXES:
                end = m.end()  # "Groupe" of "Groupe Bull", kept with its name
                continue
            if is_common(w) and end > start:
                nxt = words[i + 1].group() if i + 1 < len(words) else ""
                if w.lower() in FIRM_TRADES:
                    end = m.end()  # the trade after the name: "Olea Medical", "ESI Group"
                    continue
                if w.lower() in _JOINERS and nxt[:1].isupper() and not is_common(nxt):
                    continue  # "Compagnie des Alpes", "Wolf and Robert"
                break
            if is_common(w):
                break
            end = m.end()
        return (start, end) if end - start >= 2 else None

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A type or class name where code has one (:mod:`._code`): ``client: TestClient``; a
        description after a docstring's argument ("client: The MCP `ClientSession` used …")."""
        if _DESCRIBED.search(text, max(0, start - 24), start):
            return True
        # a protocol's or query language's verb after "client" ("the client ended the session
        # (DELETE)"), and metasyntactic words before a legal form ("O=Foo Corp,C=US")
        words = _TOKENS.findall(text[start:end])
        if len(words) == 1 and (words[0] in _PROTOCOL_VERBS or _CODE_NOUN_AFTER.match(text, end)):
            return True  # also a class named before what it is: "client RPC Call object", "Request event"
        if words and words[0].lower() in _METASYNTACTIC:
            return True
        if _PROSE_ROLE_BEFORE.search(text, max(0, start - 32), start):
            return in_prose_code(text, start, end)  # "Arbeitgeber: SinnerSchrader", a brand
        return in_code_position(text, start, end)


# legal forms that code and science write as acronyms too: NVIDIA's "NV", matrices' "AB", "SAS",
# "SE" (a standard error); before one of them one letter is a matrix's, no firm's ("Ri^T SAS Ri")
_ACRONYM_FORMS = frozenset("AB AG ASA BV GIE KG LP NV SA SAS SCA SCI SE SNC UG".split())


# words that open a firm's name before the name proper (accents folded: "Établissements")
_FIRM_PREFIXES = frozenset({"Groupe", "Gruppe", "Compagnie", "Etablissements", "Ets", "Ets.", "Maison"})


def _name_follows(words: list[re.Match[str]], i: int) -> bool:
    """Whether a word of a name comes at ``i``, after joiners ("des Alpes", "Bull")."""
    while i < len(words) and words[i].group().lower() in _JOINERS:
        i += 1
    return i < len(words) and words[i].group()[:1].isupper() and not is_common(words[i].group())


_JOINERS = frozenset({"and", "und", "et", "des", "de", "du", "la", "le", "der", "of"})
# a German or French role word before the value: prose, where inner capitals are a brand's
_PROSE_ROLE_BEFORE = re.compile(
    r"(?i:\b(?:kunde|kunden|kundin|lieferant|lieferanten|lieferantin|auftraggeber|hersteller|zulieferer|"
    r"dienstleister|arbeitgeber|firma|fournisseur|fournisseurs|sous-traitant|fabricant|distributeur|"
    r"prestataire|employeur|societe|(?:le|du|au|un|notre|votre)[ ]+client))[ ]*:?[ ]*$"
)
# French articles that open surnames ("Le Gall Georges S.A.", "de Le Gall"): kept before a word of
# a name; before an ordinary word they are the sentence's ("Le Groupe Danone SA" -> "Danone SA")
_NAME_ARTICLES = frozenset({"Le", "La"})
_TOKENS = re.compile(r"[A-Za-zß0-9]+(?:['’.-][A-Za-zß0-9]+)*\.?")
_LEGAL_END = re.compile(r"[ ,](?:" + _LEGAL + r")$")
_DESCRIBED = re.compile(r"[a-z_]:[ ]+(?:The|A|An|Die|Der|Das|Ein|Eine|Le|La|Les|Un|Une)[ ]+$")
_LEGAL_WORD = re.compile(r"(?:" + _LEGAL + r")\.?")
# HTTP methods and SQL statements, written in capitals in code and its comments
_PROTOCOL_VERBS = frozenset(
    "GET HEAD POST PUT PATCH DELETE OPTIONS CONNECT TRACE SELECT INSERT UPDATE UPSERT MERGE DROP CREATE ALTER".split()
)
# what code calls the instance of a class named right before it: "the client's Request event",
# "client RPC Call object"; a firm is no object, event or instance
_CODE_NOUN_AFTER = re.compile(
    r"[ ]+(?:objects?|events?|class(?:es)?|instances?|types?|methods?|messages?|handlers?|streams?|"
    r"interfaces?|protocols?|callbacks?|exceptions?|errors?|structs?|enums?|fields?|attributes?|"
    r"parameters?|arguments?|frames?|packets?|subclass(?:es)?|implementations?)\b"
)
# the words examples put where a name goes ("Foo Corp", "Bar Inc.", "Example Ltd")
_METASYNTACTIC = frozenset("foo bar baz qux quux foobar example sample dummy".split())
