"""Fixtures for the ``tiers`` tests: one fully configured classifier per session (building one
compiles every recognizer), plus helpers to build request content."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tiers import Classifier, Content, DomainPattern, Segment, TiersConfig


def content(*texts: str) -> Content:
    """Content of a chat request whose messages have these texts."""
    return Content(tuple(Segment(("messages", i, "content"), t) for i, t in enumerate(texts)))


@pytest.fixture(scope="session")
def lists_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("lists")
    (d / "customers.txt").write_text("# customers\nAcme Rocket Works\nGlobex\nInitech Ltd\n", "utf-8")
    (d / "suppliers.txt").write_text("Umbrella Supplies\nVandelay Industries\n", "utf-8")
    (d / "employees.txt").write_text("Maria Gonzalez\nWei Zhang\nÖzlem Türeci\n", "utf-8")
    return d


@pytest.fixture(scope="session")
def config(lists_dir: Path) -> TiersConfig:
    return TiersConfig(
        internal_domains=("corp.example.com", "internal"),
        customer_lists=(lists_dir / "customers.txt",),
        supplier_lists=(lists_dir / "suppliers.txt",),
        employee_lists=(lists_dir / "employees.txt",),
        domain_patterns=(DomainPattern(entity="PART_NUMBER", pattern=r"\bTGX-\d{4}-[A-Z]{2}\b"),),
        extra_markers=("project bluebird",),
    )


@pytest.fixture(scope="session")
def clf(config: TiersConfig) -> Classifier:
    # The gateway's clock (gateway/app.py): the deadline counts the analysing thread's CPU time, so
    # a loaded machine's wait for a core never fails a request closed, here as in production.
    return Classifier(config, clock=time.thread_time)
