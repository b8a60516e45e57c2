"""People and firms named in German and French running text, without any list: a name as a
clause's subject (``people_prose.py``), firms after "bei der" / "avec" / "chez" / what a firm
issues, with a brand's own spelling or a trade after the name (``firms.py``,
``organizations.py``); and the capitalised words of clean prose in the same shapes (products,
places, months, feminine nouns) that must stay."""

from __future__ import annotations

import importlib.resources
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig
from tiers.recognizers._german_nouns import is_feminine_noun
from tiers.recognizers._given_names import given_names
from tiers.recognizers.people import _PLACE_FIRST, _PLACE_PREFIXES
from tiers.recognizers._surnames import is_plain_surname
from tiers.recognizers._vocabulary import NOT_SURNAMES, is_common

from .conftest import content

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def bare() -> Classifier:
    """The shipped defaults, no name list."""
    return Classifier(TiersConfig())


def _covered(clf: Classifier, text: str, value: str, entity: str) -> bool:
    start = text.index(value)
    covered = bytearray(len(text))
    for f in clf.classify(content(text)).findings:
        if f.entity_type == entity:
            covered[f.start : f.end] = b"\x01" * (f.end - f.start)
    return all(covered[start : start + len(value)])


def _findings(clf: Classifier, text: str) -> list[tuple[str, str]]:
    return [(f.entity_type, text[f.start : f.end]) for f in clf.classify(content(text)).findings]


@lru_cache(maxsize=1)
def _census_surnames() -> list[str]:
    """Common census surnames that are no ordinary word (the names package's file, read here)."""
    lines = importlib.resources.files("names").joinpath("dist.all.last").read_text("ascii").splitlines()
    out = [line.split()[0].capitalize() for line in lines[:4000] if line.split()]
    return [s for s in out if is_plain_surname(s) and len(s) > 3]


# invented given names: syllables of newer French and German names, in no gazetteer on purpose
_INVENTED_GIVEN = st.builds(
    lambda a, b: (a + b).capitalize(),
    st.sampled_from(["ka", "me", "ly", "no", "ke", "ze", "ti", "ma", "ai", "ew", "ny", "so"]),
    st.sampled_from(["lya", "ham", "nzo", "dane", "lyne", "ris", "dan", "enn", "ssa", "rik", "lio", "mir"]),
).filter(lambda g: not is_common(g) and g.lower() not in NOT_SURNAMES and not is_feminine_noun(g))
# Given names that are also places or words (France, Georgia; German feminine nouns) are left
# out, as for the invented ones: before a verb the recognizers read them as the place or the
# noun ("France Télévisions a constaté"), on purpose; a title before them still makes a person.
# So are the first words of places ("Santa", "Sierra", "Hong": "Santa Clara a ouvert").
_GAZETTEER_GIVEN = st.sampled_from(
    sorted(
        n.capitalize()
        for n in given_names(3)
        if not is_common(n)
        and "-" not in n
        and n not in NOT_SURNAMES
        and not is_feminine_noun(n.capitalize())
        and n not in _PLACE_PREFIXES | _PLACE_FIRST
    )
)
# invented surnames, for the gazetteer given names
_INVENTED_SURNAME = st.builds(
    lambda a, b, c: (a + b + c).capitalize(),
    st.sampled_from(["kr", "br", "tr", "gl", "v", "m", "l", "d", "p"]),
    st.sampled_from(["ol", "ab", "un", "ix", "ev", "ur", "oz", "el"]),
    st.sampled_from(["ert", "mann", "ke", "ier", "eau", "et", "ow", "in"]),
).filter(lambda s: not is_common(s))
_NAME = st.one_of(
    st.tuples(_INVENTED_GIVEN, st.deferred(lambda: st.sampled_from(_census_surnames()))),
    st.tuples(_GAZETTEER_GIVEN, _INVENTED_SURNAME),
)

_SUBJECT_CARRIERS = [
    "Lors de l'inspection, {N} a constaté un écart sur la ligne 3.",
    "{N} s'est engagé à envoyer les certificats avant vendredi.",
    "Comme prévu, {N} de la société Lebon viendra mardi.",
    "Le lot a été bloqué et {N} a demandé une analyse.",
    "Hier, {N} a confirmé la date de livraison.",
    "{N} hat die Charge gestern freigegeben.",
    "Beim Rundgang stellte {N} fest, dass zwei Etiketten fehlten.",
    "Wie vereinbart kommt {N} von der Qualitätssicherung.",
    "Die Proben sind da, und {N} hat sie geprüft.",
]


@_SETTINGS
@given(name=_NAME, carrier=st.sampled_from(_SUBJECT_CARRIERS))
def test_names_as_subjects_are_stripped(bare: Classifier, name: tuple[str, str], carrier: str) -> None:
    """An invented given name before a census surname, or a gazetteer given name before an
    invented surname, as the subject of a French or German clause, is stripped whole."""
    value = " ".join(name)
    text = carrier.format(N=value)
    assert _covered(bare, text, value, "PERSON"), (text, _findings(bare, text))


_SYLLABLE = st.sampled_from(["var", "nix", "tel", "dor", "qua", "bri", "lum", "ost", "zen", "kor", "vel", "sap"])
_BRAND = st.one_of(
    # inner capitals: "BlueNext", "SindoPower"
    st.builds(lambda a, b, c: a.capitalize() + b + c.capitalize(), _SYLLABLE, _SYLLABLE, _SYLLABLE),
    # capitals: "KUKA", "CILAS"
    st.builds(lambda a, b: (a + b[:2]).upper(), _SYLLABLE, _SYLLABLE),
    # a name and its trade: "Varnix Logistics", "Dortel Technologies"
    st.builds(
        lambda a, b, t: (a + b).capitalize() + " " + t,
        _SYLLABLE,
        _SYLLABLE,
        st.sampled_from(["Logistics", "Technologies", "Medical", "Systems", "Group"]),
    ),
).filter(lambda b: not any(is_common(w) for w in b.split()[:1]) and not is_feminine_noun(b.split()[0]))

_FIRM_CARRIERS = [
    "Beim Audit zeigte sich, dass bei der {F} die Nachweise fehlten.",
    "Sie hat gestern mit der {F} den Liefertermin bestätigt.",
    "Wie besprochen kommt Herr Brandt von der {F} am Dienstag.",
    "Arbeitgeber: {F}\n",
    "Nous avons confirmé la date de livraison avec {F} ; les palettes partent lundi.",
    "Les certificats d'étalonnage de {F} manquaient pour deux clés.",
    "La facture de {F} est arrivée hier.",
    "Le stage a lieu chez {F} en mars.",
    "Employeur : {F}\n",
    "Le client {F} demande un appareil de remplacement.",
]


@_SETTINGS
@given(firm=_BRAND, carrier=st.sampled_from(_FIRM_CARRIERS))
def test_brand_named_firms_are_stripped(bare: Classifier, firm: str, carrier: str) -> None:
    """A brand spelt with inner capitals, in capitals, or a name and its trade, where German or
    French prose says a firm stands, is stripped whole (in capitals not after "avec" / "chez":
    there an acronym is a tool as often, "avec SAP")."""
    assume(not (firm.isupper() and ("avec" in carrier or "chez" in carrier)))
    text = carrier.format(F=firm)
    assert _covered(bare, text, firm, "ORGANIZATION"), (text, _findings(bare, text))


@_SETTINGS
@given(surname=st.deferred(lambda: st.sampled_from(_census_surnames())))
def test_surname_firm_after_what_it_issues(bare: Classifier, surname: str) -> None:
    """A family firm's surname after the certificates, invoices or quotes it issued."""
    for carrier in ("Les certificats d'étalonnage de {F} manquaient.", "Le devis de {F} est arrivé."):
        text = carrier.format(F=surname)
        assert _covered(bare, text, surname, "ORGANIZATION"), (text, _findings(bare, text))


# capitalised words of clean prose in the same shapes: places of two words, software, months,
# German feminine nouns after "bei der", places after "de" where a site or project is meant
_PLACES = [
    "Hong Kong",
    "Sri Lanka",
    "Costa Rica",
    "Porto Rico",
    "Buenos Aires",
    "Le Havre",
    "Mont Blanc",
    "New York",
    "Los Angeles",
    "San Francisco",
    "Sierra Leone",
    "Burkina Faso",
    "Hamburg Hafen",
]
_PRODUCTS = [
    "Microsoft Teams",
    "Google Chrome",
    "Visual Studio",
    "Power BI",
    "Adobe Acrobat",
    "Excel Online",
    "Jira Cloud",
    "Windows Update",
    "Outlook Web",
]
_MONTHS = ["janvier", "März", "Juni", "septembre", "Dezember", "mai"]
_FEMININE = ["Prüfung", "Wartung", "Inventur", "Abnahme", "Reinigung", "Kalibrierung", "Schulung"]
_CLEAN = st.one_of(
    st.builds("Ensuite, {} a connu une forte hausse des ventes.".format, st.sampled_from(_PLACES)),
    st.builds("Depuis {}, {} a été mis à jour.".format, st.sampled_from(_MONTHS), st.sampled_from(_PRODUCTS)),
    st.builds("Im {} hat {} neue Funktionen bekommen.".format, st.sampled_from(_MONTHS), st.sampled_from(_PRODUCTS)),
    st.builds("Nous travaillons avec {} depuis {}.".format, st.sampled_from(_PRODUCTS), st.sampled_from(_MONTHS)),
    st.builds("Bei der {} im {} fehlten zwei Formulare.".format, st.sampled_from(_FEMININE), st.sampled_from(_MONTHS)),
    st.builds("Seit der {} hat {} weniger Ausfälle.".format, st.sampled_from(_FEMININE), st.sampled_from(_PRODUCTS)),
    st.builds("L'usine de {} a atteint son objectif en {}.".format, st.sampled_from(_PLACES), st.sampled_from(_MONTHS)),
    st.builds(
        "Le projet de {} démarre en {} ; la facture de {} suit.".format,
        st.sampled_from(_PLACES),
        st.sampled_from(_MONTHS),
        st.sampled_from(_MONTHS),
    ),
)


@_SETTINGS
@given(text=_CLEAN)
def test_clean_prose_in_the_same_shapes_stays(bare: Classifier, text: str) -> None:
    """Places, products, months and feminine nouns where the new shapes look are no names:
    nothing is found, the text is forwarded byte-identical."""
    assert _findings(bare, text) == []


@pytest.mark.parametrize(
    ("text", "value", "entity"),
    [
        ("La réclamation vient de Dr Lou-Ann Le Borgne, née le", "Lou-Ann Le Borgne", "PERSON"),
        ("Adresse de livraison :\nM. Aymane Le Bris\n", "Aymane Le Bris", "PERSON"),
        ("Adresse de livraison :\nDr Emy Noel\n", "Emy Noel", "PERSON"),
        ("Cordialement,\nJordan April\n", "Jordan April", "PERSON"),
        ("mit der Deutsche Bahn den Termin", "Deutsche Bahn", "ORGANIZATION"),
        ("Der Kunde Fresenius Medical Care bat um", "Fresenius Medical Care", "ORGANIZATION"),
        ("Le client Compagnie des Alpes demande", "Compagnie des Alpes", "ORGANIZATION"),
        (
            "Er kommt von der van der Dussen Stiftung & Co. KGaA am",
            "van der Dussen Stiftung & Co. KGaA",
            "ORGANIZATION",
        ),
        ("La réunion a lieu chez le Groupe Vorlanx demain.", "Groupe Vorlanx", "ORGANIZATION"),
        ("Les Établissements Martin livrent lundi.", "Établissements Martin", "ORGANIZATION"),
        # the sentence openers added to the vocabulary ("Beim", "Hier", "Seit") leave firms' words
        ("Der Lieferant Uber Technologies Inc. schickte sie.", "Uber Technologies Inc.", "ORGANIZATION"),
        ("Le bail est signé par Immobilier Dupont SCI hier.", "Immobilier Dupont SCI", "ORGANIZATION"),
        ("La facture de Varnex Systems S.N.C. est arrivée.", "Varnex Systems S.N.C.", "ORGANIZATION"),
    ],
)
def test_particles_trades_and_brands(bare: Classifier, text: str, value: str, entity: str) -> None:
    assert _covered(bare, text, value, entity), _findings(bare, text)


@pytest.mark.parametrize(
    "text",
    [
        "mit der Deutschen Bahn den Termin",  # inflected: a noun phrase, found by nothing here
        "Dazu, dass bei der FMEA zwei Punkte fehlten",
        "Bei der Qualitäts-Prüfung fehlten zwei Formulare.",
        "Le Mans a accueilli la course.",
        "Paris Saint-Germain a gagné hier.",
        "client: TestClient",
        "Die AG hat geantwortet.",
        "Le Groupe de travail se réunit ; le Groupe Projet aussi.",
        "Ensuite, Hong Kong a connu une hausse.",
    ],
)
def test_near_misses_stay(bare: Classifier, text: str) -> None:
    assert [f for f in _findings(bare, text) if f[0] in ("PERSON", "ORGANIZATION")] == []


_FIELD_CARRIERS = [
    "Personalbogen\nName: {N}\nGeburtsdatum: 12.03.1971\n",
    "Fiche salarié\nNom : {N}\nAdresse : 4 rue Pasteur, 69002 Lyon\n",
    "Employee record\nDate of birth: 1970-02-03\nName: {N}\n",
]


@_SETTINGS
@given(given_name=_INVENTED_GIVEN, surname=_INVENTED_SURNAME, carrier=st.sampled_from(_FIELD_CARRIERS))
def test_unknown_names_in_name_fields(bare: Classifier, given_name: str, surname: str, carrier: str) -> None:
    """A name neither list knows (an invented given name and surname) in the name field of a
    person's record (another personal field near it)."""
    value = f"{given_name} {surname}"
    text = carrier.format(N=value)
    assert _covered(bare, text, value, "PERSON"), (text, _findings(bare, text))


@pytest.mark.parametrize(
    "text",
    [
        "Name: Build Status\nDate of birth: 1970\n",
        "Name: HTTP Client\nAddress: 1 Main Street\n",
        # no other field of a person's record: a pipeline's, a chart's, a product's name
        "Name: Nightly Build\nTrigger: cron\n",
        "Name: Kube Proxy\nImage: registry/kube-proxy\n",
        "Name: Acme Widget\nPrice: 12 EUR\n",
    ],
)
def test_field_values_that_are_no_names(bare: Classifier, text: str) -> None:
    assert [f for f in _findings(bare, text) if f[0] == "PERSON"] == []
