"""Documents in English, German and French whose people, companies, addresses and dates of birth
come from the Faker package (PyPI, MIT licence), not from this project.

Faker's locale providers (``en_US``, ``en_GB``, ``de_DE``, ``fr_FR``) carry their own lists of
given names, surnames, company formats, streets, towns and postcodes, gathered by Faker's
contributors; the recognizers were not written from them. The carrier sentences are written
here: records, e-mails, running prose without any role word, shipping blocks and table rows. Every
value's span is known, so recall is counted exactly. ``clean_documents`` are business prose with
Faker's towns, countries, months, weekdays, job titles and catch phrases and no identifier, to be
forwarded byte-identical. Seeded: the same seed gives the same documents.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from faker import Faker

__all__ = ["FakerDocument", "LOCALES", "Planted", "clean_documents", "faker_documents"]

# locale -> language of the carriers
LOCALES = {"en_US": "en", "en_GB": "en", "de_DE": "de", "fr_FR": "fr"}


@dataclass(frozen=True, slots=True)
class Planted:
    family: str  # PERSON, ORGANIZATION, ADDRESS, DATE_OF_BIRTH
    start: int
    end: int
    value: str


@dataclass(frozen=True, slots=True)
class FakerDocument:
    locale: str
    lang: str
    text: str
    planted: tuple[Planted, ...]


_MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
}

# {P} {P2}: a person, {TP}: a title and a person (the title is not planted), {C}: a company,
# {A}: an address on one line, {AB}: an address as a block of lines, {D}: a date of birth,
# {F}: the first person's given name alone (after a greeting: stripped, it is that person's name)
CARRIERS = {
    "en": [
        "Employee record\nName: {P}\nDate of birth: {D}\nHome address: {A}\nEmployer: {C}\n",
        "Hi {F},\n\nthanks for the call this morning. As discussed, {P2} from {C} will visit the plant on "
        "Tuesday to review the sealing issue. Please send the retained samples to {A}.\n\nBest regards,\n{P}\n",
        "During the supplier audit {P} noted that the calibration records at {C} were incomplete for two "
        "of the torque wrenches. {P2} agreed to provide the certificates by the end of the month.\n",
        "{P} confirmed the new delivery date with {C} yesterday; the first pallets leave the warehouse on Monday.\n",
        "Ship to:\n{TP}\n{C}\n{AB}\n\nReference: PO 4471, two cartons, fragile.\n",
        'name,company,born,city\n{P},"{C}",{D},Springfield\n',
        "The complaint was raised by {TP}, born {D}, who lives at {A}. The customer {C} asked for a "
        "replacement unit.\n",
    ],
    "de": [
        "Personalbogen\nName: {P}\nGeburtsdatum: {D}\nAnschrift: {A}\nArbeitgeber: {C}\n",
        "Hallo {F},\n\ndanke für das Gespräch heute Morgen. Wie besprochen kommt {P2} von der {C} am Dienstag "
        "ins Werk, um die Dichtungsprobleme anzusehen. Bitte schicken Sie die Rückstellmuster an {A}.\n\n"
        "Mit freundlichen Grüßen\n{P}\n",
        "Beim Lieferantenaudit stellte {P} fest, dass bei der {C} die Kalibriernachweise für zwei "
        "Drehmomentschlüssel fehlten. {P2} sagte die Zertifikate bis Monatsende zu.\n",
        "{P} hat gestern mit der {C} den neuen Liefertermin bestätigt; die ersten Paletten verlassen das "
        "Lager am Montag.\n",
        "Lieferanschrift:\n{TP}\n{C}\n{AB}\n\nBestellung 4471, zwei Kartons, zerbrechlich.\n",
        'Name;Firma;geboren;Ort\n{P};"{C}";{D};Stuttgart\n',
        "Die Reklamation kam von {TP}, geboren am {D}, wohnhaft {A}. Der Kunde {C} bat um ein Ersatzgerät.\n",
    ],
    "fr": [
        "Fiche salarié\nNom : {P}\nDate de naissance : {D}\nAdresse : {A}\nEmployeur : {C}\n",
        "Bonjour {F},\n\nmerci pour l'appel de ce matin. Comme convenu, {P2} de la société {C} viendra à "
        "l'usine mardi pour examiner le problème d'étanchéité. Merci d'envoyer les échantillons à {A}.\n\n"
        "Cordialement,\n{P}\n",
        "Lors de l'audit fournisseur, {P} a constaté que les certificats d'étalonnage de {C} manquaient pour "
        "deux clés dynamométriques. {P2} s'est engagé à les fournir avant la fin du mois.\n",
        "{P} a confirmé hier la nouvelle date de livraison avec {C} ; les premières palettes partent lundi.\n",
        "Adresse de livraison :\n{TP}\n{C}\n{AB}\n\nCommande 4471, deux cartons, fragile.\n",
        'nom;société;né le;ville\n{P};"{C}";{D};Lyon\n',
        "La réclamation vient de {TP}, né le {D}, domicilié {A}. Le client {C} demande un appareil de remplacement.\n",
    ],
}

_SLOT = re.compile(r"\{(P2|P|TP|C|AB|A|D|F)\}")
_TITLES = {
    "en_US": ["Mr.", "Ms.", "Dr.", "Mrs."],
    "en_GB": ["Mr", "Ms", "Dr", "Mrs"],
    "de_DE": ["Herr", "Frau", "Dr.", "Herrn"],
    "fr_FR": ["M.", "Mme", "Dr", "Monsieur", "Madame"],
}


def _dob(fake: Faker, rnd: random.Random, lang: str) -> str:
    d = fake.date_of_birth(minimum_age=18, maximum_age=80)
    month = _MONTHS[lang].split()[d.month - 1]
    forms = {
        "en": [f"{d.day} {month} {d.year}", f"{month} {d.day}, {d.year}", f"{d:%m/%d/%Y}", f"{d:%Y-%m-%d}"],
        "de": [f"{d:%d.%m.%Y}", f"{d.day}. {month} {d.year}", f"{d:%Y-%m-%d}"],
        "fr": [f"{d:%d/%m/%Y}", f"{d.day} {month} {d.year}", f"{d:%d.%m.%Y}"],
    }[lang]
    return rnd.choice(forms)


def _address(fake: Faker, block: bool) -> str:
    lines = [line.strip() for line in fake.address().splitlines() if line.strip()]
    return "\n".join(lines) if block else ", ".join(lines)


def _fill(template: str, fake: Faker, rnd: random.Random, locale: str, lang: str) -> FakerDocument:
    first = fake.first_name()
    people = {"P": f"{first} {fake.last_name()}", "P2": f"{fake.first_name()} {fake.last_name()}"}
    out: list[str] = []
    planted: list[Planted] = []
    pos = 0
    length = 0
    for m in _SLOT.finditer(template):
        out.append(template[pos : m.start()])
        length += m.start() - pos
        slot = m.group(1)
        prefix = ""
        if slot in ("P", "P2"):
            family, value = "PERSON", people[slot]
        elif slot == "TP":
            family, value = "PERSON", f"{fake.first_name()} {fake.last_name()}"
            prefix = rnd.choice(_TITLES[locale]) + " "
        elif slot == "C":
            family, value = "ORGANIZATION", fake.company()
        elif slot in ("A", "AB"):
            family, value = "ADDRESS", _address(fake, slot == "AB")
        elif slot == "D":
            family, value = "DATE_OF_BIRTH", _dob(fake, rnd, lang)
        else:  # F
            family, value = "PERSON", first
        out.append(prefix)
        length += len(prefix)
        if family:
            planted.append(Planted(family, length, length + len(value), value))
        out.append(value)
        length += len(value)
        pos = m.end()
    out.append(template[pos:])
    return FakerDocument(locale, lang, "".join(out), tuple(planted))


def faker_documents(per_carrier: int, seed: int = 2026) -> list[FakerDocument]:
    """``per_carrier`` documents of every carrier in every locale, Faker seeded with ``seed``."""
    docs: list[FakerDocument] = []
    for locale, lang in LOCALES.items():
        fake = Faker(locale)
        fake.seed_instance(seed)
        rnd = random.Random(f"{seed}-{locale}")
        for template in CARRIERS[lang]:
            for _ in range(per_carrier):
                docs.append(_fill(template, fake, rnd, locale, lang))
    return docs


CLEAN = {
    "en": [
        "The {cp} project in {city} starts in {month}; the kick-off is on a {day}.",
        "Our {job} in {country} asked whether the {month} shipment can go by sea.",
        "Plant {city} reached its output target for {month}. The {cp} initiative continues.",
        "Agenda for {day}: {cp}, budget for {country}, open points from the {month} review.",
    ],
    "de": [
        "Das Projekt in {city} beginnt im {month}; das Auftakttreffen ist an einem {day}.",
        "Die Stelle als {job} in {city} wird im {month} neu ausgeschrieben.",
        "Das Werk {city} hat im {month} sein Ziel erreicht. Die Lieferungen nach {country} laufen weiter.",
        "Tagesordnung für {day}: Budget {country}, offene Punkte aus dem {month}-Review.",
    ],
    "fr": [
        "Le projet de {city} démarre en {month} ; la réunion de lancement a lieu un {day}.",
        "Le poste de {job} à {city} sera publié en {month}.",
        "L'usine de {city} a atteint son objectif en {month}. Les livraisons vers {country} continuent.",
        "Ordre du jour du {day} : budget {country}, points ouverts de la revue de {month}.",
    ],
}


def clean_documents(per_template: int, seed: int = 2026) -> list[tuple[str, str]]:
    """(locale, text) of prose without identifiers, with Faker's towns, countries and jobs."""
    out: list[tuple[str, str]] = []
    for locale, lang in LOCALES.items():
        fake = Faker(locale)
        fake.seed_instance(seed)
        for template in CLEAN[lang]:
            for _ in range(per_template):
                text = template.format(
                    cp=fake.catch_phrase() if lang == "en" else "",
                    city=fake.city(),
                    country=fake.country(),
                    job=fake.job(),
                    month=fake.month_name(),
                    day=fake.day_of_week(),
                )
                out.append((locale, " ".join(text.split())))
    return out
