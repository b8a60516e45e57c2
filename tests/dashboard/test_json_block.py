"""Chart data in <script type="application/json"> (Jinja2's tojson): nothing in it can end the
element or open another, and the browser's JSON.parse gets the data back exactly."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.dashboard.render import Templates

_TEXT = st.one_of(st.text(), st.sampled_from(["</script>", "<!--", "<script>", "]]>", "</SCRIPT ", "&lt;", "'\""]))
_DATA = st.recursive(
    st.one_of(_TEXT, st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)
_BLOCK = re.compile(r'<script type="application/json" id="chart-data">(.*?)</script>', re.S)


@settings(deadline=None)  # a loaded CI machine must not turn a slow example into a failure
@given(_DATA)
def test_the_json_block_cannot_break_out_and_parses_back(data: object) -> None:
    html = (
        Templates()
        .env.from_string('<script type="application/json" id="chart-data">{{ charts|tojson }}</script>')
        .render(charts=data)
    )
    blocks = _BLOCK.findall(html)
    assert len(blocks) == 1, html  # one element, closed where the template closes it
    body = blocks[0]
    assert "<" not in body and ">" not in body and "&" not in body
    assert json.loads(body) == data


def test_the_overview_template_uses_tojson() -> None:
    source = Templates().env.loader.get_source(Templates().env, "overview.html")[0]  # type: ignore[union-attr]  # a FileSystemLoader is set
    assert "charts|tojson" in source and "|safe" not in source
