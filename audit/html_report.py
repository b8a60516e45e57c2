"""The assessment as one printable HTML file (Jinja2, autoescaped; a print stylesheet inline, so
the file stands alone when mailed or archived).

``CSP`` is the Content-Security-Policy to serve it with: no script at all, and only this exact
stylesheet (by its hash), so vendor text pasted into a disclosure can never style or script it.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from audit.assessment import Assessment
from audit.playbook import Timeline
from audit.report_doc import build_report
from audit.vendors import VendorReview

__all__ = ["CSP", "render_assessment_html"]

_DIR = Path(__file__).parent / "templates"
_CSS = (_DIR / "report.css").read_text(encoding="utf-8")
_STYLE_HASH = base64.b64encode(hashlib.sha256(_CSS.encode("utf-8")).digest()).decode()
CSP = (f"default-src 'none'; style-src 'sha256-{_STYLE_HASH}'; img-src 'none'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")  # fmt: skip


def _printable(text: object) -> object:
    # Vendor text and client-chosen names: no control characters in the page. Markup (our own
    # stylesheet) passes untouched, so its hash still matches.
    if isinstance(text, Markup):
        return text
    return "".join(ch if ch.isprintable() or ch in "\n\t" else "?" for ch in str(text))


_ENV = Environment(loader=FileSystemLoader(_DIR), autoescape=select_autoescape(["html"]),
                   undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                   finalize=_printable)  # fmt: skip


def render_assessment_html(a: Assessment, vendors: Sequence[VendorReview] = (), timeline: Timeline | None = None,
                           now: datetime | None = None) -> str:  # fmt: skip
    doc = build_report(a, vendors, timeline, now)
    # The stylesheet goes in as is (not escaped): it is ours, and its hash is in CSP.
    return _ENV.get_template("report.html").render(doc=doc, css=Markup(_CSS))
