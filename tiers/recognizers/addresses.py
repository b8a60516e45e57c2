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

import re

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer

__all__ = ["COUNTER_WORDS", "AddressRecognizer", "counter_before"]

_CAPW = r"[A-Z][a-zß]+(?:-?[A-Z][a-zß]+)*"
# a town: "Morin-les-Bains", "Sainte Margaret-sur-Mer", "Frankfurt am Main", "Stratford-upon-Avon"
_TOWN = _CAPW + r"(?:[ -](?:(?:am|an der|im|sur|sous|en|les|le|la|de|upon|on)[ -])?" + _CAPW + r"){0,2}"
_SEP = r"(?:[ ]*[,·|/][ ]*|[ ]*\r?\n[ \t]*|[ ]+)"

_DE_STREET = (
    # glued suffixes after at least three letters: "Bahnhofstr.", "Schillerring", not "Spring 6"
    r"(?:[A-Z][a-zß]{2,}(?:-[A-Z][a-zß]+)*-?(?i:strasse|straße|str\.|weg|allee|platz|gasse|ring|damm|ufer|chaussee|steig|pfad)"
    r"|(?:[A-Z][a-zß]+(?:-[A-Z][a-zß]+)*[ ])?(?:Strasse|Straße|Str\.|Weg|Allee|Platz|Gasse|Ring|Damm)[ ](?:der[ ]|des[ ])?[A-Z][a-zß]+"
    r"|(?:Am|An[ ]der|An[ ]den|Auf[ ]der|Im|In[ ]der|Zum|Zur)[ ][A-Z][a-zß]+)"
)
_DE = (
    _DE_STREET + r"[ ]+[0-9]{1,4}(?:[ ]?[a-zA-Z])?(?:[ ]?[-/][ ]?[0-9]{1,4})?\b"
    r"(?:" + _SEP + r"(?:D-)?[0-9]{5}[ ]+" + _TOWN + r")?"
)

_FR_TYPE = (
    r"(?i:rue|avenue|av\.|boulevard|bd|place|chemin|allee|impasse|quai|route|cours|square|passage|voie|rond-point)"
)
_FR_NAME = r"(?:(?:de[ ]la|de[ ]l'|du|des|de|d'|la|le|les)[ ]?)?[A-Z][a-zß']+(?:[ -](?:de[ ]la|du|des|de|d'|la|le|les)?[ ]?[A-Z][a-zß']+){0,3}"
_FR_TOWN = r"(?:F-)?[0-9]{5}[ ]+" + _TOWN + r"(?:[ ]+(?:Cedex|CEDEX)(?:[ ][0-9]{1,2})?)?"
_FR = r"\b[0-9]{1,4}(?:[ ]?(?:bis|ter|[A-D]))?,?[ ]+" + _FR_TYPE + r"[ ]+" + _FR_NAME + r"(?:" + _SEP + _FR_TOWN + r")?"
# without a house number, the postcode and town make it an address: "chemin Rémy Chrétien, 84331 Germain"
_FR_NO_NUMBER = r"\b" + _FR_TYPE + r"[ ]+" + _FR_NAME + _SEP + _FR_TOWN

# street types that name nothing else: the street line alone is an address
_EN_TYPE = (
    r"(?:Street|St\.?|Avenue|Ave\.?|Road|Rd\.?|Boulevard|Blvd\.?|Lane|Ln\.?|Drive|Dr\.?|Court|Ct\.?|"
    r"Way|Place|Pl\.?|Terrace|Close|Crescent|Parkway|Pkwy\.?|Highway|Hwy\.?|Square|Sq\.?|Row|Mews|Gardens|"
    r"Alley|Causeway|Expressway|Freeway|Turnpike|Viaduct|Stravenue|Roads|Streets|Avenues|Lanes|Drives)"
)
# USPS and Royal Mail suffixes that are ordinary words too ("100 Data Points", "3 Critical Path"):
# they make an address only with a ZIP code or a UK postcode after them
_EN_WEAK_TYPE = (
    r"(?:Annex|Arcade|Bayou|Beach|Bend|Bluffs?|Bottom|Branch|Bridge|Brooks?|Burgs?|Bypass|Camp|Canyon|Cape|"
    r"Centers?|Centre|Circles?|Cliffs?|Club|Commons?|Corners?|Course|Courts|Coves?|Creek|Crest|Crossing|"
    r"Crossroad|Curve|Dale|Dam|Divide|Estates?|Extensions?|Falls?|Ferry|Fields?|Flats?|Fords?|Forest|Forges?|"
    r"Forks?|Fort|Garden|Gateway|Glens?|Greens?|Groves?|Harbou?rs?|Haven|Heights|Hills?|Hollow|Inlet|Islands?|"
    r"Isle|Junctions?|Keys?|Knolls?|Lakes?|Land|Landing|Lights?|Loaf|Locks?|Lodge|Loop|Mall|Manors?|Meadows?|"
    r"Mills?|Mission|Motorway|Mount|Mountains?|Neck|Orchard|Oval|Overpass|Parks?|Parkways|Pass|Passage|Path|"
    r"Pike|Pines?|Plains?|Plaza|Points?|Ports?|Prairie|Radial|Ramp|Ranch|Rapids?|Rest|Ridges?|Rise|River|"
    r"Route|Run|Shoals?|Shores?|Skyway|Springs?|Spurs?|Squares|Station|Stream|Summit|Throughway|Trace|Track|"
    r"Trafficway|Trail|Trailer|Tunnel|Underpass|Unions?|Valleys?|Via|Views?|Villages?|Ville|Vista|Walks?|"
    r"Wall|Ways|Wells?|Wharf|Yard|Parade|Drove|Rue)"
)
_UK_POSTCODE = r"[A-Z]{1,2}[0-9][A-Z0-9]?[ ][0-9][A-Z]{2}"
_US_ZIP = r"[ ]*,?[ ]*[A-Z]{2}[ ]+[0-9]{5}(?:-[0-9]{4})?"
_US_TAIL = r"(?:(?:[ ]*,[ ]*|[ ]*\r?\n[ \t]*)" + _TOWN + r")?" + _US_ZIP
# "Flat 3, …", "Studio 90\n…" before a UK street line; "Apt. 533", "Suite 846" after a US one
_FLAT = r"(?:Flat|Studio|Apartment|Unit|Suite)[ ][0-9]{1,4}[A-Za-z]?(?:[ ]*,[ ]*|[ ]*\r?\n[ \t]*)"
_UNIT = r"(?:[ ]*,?[ ]+(?:Apt\.?|Suite|Unit|Flat)[ ]+[0-9]{1,5}[A-Z]?)?"
# a person's suffix in a street named after one: "1400 Martin Luther King Jr. Blvd"
_SUFFIX = r"(?:(?:Jr|Sr|JR|SR)\.?[ ]+)?"
_EN_LINE = (
    r"\b(?:"
    + _FLAT
    + r"(?:[0-9]{1,5}[A-Z]?[ ]+)?|[0-9]{1,5}[A-Z]?[ ]+)(?:[NSEW]\.?[ ]+)?(?:"
    + _CAPW
    + r"[ ]+){1,3}"
    + _SUFFIX
)
_EN = (
    _EN_LINE
    + _EN_TYPE
    + r"\b"
    + _UNIT
    + r"(?:"
    + _US_TAIL
    + r"|"
    + _SEP
    + _TOWN
    + r"(?:"
    + _SEP
    + _UK_POSTCODE
    + r")?|"
    + _SEP
    + _UK_POSTCODE
    + r")?"
)
_EN_WEAK = (
    _EN_LINE
    + _EN_WEAK_TYPE
    + r"\b"
    + _UNIT
    + r"(?:"
    + _US_TAIL
    + r"|(?:"
    + _SEP
    + _TOWN
    + r")?"
    + _SEP
    + _UK_POSTCODE
    + r")"
)
# a street line in capitals, as labels and forms print it ("1400 MARTIN LUTHER KING JR BLVD"):
# only the types that are no word of a heading ("WAY", "CLOSE", "PLACE" are), and the ZIP after
# ("DRIVE" and "COURT" are a product's and a court's as often: "USB FLASH DRIVE", "BANKRUPTCY COURT")
_EN_CAPS_TYPE = r"(?:STREET|ST|AVENUE|AVE|ROAD|RD|BOULEVARD|BLVD|LANE|LN|PARKWAY|PKWY|HIGHWAY|HWY)"
_EN_CAPS = (
    r"\b[0-9]{1,5}[A-Z]?[ ]+(?:[NSEW]\.?[ ]+)?(?:[A-Z](?:[A-Z'-]+)?\.?[ ]+){1,4}"
    + _EN_CAPS_TYPE
    + r"\b\.?(?:[ ]*,?[ ]+(?:APT|SUITE|UNIT)[ ]+[0-9]{1,5}[A-Z]?)?"
    # the town only with its state and ZIP: a line's next words in capitals are anything ("12
    # MAIN ST, THANK YOU")
    + r"(?:(?:[ ]*,[ ]*|[ ]*\r?\n[ \t]*)[A-Z]+(?:[ ][A-Z]+){0,2}[ ]*,?[ ]*[A-Z]{2}[ ]+[0-9]{5}(?:-[0-9]{4})?)?"
)
# the words of an instruction in capitals, not a street's name ("STEP 3 PRESS THE DRIVE")
_NOT_IN_A_STREET_NAME = frozenset(
    "THE A AN TO OF AND OR IN ON AT FOR YOUR THIS THAT WITH FROM PRESS BEST NEW FREE GREAT TOP WORST".split()
)  # and a headline's ("THE 10 BEST ROAD TRIPS", "6 GREAT STREET FOOD MARKETS")
# the words before a number that counts something else than houses ("STEP 4 INSERT USB DRIVE",
# "TRACK 1 ABBEY ROAD", "TOP 10 WALL STREET STOCKS", "Chapter 3 Maria Gonzalez road trip")
COUNTER_WORDS = (
    "step track level chapter exit season episode top option part section room gate page no\\.? number table ward "
    "round stage phase version stop zone platform terminal floor"
).split()


def counter_before(words: list[str]) -> re.Pattern[str]:
    """A search for one of ``words`` and a blank right before the end of the searched slice."""
    return re.compile(r"(?i:" + "|".join(words) + r")[ ]\Z")


# in capitals also a lane's, a car's and a generation's ("LANE 2", "RAV 4", "GEN 4")
_COUNTERS = counter_before([*COUNTER_WORDS, "lane", "gen", "v", "rav"])
_UNITS = frozenset(
    "TB GB MB KB X PCS PC LB LBS KG OZ ML MM CM IN FT K KM MI MILE MILES MPH YEAR YEARS MILLION BILLION WHEEL LANE".split()
)
# US military mail: "PSC 1152, Box 7611, APO AE 73174", "USNS Gates, FPO AP 79980"
_US_MILITARY = (
    r"\b(?:(?:PSC|CMR|Unit)[ ][0-9]{3,5},?[ ]Box[ ][0-9]{3,5}|(?:USNS|USNV|USS|USCGC)[ ]"
    + _CAPW
    + r")"
    + _SEP
    + r"(?:APO|FPO|DPO)[ ](?:AA|AE|AP)[ ][0-9]{5}"
)


class AddressRecognizer(TiersPatternRecognizer):
    """Street addresses with a house number, and the postcode and town after them."""

    ENTITY = "ADDRESS"
    PATTERNS = [
        Pattern("address_de", r"\b(?P<value>" + _DE + r")", 0.6),
        Pattern("address_fr", r"(?P<value>" + _FR + r")", 0.6),
        Pattern("address_fr_no_number", r"(?P<value>" + _FR_NO_NUMBER + r")", 0.6),
        Pattern("address_en", r"(?P<value>" + _EN + r")", 0.6),
        Pattern("address_en_suffix", r"(?P<value>" + _EN_WEAK + r")", 0.6),
        Pattern("address_en_capitals", r"(?P<value>" + _EN_CAPS + r")", 0.6),
        Pattern("address_us_military", r"(?P<value>" + _US_MILITARY + r")", 0.6),
    ]

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """An English word in -ering, -oring, -uring or -iring before a number ("Data Engineering
        23(12)", "Monitoring 3") is no German ring road: those glue "ring" to a consonant, an
        "a" or an "r" ("Ostring", "Hansaring", "Kaiserring"). In capitals, a line with the
        words of a sentence is an instruction ("STEP 3 PRESS THE ROAD"), and a number after a
        counter's word or before a unit counts or measures ("TRACK 1 ABBEY ROAD", "2 TB …")."""
        value = text[start:end]
        first = value.split(" ", 1)[0]
        if value.isupper():
            words = value.split()
            if not _NOT_IN_A_STREET_NAME.isdisjoint(words) or (len(words) > 1 and words[1] in _UNITS):
                return True
            if _COUNTERS.search(text, max(0, start - 12), start):
                return True
        return first.endswith(_GERUNDS) and not first.endswith("rring")


_GERUNDS = ("ering", "oring", "uring", "iring")
