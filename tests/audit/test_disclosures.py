"""Disclosure files: valid ones parse; each kind of mistake is rejected naming its line."""

from __future__ import annotations

import textwrap

import pytest

from audit.disclosures import parse_disclosure
from audit.errors import DisclosureError

GOOD = textwrap.dedent("""\
    title: KV cache cross-talk
    reference: EXC-2026-0042
    providers: [examplecloud]
    models: [big-1]
    window:
      start: 2026-08-27T00:00:00Z
      end: 2026-09-09T23:59:59+02:00
    conditions:
      min_prompt_tokens: 681280
      stream_only: true
""")


def test_good_disclosure_parses():
    """Time zones are kept, conditions typed, lists become tuples."""
    spec = parse_disclosure(GOOD)
    assert spec.providers == ("examplecloud",) and spec.models == ("big-1",)
    assert spec.window.end.utcoffset().total_seconds() == 7200
    assert spec.conditions.min_prompt_tokens == 681280 and spec.conditions.stream_only


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        ("  start: 2026-08-27T00:00:00Z", "  start: 2026-08-27T00:00:00", 6, "timezone"),
        ("  min_prompt_tokens: 681280", "  min_prompt_tokens: lots", 9, "min_prompt_tokens"),
        ("  min_prompt_tokens: 681280", "  min_prompt_tokens: -5", 9, "greater than"),
        ("  stream_only: true", "  stream_ony: true", 10, "stream_ony"),
        ("  end: 2026-09-09T23:59:59+02:00", "  end: 2026-08-01T00:00:00Z", 5, "after"),
        ("reference: EXC-2026-0042", "reference: [unclosed", 3, "YAML"),
        ("models: [big-1]", "models: [big-1]\ntitle: again", 5, "duplicate key 'title'"),
        ("  end: 2026-09-09T23:59:59+02:00\n", "", 5, "window.end"),
    ],
)
def test_mistakes_name_the_line(old, new, line, words):
    """Each broken variant of a good file raises DisclosureError pointing at the right line."""
    source = GOOD.replace(old, new)
    assert source != GOOD
    with pytest.raises(DisclosureError) as err:
        parse_disclosure(source)
    assert err.value.line == line, str(err.value)
    assert words.lower() in str(err.value).lower()
    assert str(err.value).startswith(f"line {line}:")


def test_vendor_must_be_named():
    """A disclosure naming no provider, upstream or model is refused."""
    source = "\n".join(line for line in GOOD.splitlines() if not line.startswith(("providers", "models")))
    with pytest.raises(DisclosureError, match="providers, upstreams or models"):
        parse_disclosure(source)


def test_not_a_mapping():
    """A list or an empty file is refused on line 1."""
    for source in ("- a\n- b\n", ""):
        with pytest.raises(DisclosureError) as err:
            parse_disclosure(source)
        assert err.value.line == 1
