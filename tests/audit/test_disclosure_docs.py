"""The disclosure examples in the docs are valid disclosures (docs as tests)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import audit.disclosures
from audit.disclosures import parse_disclosure

ROOT = Path(__file__).resolve().parents[2]


def test_docs_example_parses() -> None:
    text = (ROOT / "docs" / "disclosures.md").read_text()
    (block,) = re.findall(r"```yaml\n(.*?)```", text, re.DOTALL)
    spec = parse_disclosure(block)
    assert spec.models == ("@cf/zai-org/*", "glm-5*", "big-model-1")
    assert spec.window.start.utcoffset().total_seconds() == 5.5 * 3600


def test_module_docstring_example_parses() -> None:
    doc = audit.disclosures.__doc__ or ""
    after = doc.split("Example::\n\n", 1)[1]
    block = textwrap.dedent("".join(re.match(r"((?:    .*\n|\n)*)", after).group(1)))  # type: ignore[union-attr]  # no match fails the test right here
    spec = parse_disclosure(block)
    assert spec.providers == ("examplecloud",) and spec.upstreams == ("ec-shared",)
