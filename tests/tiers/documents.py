"""Generated quality documents in English, German and French with planted people, companies,
addresses and dates of birth, for measuring the list-free recognizers (tests and bench).

The names are made up here (common and less common given names and surnames of the three
languages and of people who live there), not taken from the recognizers' gazetteer; every
planted value's span is known, so recall and precision can be counted exactly.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

__all__ = ["Document", "Planted", "documents"]

GIVEN = {
    "en": [
        "Emily",
        "James",
        "Olivia",
        "Daniel",
        "Charlotte",
        "Samuel",
        "Hannah",
        "Oliver",
        "Grace",
        "Thomas",
        "Siobhan",
        "Priya",
        "Kwame",
        "Chloe",
        "Aidan",
        "Rebecca",
        "Nathan",
        "Zara",
        "Imogen",
        "Callum",
        "Ifeoma",
        "Rhys",
        "Megan",
        "Arjun",
        "Fiona",
    ],
    "de": [
        "Jonas",
        "Sabine",
        "Lukas",
        "Katrin",
        "Matthias",
        "Ute",
        "Felix",
        "Annika",
        "Jürgen",
        "Mehmet",
        "Ayşe",
        "Wojciech",
        "Dagmar",
        "Tobias",
        "Leonie",
        "Ralf",
        "Birgit",
        "Kai",
        "Svenja",
        "Henrik",
        "Elif",
        "Dirk",
        "Marlene",
        "Volker",
        "Anja",
    ],
    "fr": [
        "Élodie",
        "Julien",
        "Camille",
        "Mathieu",
        "Céline",
        "Antoine",
        "Margaux",
        "Thibault",
        "Inès",
        "Karim",
        "Aurélie",
        "Gaël",
        "Nadia",
        "Benoît",
        "Sandrine",
        "Yannick",
        "Amélie",
        "Rachid",
        "Solène",
        "Hugo",
        "Clémence",
        "Fabrice",
        "Léa",
        "Mamadou",
        "Océane",
    ],
}
SURNAMES = {
    "en": [
        "Whitfield",
        "Okonkwo",
        "Hargreaves",
        "Patel",
        "Donnelly",
        "Ashworth",
        "Brennan",
        "Cole",
        "Fairbairn",
        "Nakamura",
        "Pemberton",
        "Quist",
        "Rowntree",
        "Sinclair",
        "Thornbury",
    ],
    "de": [
        "Albrecht",
        "Krüger",
        "Hoffmann",
        "Yılmaz",
        "Wiśniewski",
        "Brandt",
        "Vogel",
        "Lindqvist",
        "Schäfer",
        "Kowalczyk",
        "Neumann",
        "Obermeier",
        "Pfeiffer",
        "Rasmussen",
        "Zimmermann",
    ],
    "fr": [
        "Marchand",
        "Lefèvre",
        "Dufresne",
        "Benali",
        "Rousseau",
        "Garnier",
        "Lemoine",
        "Traoré",
        "Chevalier",
        "Fontaine",
        "Mercier",
        "Nguyen",
        "Perrin",
        "Vasseur",
        "Gauthier",
    ],
}
COMPANY_WORDS = [
    "Northwind",
    "Brightline",
    "Kessler",
    "Vantor",
    "Helix",
    "Meridian",
    "Orbis",
    "Falkenberg",
    "Lumen",
    "Castellane",
    "Rheintal",
    "Sarto",
    "Veloce",
    "Tamsin",
]
COMPANY_KIND = {
    "en": ["Precision", "Components", "Labs", "Industries", "Plastics"],
    "de": ["Metallbau", "Präzisionsteile", "Kunststofftechnik", "Logistik", "Feinmechanik"],
    "fr": ["Industrie", "Plasturgie", "Mécanique", "Emballages", "Composants"],
}
LEGAL = {"en": ["Ltd", "LLC", "Inc.", "plc"], "de": ["GmbH", "AG", "GmbH & Co. KG", "SE"], "fr": ["SAS", "SA", "SARL"]}
STREETS = {
    "de": ["Hauptstraße", "Industriestr.", "Am Lindenhof", "Bahnhofstraße", "Eichenweg"],
    "fr": ["rue de la Paix", "avenue Jean Jaurès", "boulevard Voltaire", "chemin des Vignes"],
    "en": ["Baker Street", "Mill Lane", "Station Road", "Oak Avenue", "Harbour Drive"],
}
TOWNS = {
    "de": ["80331 München", "70565 Stuttgart", "50667 Köln"],
    "fr": ["75002 Paris", "69003 Lyon", "31000 Toulouse"],
    "en": ["London NW1 6XE", "Leeds LS1 4DY", "Springfield, IL 62704"],
}
MONTHS = {
    "en": ["March", "July", "November"],
    "de": ["März", "Juli", "November"],
    "fr": ["mars", "juillet", "novembre"],
}

# {p}/{p2}: a person (given surname), {t}: a person after a title, {c}: a company, {a}: an
# address, {d}: a date of birth. Everything else is the document's clean text.
TEMPLATES = {
    "en": [
        "Deviation Report DR-{n}\nSite: Building 4, Cleanroom B\nDescription: during the filling step "
        "the operator {p} observed particles in three vials. The line was stopped at 10:42 and "
        "Quality was informed. Supplier: {c}.\nImmediate action: batch quarantined.\nPrepared by {p2}\n"
        "Reviewed by {t}\n",
        "CAPA draft for the May review\nProblem: repeated seal failures on the Apollo line reported by "
        "customer {c}.\nRoot cause: worn sealing jaws. Owner: {p}.\nThe supplier contact {p2} confirmed "
        "the new jaws ship from {a}.\nEffectiveness check in August by Dr. {tn}.\n",
        "Subject: Delivery of housings\n\nDear {t},\n\nthank you for the samples. Our incoming "
        "inspection found two housings outside tolerance. Please send the 8D report to {p}, our "
        "supplier quality engineer. The employee who handled the return, {p2} (born {d}), lives at "
        "{a}.\n\nBest regards,\n{p3}\n",
    ],
    "de": [
        "Abweichungsbericht AB-{n}\nBeschreibung: Beim Abfüllen hat {p} Partikel in drei Ampullen "
        "festgestellt. Die Linie wurde angehalten und die Qualitätssicherung informiert. "
        "Lieferant {c} wurde benachrichtigt.\nSofortmaßnahme: Charge gesperrt.\nErstellt von {p2}\n"
        "Geprüft von {t}\n",
        "CAPA-Entwurf für die Sitzung im Mai\nProblem: wiederholte Undichtigkeiten, gemeldet vom "
        "Kunden {c}.\nUrsache: verschlissene Siegelbacken. Verantwortlich: {p}.\nDer Ansprechpartner "
        "beim Lieferanten, {p2}, bestätigt den Versand ab {a}.\nWirksamkeitsprüfung im August durch "
        "Frau {tn}.\n",
        "Betreff: Lieferung Gehäuse\n\nSehr geehrte {t},\n\nvielen Dank für die Muster. Bei der "
        "Wareneingangsprüfung waren zwei Gehäuse außerhalb der Toleranz. Bitte senden Sie den "
        "8D-Bericht an {p}. Die Mitarbeiterin {p2} (geboren am {d}) wohnt in der {a}.\n\n"
        "Mit freundlichen Grüßen\n{p3}\n",
    ],
    "fr": [
        "Rapport d'écart RE-{n}\nDescription : lors du remplissage, {p} a constaté des particules "
        "dans trois flacons. La ligne a été arrêtée et la Qualité informée. Le fournisseur {c} a été "
        "prévenu.\nAction immédiate : lot bloqué.\nRédigé par {p2}\nVérifié par {t}\n",
        "Projet de CAPA pour la revue de mai\nProblème : fuites répétées signalées par le client {c}.\n"
        "Cause racine : mâchoires de scellage usées. Responsable : {p}.\nL'interlocuteur chez le "
        "fournisseur, {p2}, confirme l'envoi depuis le {a}.\nVérification de l'efficacité en août par "
        "Mme {tn}.\n",
        "Objet : Livraison des boîtiers\n\nBonjour {t},\n\nmerci pour les échantillons. Le contrôle "
        "de réception a trouvé deux boîtiers hors tolérance. Merci d'envoyer le rapport 8D à {p}. "
        "La salariée {p2}, née le {d}, habite au {a}.\n\nCordialement,\n{p3}\n",
    ],
}
TITLES = {"en": ["Ms", "Mr", "Dr"], "de": ["Frau", "Herr"], "fr": ["Mme", "M."]}

FAMILY = {
    "p": "PERSON",
    "p2": "PERSON",
    "p3": "PERSON",
    "t": "PERSON",
    "tn": "PERSON",
    "c": "ORGANIZATION",
    "a": "ADDRESS",
    "d": "DATE_OF_BIRTH",
}
_SLOT = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class Planted:
    family: str
    start: int
    end: int
    value: str


@dataclass(frozen=True)
class Document:
    lang: str
    text: str
    planted: tuple[Planted, ...]


def _person(rnd: random.Random, lang: str) -> str:
    return f"{rnd.choice(GIVEN[lang])} {rnd.choice(SURNAMES[lang])}"


def _value(slot: str, rnd: random.Random, lang: str) -> tuple[str, str]:
    """(text written into the document, the part that must be found)."""
    if slot in ("p", "p2", "p3"):
        v = _person(rnd, lang)
        return v, v
    if slot == "t":  # "Ms Okonkwo" / "Herr Albrecht": the title stays
        title, surname = rnd.choice(TITLES[lang]), rnd.choice(SURNAMES[lang])
        return f"{title} {surname}", surname
    if slot == "tn":
        v = rnd.choice(SURNAMES[lang])
        return v, v
    if slot == "c":
        v = f"{rnd.choice(COMPANY_WORDS)} {rnd.choice(COMPANY_KIND[lang])} {rnd.choice(LEGAL[lang])}"
        return v, v
    if slot == "a":
        street = rnd.choice(STREETS[lang])
        num = str(rnd.randint(1, 120))
        v = (
            f"{num} {street}, {rnd.choice(TOWNS[lang])}"
            if lang != "de"
            else f"{street} {num}, {rnd.choice(TOWNS[lang])}"
        )
        return v, v
    if slot == "d":
        day, year = rnd.randint(1, 28), rnd.randint(1950, 2002)
        month = rnd.randint(1, 12)
        v = rnd.choice(
            [
                f"{day:02d}.{month:02d}.{year}",
                f"{day} {rnd.choice(MONTHS[lang])} {year}",
                f"{year}-{month:02d}-{day:02d}",
            ]
        )
        if lang == "en" and v[2] == ".":
            v = f"{day:02d}/{month:02d}/{year}"
        return v, v
    if slot == "n":
        v = str(rnd.randint(100, 999))
        return v, ""
    raise KeyError(slot)


def documents(n: int, seed: int = 12) -> list[Document]:
    """``n`` documents per language and template, with their planted values' spans."""
    rnd = random.Random(seed)
    out: list[Document] = []
    for lang, templates in TEMPLATES.items():
        for template in templates:
            for _ in range(n):
                text, planted, pos = [], [], 0
                last = 0
                for m in _SLOT.finditer(template):
                    text.append(template[last : m.start()])
                    pos += m.start() - last
                    shown, value = _value(m.group(1), rnd, lang)
                    if value:
                        offset = shown.index(value)
                        planted.append(Planted(FAMILY[m.group(1)], pos + offset, pos + offset + len(value), value))
                    text.append(shown)
                    pos += len(shown)
                    last = m.end()
                text.append(template[last:])
                out.append(Document(lang, "".join(text), tuple(planted)))
    return out
