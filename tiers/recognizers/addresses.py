"""Postal addresses (``ADDRESS``): street, house number and, where written, postcode and town,
in German, French and English (UK and US) conventions.

* German: "Hauptstraße 5", "Am Lindenhof 12a, 80331 München", "Industriestr. 7 · D-70565
  Stuttgart" — a street word ending in -straße, -str., -weg, -allee, -platz, -gasse, -ring,
  -damm, -ufer, -chaussee (or "Am/An der/Im …" with a number), then optionally a 5-digit postcode
  and a town;
* French: "12 rue de la Paix, 75002 Paris", "3 bis avenue Jean Jaurès" — a number, a street
  type (rue, avenue, boulevard, place, chemin, allée, impasse, quai, route, cours), its name,
  optionally a postcode and a town;
* English: "221B Baker Street", "1600 Amphitheatre Pkwy, Mountain View, CA 94043", "10 Downing
  St, London SW1A 2AA" — a number, capitalised words, a street type, optionally a town, a state
  and ZIP code or a UK postcode.

A street with a number is already an address (it locates a person's home as well as the full
form does); the postcode and town are taken in when they follow, so that all of it is stripped.
"""

from __future__ import annotations

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer

__all__ = ["AddressRecognizer"]

_CAPW = r"[A-Z][a-zß]+(?:-[A-Z][a-zß]+)*"
_TOWN = _CAPW + r"(?:[ -](?:am|an der|im|sur|sous|en|les|le|la|de|upon|on)?[ ]?" + _CAPW + r"){0,2}"
_SEP = r"(?:[ ]*[,·|/][ ]*|[ ]*\r?\n[ \t]*|[ ]+)"

_DE_STREET = (
    r"(?:[A-Z][a-zß]+(?:-[A-Z][a-zß]+)*-?(?i:strasse|straße|str\.|weg|allee|platz|gasse|ring|damm|ufer|chaussee|steig|pfad)"
    r"|(?:[A-Z][a-zß]+(?:-[A-Z][a-zß]+)*[ ])?(?:Strasse|Straße|Str\.|Weg|Allee|Platz|Gasse|Ring|Damm)[ ](?:der[ ]|des[ ])?[A-Z][a-zß]+"
    r"|(?:Am|An[ ]der|An[ ]den|Auf[ ]der|Im|In[ ]der|Zum|Zur)[ ][A-Z][a-zß]+)"
)
_DE = (
    _DE_STREET + r"[ ]+[0-9]{1,4}(?:[ ]?[a-zA-Z])?(?:[ ]?-[ ]?[0-9]{1,4})?\b"
    r"(?:" + _SEP + r"(?:D-)?[0-9]{5}[ ]+" + _TOWN + r")?"
)

_FR_TYPE = r"(?i:rue|avenue|av\.|boulevard|bd|place|chemin|allee|impasse|quai|route|cours|square|passage|voie|rond-point)"
_FR_NAME = r"(?:(?:de[ ]la|de[ ]l'|du|des|de|d'|la|le|les)[ ]?)?[A-Z][a-zß']+(?:[ -](?:de[ ]la|du|des|de|d'|la|le|les)?[ ]?[A-Z][a-zß']+){0,3}"
_FR = (
    r"\b[0-9]{1,4}(?:[ ]?(?:bis|ter|[A-D]))?,?[ ]+" + _FR_TYPE + r"[ ]+" + _FR_NAME
    + r"(?:" + _SEP + r"(?:F-)?[0-9]{5}[ ]+" + _TOWN + r"(?:[ ]+(?:Cedex|CEDEX)(?:[ ][0-9]{1,2})?)?)?"
)

_EN_TYPE = (
    r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Boulevard|Blvd\.?|Lane|Ln\.?|Drive|Dr\.?|Court|Ct\.?|"
    r"Way|Place|Pl\.?|Terrace|Close|Crescent|Parkway|Pkwy\.?|Highway|Hwy\.?|Square|Sq\.?|Row|Mews|Gardens)"
)
_UK_POSTCODE = r"[A-Z]{1,2}[0-9][A-Z0-9]?[ ][0-9][A-Z]{2}"
_US_TAIL = r"(?:[ ]*,[ ]*" + _TOWN + r")?[ ]*,?[ ]*[A-Z]{2}[ ]+[0-9]{5}(?:-[0-9]{4})?"
_EN = (
    r"\b[0-9]{1,5}[A-Z]?[ ]+(?:[NSEW]\.?[ ]+)?(?:" + _CAPW + r"[ ]+){1,3}" + _EN_TYPE + r"\b"
    r"(?:" + _US_TAIL + r"|" + _SEP + _TOWN + r"(?:" + _SEP + _UK_POSTCODE + r")?|" + _SEP + _UK_POSTCODE + r")?"
)


class AddressRecognizer(TiersPatternRecognizer):
    """Street addresses with a house number, and the postcode and town after them."""

    ENTITY = "ADDRESS"
    PATTERNS = [
        Pattern("address_de", r"\b(?P<value>" + _DE + r")", 0.6),
        Pattern("address_fr", r"(?P<value>" + _FR + r")", 0.6),
        Pattern("address_en", r"(?P<value>" + _EN + r")", 0.6),
    ]
