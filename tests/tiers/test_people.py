"""People, companies, addresses and dates of birth without any list configured: table-driven
positives and near-misses per recognizer, and generated EN/DE/FR quality documents
(tests/tiers/documents.py) whose planted values must be stripped and whose other text must stay."""

from __future__ import annotations

from collections import Counter

import pytest

from tiers import Classifier, TiersConfig

from .conftest import content
from .documents import documents
from .test_recognizers import found


@pytest.fixture(scope="module")
def bare() -> Classifier:
    """The shipped defaults, no name list: what a new user gets."""
    return Classifier(TiersConfig())


POSITIVES = [
    # given name + surname, in the three languages, with particles, hyphens and upper-case surnames
    ("PERSON", "the operator {} observed particles", "Emily Whitfield"),
    ("PERSON", "heute hat {} die Charge geprüft", "Jürgen Schäfer"),
    ("PERSON", "lors du contrôle, {} a constaté", "Aurélie Dufresne"),
    ("PERSON", "{} signed the batch record", "Hans-Peter Obermeier"),
    ("PERSON", "contact {} tomorrow", "Jean-Luc MARCHAND"),
    ("PERSON", "escalated to {} on site", "Anna von Berg"),
    ("PERSON", "Die Mitarbeiterin {} (Schicht B) meldete", "Leonie Hoffmann"),
    ("PERSON", "attendees: {}; Weber, Jonas", "Gonzalez, Maria"),
    # titles, role words and sign-offs carry unknown given names and bare surnames
    ("PERSON", "Dear Ms {},", "Okonkwo"),
    ("PERSON", "Sehr geehrter Herr {},", "Yılmaz"),
    ("PERSON", "Bonjour Mme {},", "Lefèvre"),
    ("PERSON", "approved by {} (QA)", "Kwame Asante"),
    ("PERSON", "Erstellt von {}\n", "Ifeoma Brandt"),
    ("PERSON", "Rédigé par {}\n", "Thibault Garnier"),
    # given names that are months or words too, before a common census surname
    ("PERSON", "gestern hat {} die Charge geprüft", "August Hoffmann"),
    ("PERSON", "{} a confirmé la date", "Roman Martin"),
    ("PERSON", "Best regards,\n{}\n", "Rhys Pemberton"),
    ("PERSON", "Mit freundlichen Grüßen\n{}\n", "Ifeoma Okafor"),  # no gazetteer name: the sign-off
    ("PERSON", "Viele Grüße\n{}\n", "Kwame Asante"),
    ("PERSON", "reviewed by Prof. Dr. {} yesterday", "Kai Brandt"),
    # companies by legal form and by role word
    ("ORGANIZATION", "we ordered from {} last week", "Acme Widgets Ltd"),
    ("ORGANIZATION", "Lieferant ist die {}.", "Schneider Metallbau GmbH & Co. KG"),
    ("ORGANIZATION", "le fournisseur {} a livré", "Dufresne Industrie SAS"),
    ("ORGANIZATION", "{} filed the report", "BASF SE"),
    ("ORGANIZATION", "the complaint from customer {} arrived", "Northwind Traders"),
    ("ORGANIZATION", "Supplier: {}\n", "Contoso"),
    ("ORGANIZATION", "Kunde {} reklamiert", "Brandt Logistik"),
    ("ORGANIZATION", "le client {} a signalé", "Lambert"),
    # postal addresses
    ("ADDRESS", "wohnt in der {}.", "Hauptstraße 5, 80331 München"),
    ("ADDRESS", "Lieferadresse: {}", "Am Lindenhof 12a, 70565 Stuttgart"),
    ("ADDRESS", "siège : {}.", "12 rue de la Paix, 75002 Paris"),
    ("ADDRESS", "habite au {}", "3 bis avenue Jean Jaurès, 69003 Lyon"),
    ("ADDRESS", "ship to {} please", "221B Baker Street, London NW1 6XE"),
    ("ADDRESS", "HQ: {}.", "1600 Amphitheatre Parkway, Mountain View, CA 94043"),
    # dates of birth, only next to a birth word
    ("DATE_OF_BIRTH", "born {} in Leeds", "14 March 1962"),
    ("DATE_OF_BIRTH", "DOB: {}", "1962-03-14"),
    ("DATE_OF_BIRTH", "geboren am {}", "14.03.1962"),
    ("DATE_OF_BIRTH", "geb. {}", "14. März 1962"),
    ("DATE_OF_BIRTH", "née le {}", "03/04/1975"),
    ("DATE_OF_BIRTH", "date de naissance : {}", "3 mars 1975"),
    ("DATE_OF_BIRTH", "date of birth {}", "March 14, 1962"),
]


@pytest.mark.parametrize(
    ("entity", "template", "value"), POSITIVES, ids=[f"{p[0]}-{i}" for i, p in enumerate(POSITIVES)]
)
def test_true_positive(bare: Classifier, entity: str, template: str, value: str) -> None:
    """The recognizer reports exactly the planted value, without any list configured."""
    assert (entity, value) in found(bare, template.format(value))


NEAR_MISSES = [
    ("PERSON", "The May Quality Review Board met in Paris on Monday."),
    ("PERSON", "Victoria Station, Georgia Tech and the Lincoln Center were venues."),
    ("PERSON", "Will the Release Plan be ready? Mark the Grace Period in the plan."),
    ("PERSON", "The Apollo Filter Cartridge passed the Design Review."),
    ("PERSON", "Dear Sir or Madam, Hello Team, Hi all"),
    ("PERSON", "Am Montag tagte der Lenkungskreis in München."),
    ("PERSON", "Le comité de pilotage s'est réuni à Lyon lundi."),
    ("PERSON", "Im August Bericht und Plan; the Roman Empire; the August Review; Roman Numerals"),
    ("ORGANIZATION", "the customer Service team and the supplier Quality Agreement"),
    ("ORGANIZATION", "Abweichungsbericht AB-573 and the client IP address"),
    ("ORGANIZATION", "Kunde Bewertung and Lieferanten Audit"),
    ("ADDRESS", "Release 2 of the Design Street Fair, line 5 of the table"),
    ("ADDRESS", "Step 12 rue means nothing; route 66 is a song"),
    ("DATE_OF_BIRTH", "released 14.03.2024, due 2025-01-31, March 14, 2024"),
    ("DATE_OF_BIRTH", "born 31.02.1962 is no day"),
]


@pytest.mark.parametrize(("entity", "text"), NEAR_MISSES, ids=[f"{n[0]}-{i}" for i, n in enumerate(NEAR_MISSES)])
def test_near_miss(bare: Classifier, entity: str, text: str) -> None:
    """Capitalised ordinary words, role words before ordinary nouns, and dates without a birth
    word are no findings of that type."""
    assert entity not in {e for e, _ in found(bare, text)}


FAMILIES = ("PERSON", "ORGANIZATION", "ADDRESS", "DATE_OF_BIRTH")
# Floors below what the shipped recognizers reach on these documents (bench/RESULTS.md has the
# figures): a regression fails here, an improvement does not need a test change.
RECALL_FLOOR = {"PERSON": 0.95, "ORGANIZATION": 0.95, "ADDRESS": 0.95, "DATE_OF_BIRTH": 0.95}


def test_generated_documents_are_stripped(bare: Classifier) -> None:
    """Across EN/DE/FR deviation reports, CAPA drafts and supplier e-mails, the planted people,
    companies, addresses and dates of birth are stripped (each covered by findings) at the
    floors per family and language, and no finding of these families lands outside them."""
    docs = documents(8)
    hits: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    stray: list[tuple[str, str]] = []
    for doc in docs:
        d = bare.classify(content(doc.text))
        assert not d.failed_closed
        covered = bytearray(len(doc.text))
        for f in d.findings:
            covered[f.start : f.end] = b"\x01" * (f.end - f.start)
        for p in doc.planted:
            total[(p.family, doc.lang)] += 1
            hits[(p.family, doc.lang)] += all(covered[p.start : p.end])
        for f in d.findings:
            if f.entity_type in FAMILIES and not any(f.start < p.end and p.start < f.end for p in doc.planted):
                stray.append((f.entity_type, doc.text[f.start : f.end]))
    assert set(total) == {(f, lang) for f in FAMILIES for lang in ("en", "de", "fr")}
    for key, n in total.items():
        assert hits[key] / n >= RECALL_FLOOR[key[0]], (key, hits[key], n)
    assert stray == []


def test_stripped_document_keeps_its_clean_text(bare: Classifier) -> None:
    """Stripping replaces the planted values and nothing else: with the placeholders put back,
    the document is byte-identical."""
    from tiers import Restorer

    for doc in documents(2):
        c = content(doc.text)
        stripped = bare.strip(c, bare.classify(c))
        out = stripped.content.segments[0].text
        assert Restorer(stripped.mapping).restore(out) == doc.text
        assert out != doc.text
