"""Names after a particle that is a preposition too, and particles written in capitals.

"von", "de", "der", "des", "du", "da" start a surname ("Anna von Berg") and are prepositions as
often: "Die Reklamation von Leonie Hoffmann liegt vor", "Demande de Claire Martin". Read as a
surname's particle, the capitalised noun before it ("Reklamation von Leonie") took the given name
as the surname and the name itself was never read: German and French sentences of this shape were
forwarded with the name in them (2026-12-07). Forms write the particles in capitals with the
surname ("Maria DE SOUSA", "Hans VON DER LEYEN"), which ended the name at the particle.
"""

from __future__ import annotations

import importlib.resources
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig
from tiers.recognizers._english_words import is_english_word
from tiers.recognizers._given_names import given_names
from tiers.recognizers._surname_shape import name_shaped
from tiers.recognizers._surnames import is_plain_surname

from .conftest import content

_SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# given names of the gazetteer that are no word of German, French or English (an ambiguous one,
# "Claire", vouches in capitals only for a surname that is no word: test_capital_names.py)
_GIVEN = ["Leonie", "Jonas", "Mathilde", "Pierre", "Ursula", "Maria", "Lukas", "Juliette", "Matthias", "Amélie",
          "Hannah", "Thibault", "Katharina", "Sébastien", "Jürgen", "Océane"]  # fmt: skip
_NOUNS_DE = ["Reklamation", "Anfrage", "Bericht", "Angebot", "Rechnung", "Freigabe", "Abweichungsmeldung", "Prüfung"]
_NOUNS_FR = ["Demande", "Lettre", "Réclamation", "Facture", "Validation", "Déclaration"]
_TAILS = [
    " liegt vor.",
    " ist eingegangen.",
    ".",
    "",
    "\n",
    ", bitte prüfen.",
    " (siehe Anhang)",
    " reçue hier.",
    " : à traiter",
]


@lru_cache(maxsize=1)
def _surnames() -> list[str]:
    """Common census surnames that are no ordinary word (the names package's file, read here)."""
    lines = importlib.resources.files("names").joinpath("dist.all.last").read_text("ascii").splitlines()
    out = [line.split()[0].capitalize() for line in lines[:3000] if line.split()]
    return [s for s in out if is_plain_surname(s) and len(s) > 3]


@lru_cache(maxsize=1)
def _upper_surnames() -> list[str]:
    """The same in capitals, "REISING", "FLEMING", "HARDING" among them: census surnames that end
    as an English participle does and are no word of the dictionary. Those that are ("REED",
    "BROWNING") are read as words after a given name in capitals ("Revert MOVING"), a known miss."""
    return [s.upper() for s in _surnames() if not (s.upper().endswith(("ING", "ED")) and is_english_word(s))]


@pytest.fixture(scope="module")
def bare() -> Classifier:
    return Classifier(TiersConfig())


def _covered(clf: Classifier, text: str, value: str) -> bool:
    start = text.index(value)
    covered = bytearray(len(text))
    for f in clf.classify(content(text)).findings:
        if f.entity_type == "PERSON":
            covered[f.start : f.end] = b"\x01" * (f.end - f.start)
    return all(covered[start : start + len(value)])


@_SETTINGS
@given(
    data=st.data(),
    given_name=st.sampled_from(_GIVEN),
    german=st.booleans(),
    article=st.sampled_from(["", "Die ", "Der ", "Das ", "La ", "Le ", "Wir haben die "]),
    tail=st.sampled_from(_TAILS),
    upper=st.booleans(),
)
def test_a_name_after_a_noun_and_a_preposition_is_found(
    bare: Classifier, data: st.DataObject, given_name: str, german: bool, article: str, tail: str, upper: bool
) -> None:
    surname = data.draw(st.sampled_from(_upper_surnames() if upper else _surnames()))
    noun = data.draw(st.sampled_from(_NOUNS_DE if german else _NOUNS_FR))
    preposition = data.draw(st.sampled_from(["von", "der", "vom"] if german else ["de", "du", "des"]))
    name = f"{given_name} {surname}"
    text = f"{article}{noun} {preposition} {name}{tail}"
    assert _covered(bare, text, name), text


@_SETTINGS
@given(data=st.data(), given_name=st.sampled_from(_GIVEN), tail=st.sampled_from(_TAILS))
def test_a_name_ending_a_long_run_after_a_preposition_is_found(
    bare: Classifier, data: st.DataObject, given_name: str, tail: str
) -> None:
    """Three capitalised words and more after the particle: the name at the run's end, as read
    without the particle ("Association des Centres Distributeurs Edouard Leclerc")."""
    surname = data.draw(st.sampled_from(_surnames()))
    words = data.draw(st.lists(st.sampled_from(["Centres", "Distributeurs", "Services", "Achats", "Qualité"]),
                               min_size=1, max_size=3))  # fmt: skip
    name = f"{given_name} {surname}"
    text = f"Association des {' '.join(words)} {name}{tail}"
    assert _covered(bare, text, name), text


@_SETTINGS
@given(
    data=st.data(),
    given_name=st.sampled_from(_GIVEN),
    particle=st.sampled_from(["DE", "DA", "DOS", "DU", "DE LA", "VAN DER", "VON DER", "VAN", "VON", "DEL", "DI", "LE"]),
    carrier=st.sampled_from(["Titulaire : {n}", "Passenger: {n}", "Name: {n}\n", "Le dossier de {n} a été validé.",
                             "{n} hat angerufen.", "Signed: {n}", "Contact: {n}, service achats"]),
)  # fmt: skip
def test_particles_in_capitals_belong_to_the_surname(
    bare: Classifier, data: st.DataObject, given_name: str, particle: str, carrier: str
) -> None:
    surname = data.draw(st.sampled_from(_upper_surnames()))
    name = f"{given_name} {particle} {surname}"
    text = carrier.format(n=name)
    assert _covered(bare, text, name), text


@pytest.mark.parametrize(
    "text",
    [
        "Die Lieferung von Bauteilen erfolgt am Montag.",
        "Der Bericht von Montag liegt vor.",
        "La Demande de Prix est jointe.",
        "Die Prüfung der Unterlagen ist abgeschlossen.",
        "Association des Centres Distributeurs",
        "Der Antrag von Siemens liegt vor.",
        "MADE IN GERMANY. DE LA RUE",
        # a given name and where she works: a department's noun is no surname
        "Sabine von der Buchhaltung hat angerufen.",
        "Maria von der Geschäftsleitung meldet sich.",
        "Jonas von der Qualitätssicherung",
    ],
)
def test_prose_with_prepositions_and_no_name_stays(bare: Classifier, text: str) -> None:
    assert not [f for f in bare.classify(content(text)).findings if f.entity_type == "PERSON"], text


@_SETTINGS
@given(
    data=st.data(),
    given_name=st.sampled_from(_GIVEN),
    carrier=st.sampled_from(["Die Reklamation von {n} liegt vor.", "Name: {n}", "{n} a signé."]),
)
def test_a_census_surname_ending_as_a_participle_is_a_surname(
    bare: Classifier, data: st.DataObject, given_name: str, carrier: str
) -> None:
    surname = data.draw(st.sampled_from([s for s in _upper_surnames() if s.endswith(("ING", "ED"))]))
    name = f"{given_name} {surname}"
    text = carrier.format(n=name)
    assert _covered(bare, text, name), text


@pytest.mark.parametrize(
    "text",
    ["Revert MOVING files", "Build FAILED again", "Thomas LOADING", "Anna PENDING review", "Oscar BATCHING",
     "Maria DEDUPED", "Jonas STARTED at 10:00"],
)  # fmt: skip
def test_a_participle_in_capitals_after_a_given_name_is_no_surname(bare: Classifier, text: str) -> None:
    assert not [f for f in bare.classify(content(text)).findings if f.entity_type == "PERSON"], text


_DEPARTMENTS = [
    "Stadtwerken",
    "Sparkasse",
    "Buchhaltung",
    "Redaktion",
    "Universität Wien",
    "Gemeente Utrecht",
    "Qualitätssicherung",
]


@_SETTINGS
@given(
    data=st.data(),
    given_name=st.sampled_from(_GIVEN),
    chain=st.sampled_from(["von der", "von den"]),
    title=st.sampled_from(["", "Frau ", "Herr ", "Dr. "]),
)
def test_a_name_before_where_the_person_works_ends_there(
    bare: Classifier, data: st.DataObject, given_name: str, chain: str, title: str
) -> None:
    """German "von der" after a surname leads to a department or a firm ("Thomas Hell von den
    Stadtwerken"): the name is found and ends before them. Read as a surname's particles, the name
    was refused whole when its surname is a word ("Hell", "Still"). Dutch, Spanish and French
    particles after a surname continue it ("Sanne Jansen van der Meer", "Juan Pérez de la Cruz"):
    a double surname is as likely as a department there. A surname that the gazetteer
    has as a given name too ("Martin", "Vries") may take the department along, as a second given
    name takes the surname after its particles ("José Antonio de la Peña"): covered all the same."""
    department = data.draw(st.sampled_from(_DEPARTMENTS))
    surname = data.draw(st.sampled_from(_surnames()))
    name = f"{given_name} {surname}"
    text = f"{title}{name} {chain} {department} hat angerufen."
    assert _covered(bare, text, name), text
    if surname.lower() in given_names(1):
        return
    people = [text[f.start : f.end] for f in bare.classify(content(text)).findings if f.entity_type == "PERSON"]
    assert not any(department.split()[0] in p for p in people), (text, people)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # a surname that is a word, before where the person works (an adversarial review's)
        ("Thomas Hell von den Stadtwerken hat angerufen.", "Thomas Hell"),
        ("Lena Still von der Redaktion hat angerufen.", "Lena Still"),
        ("Burghard Warmer von den Stadtwerken hat angerufen.", "Burghard Warmer"),
        ("Ursula von der Leyen hat angerufen.", "Ursula von der Leyen"),
        ("Der Antrag von Ursula von der Leyen", "Ursula von der Leyen"),
        ("José Antonio de la Peña, Universidad de Chile", "José Antonio de la Peña"),
        ("Copyright Anthon van der Neut, Ruamel bvba", "Anthon van der Neut"),
        ("Maria Luisa de la Cruz signed.", "Maria Luisa de la Cruz"),
        ("Jeroen Van Grondelle (1999)", "Jeroen Van Grondelle"),
        ("// Submitted by Xia Bin <admin@example.net>", "Xia Bin"),
        # double surnames, hyphenated given names (a second adversarial review's)
        ("Juan Pérez de la Cruz", "Juan Pérez de la Cruz"),
        ("Luis Fernández de la Vega ha llamado.", "Luis Fernández de la Vega"),
        ("Contact: Jan-Willem van der Berg, Sales", "Jan-Willem van der Berg"),
        ("Marie-Claire de la Fontaine", "Marie-Claire de la Fontaine"),
        ("Mathilde de la Tour", "Mathilde de la Tour"),
        ("Sanne Jansen van der Meer", "Sanne Jansen van der Meer"),
        ("Mit freundlichen Grüßen\nFien van den Lambers\nVertrieb", "Fien van den Lambers"),
        ("Colin van der Salm and Luuk-Rosalie van der Maath (2021). A study.", "Luuk-Rosalie van der Maath"),
        ('{"customer": "Frederique de la Fleche", "id": 42}', "Frederique de la Fleche"),
        # German "Sie" in mid-sentence is no given name that a name starts with
        ("Bitte rufen Sie Anne-Marie de la Tour zurück.", "Anne-Marie de la Tour"),
        ("Können Sie Jonas Brandt Bescheid geben?", "Jonas Brandt"),
    ],
)
def test_particles_after_given_names_lead_to_the_surname(bare: Classifier, text: str, name: str) -> None:
    assert _covered(bare, text, name), text


# given names of Spain, Portugal, Brazil and Italy the gazetteer has and no dictionary here spells
_GIVEN_SOUTH = ["Juan", "Carlos", "Pedro", "Marisol", "Joaquim", "Gonçalo", "Francisca", "Giuseppe", "Letizia",
                "Rodrigo", "Inês", "Matteo"]  # fmt: skip


@_SETTINGS
@given(
    data=st.data(),
    given_name=st.sampled_from(_GIVEN_SOUTH),
    particle=st.sampled_from(["de los", "de las", "do", "dos", "del", "da"]),
    carrier=st.sampled_from(["Please call {n} tomorrow.", "{n} approved the change.", "Owner: {n}",
                             "La reclamación de {n} llegó ayer.", "Pedido de {n}"]),
)  # fmt: skip
def test_spanish_portuguese_and_italian_particles_belong_to_the_surname(
    bare: Classifier, data: st.DataObject, given_name: str, particle: str, carrier: str
) -> None:
    """ "de los", "de las" (Spanish) and "do" (Portuguese) were no particles: "Juan Carlos de los
    Santos" kept "de los Santos" and "María de las Mercedes Pérez" forwarded "María". English "do"
    is a verb, so after it only a word of no English dictionary is a surname ("Paulo do Carmo";
    not "Does Amanda do Yoga?"). Italian "dei", "degli", "delle" stay none: they open places and
    phrases as often ("Isola delle Femmine", "Uno dei Paesi")."""
    surname = data.draw(st.sampled_from(_surnames()))
    assume(particle != "do" or not is_english_word(surname))
    name = f"{given_name} {particle} {surname}"
    text = carrier.format(n=name)
    assert _covered(bare, text, name), text


@_SETTINGS
@given(
    data=st.data(),
    given_name=st.sampled_from([g.upper() for g in _GIVEN + _GIVEN_SOUTH]),
    particle=st.sampled_from(["DE", "DA", "DO", "DOS", "DE LA", "DE LOS", "DE LAS", "VAN", "VAN DER", "VON", "DEL", "DI"]),
    second=st.booleans(),
    carrier=st.sampled_from(["Name: {n}", "Titulaire : {n}", "Passenger: {n}\n", "Payee: {n}, net 30",
                             "| Employee: {n} |"]),
)  # fmt: skip
def test_a_name_in_capitals_with_particles_is_read_whole_in_a_field(
    bare: Classifier, data: st.DataObject, given_name: str, particle: str, second: bool, carrier: str
) -> None:
    """A name all in capitals whose surname has particles ("JUAN CARLOS DE LOS SANTOS", "JEAN DE LA
    FONTAINE") was no candidate: the run of capitals was read in words of three letters or more,
    and the particles broke it. A second surname is taken along ("LUIS CARLOS DE LA GARZA
    PUENTE"). The property: whatever name is read without particles is read with them."""
    surnames = _upper_surnames()
    surname = data.draw(st.sampled_from(surnames))
    assume(_covered(bare, carrier.format(n=f"{given_name} {surname}"), f"{given_name} {surname}"))
    if second:
        other = data.draw(st.sampled_from(surnames))
        assume(_covered(bare, carrier.format(n=f"{given_name} {other}"), f"{given_name} {other}"))
        surname += " " + other
    name = f"{given_name} {particle} {surname}"
    text = carrier.format(n=name)
    assert _covered(bare, text, name), text


@pytest.mark.parametrize(
    "text",
    [
        "PASEO DE LA CASTELLANA 89, MADRID",
        "BANCO DE SANTANDER",
        "MADE IN GERMANY. DE LA RUE",
        "HORARIO: DOMINGO DE LA SEMANA",
        "We moved to Los Angeles last year.",
        "Bitte schicken Sie Thomas das Angebot.",
        "Why do People leave?",
        "Name: DA LUZ",
        "SAN JUAN DE LOS LAGOS",
        # an adversarial review's: places and institutions after a given name and particles
        "Name: SANTIAGO DE LOS CABALLEROS",
        "Customer: CONCEIÇÃO DO ARAGUAIA",
        "Beneficiary: LIGA DE LAS NACIONES",
        "Buyer: ESTRELA DO NORTE",
        "SAO JOSE DOS CAMPOS - SP",
        "SAN CRISTOBAL DE LAS CASAS",
        "Contact: LOS ANGELES",
        "Owner: LAS VEGAS",
        "Owner: DEI SERVIZI",
        "Local: Joaquim do Norte",
        "Uno dei Paesi più colpiti è l'Italia.",
        "Flights to Isola delle Femmine were cancelled.",
        "Does Amanda do Yoga?",
        "Will John do Reviews today?",
    ],
)
def test_particles_without_a_name_stay(bare: Classifier, text: str) -> None:
    """A particle first is no given name ("DA", "DEL" are in the gazetteer), German "das" and
    English "do" are no particles, and a place's words around particles are no person."""
    assert not [f for f in bare.classify(content(text)).findings if f.entity_type == "PERSON"], text


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # an adversarial review's: names the first version of the particles in capitals lost
        ("ANNUALE DEL CONTRATTO DI LOCAZIONE DELLE UNITA DI PROPRIETA DEL SIGNOR PETER BENNETT", "PETER BENNETT"),
        ("FACTURA DE LA EMPRESA DE SERVICIOS DE MICHAEL KIRBY", "MICHAEL KIRBY"),
        ("Name: DELLA REESE", "DELLA REESE"),
        ("DELLA JOHNSON", "DELLA JOHNSON"),
        ("Ship to Ana Jaimes Las Vegas Nv.", "Ana Jaimes"),
        ("Paulo do Carmo assinou.", "Paulo do Carmo"),
    ],
)
def test_names_beside_particles_stay_found(bare: Classifier, text: str, name: str) -> None:
    assert _covered(bare, text, name), text


_DUTCH_GIVEN = ["JOHANNES", "STIJN", "ELISABETH", "PIETER", "ANNEKE", "WILLEM", "MAARTEN", "LIEKE"]
_DUTCH_SYLLABLES = (
    ["LUI", "ZWA", "KRA", "BOS", "HUI", "MEU", "VLIE"],
    ["NENBURG", "AN", "BBE", "SCH", "JSEN", "LEN", "RING"],
)


@_SETTINGS
@given(
    given_name=st.sampled_from(_DUTCH_GIVEN),
    particle=st.sampled_from(["VAN", "VAN DER", "VAN DEN", "VAN DE", "VON", "TEN"]),
    first=st.sampled_from(_DUTCH_SYLLABLES[0]),
    rest=st.sampled_from(_DUTCH_SYLLABLES[1]),
    carrier=st.sampled_from(["Name: {n}", "Passenger: {n}\nSeat 14C", "Payee: {n}, net 30"]),
)  # fmt: skip
def test_a_dutch_surname_of_no_list_after_van_in_a_field_is_found(
    bare: Classifier, given_name: str, particle: str, first: str, rest: str, carrier: str
) -> None:
    """Dutch surnames are few in the American census: after "VAN", "VAN DER", "VON", "TEN" (no
    preposition of a Romance language) in a form's field for a person, a word shaped as a
    surname counts ("Name: STIJN VAN LUINENBURG"); after "DE", "DO", "DE LOS" only the census
    does (the words after them name places as often)."""
    surname = first + rest
    assume(name_shaped(surname))
    name = f"{given_name} {particle} {surname}"
    text = carrier.format(n=name)
    assert _covered(bare, text, name), text
