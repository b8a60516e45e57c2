"""The literal reading's scanner (the secret recognizers run over text with its escapes as
written) is compiled on the first text whose escapes decode, not at start-up (issue 15): building
a classifier does not pay for it, and threads that meet escapes together on a new classifier
find what the shared, long-built one finds."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from tiers import Classifier, TiersConfig

from .conftest import content
from .test_secrets import ESCAPED_CASES


def _findings(clf: Classifier, text: str) -> list[tuple[str, int, int, str]]:
    return sorted((f.entity_type, f.start, f.end, f.recognizer) for f in clf.findings(content(text)))


def test_built_on_first_escaped_text_and_finds_the_same_under_threads(config: TiersConfig, clf: Classifier) -> None:
    expected = [_findings(clf, text) for text, _ in ESCAPED_CASES]
    fresh = Classifier(config, clock=time.thread_time)
    assert fresh._literal is None  # start-up compiled only the main scanner
    assert _findings(fresh, "no escapes: Maria Gonzalez at jane@example.com") == _findings(
        clf, "no escapes: Maria Gonzalez at jane@example.com"
    )
    assert fresh._literal is None  # nothing to read literally yet
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda case: _findings(fresh, case[0]), ESCAPED_CASES * 4))
    assert got == expected * 4
    assert fresh._literal is not None
