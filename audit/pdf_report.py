"""The assessment as a PDF (fpdf2: pure Python, no system libraries), from the same content model
as the HTML report (``audit.report_doc``).

The PDF core fonts cover Latin-1 only and no font file is shipped or looked up on the machine:
typographic punctuation is mapped to ASCII and any other character outside Latin-1 prints as
``?`` (the HTML report keeps every character). A drill says so in every page's header.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import datetime

from fpdf import FPDF
from fpdf.fonts import FontFace

from audit.assessment import Assessment
from audit.playbook import Timeline
from audit.report_doc import ReportDoc, Section, build_report
from audit.vendors import VendorReview

__all__ = ["render_assessment_pdf"]

_ASCII = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                        "\u2014": "-", "\u2026": "...", "\u2192": "->", "\u2265": ">=", "\u2264": "<=",
                        "\u00a0": " "})  # fmt: skip
_RED = (176, 0, 0)


def latin1(text: object) -> str:
    """What the core fonts can print: Latin-1, with look-alike folding, else ``?``."""
    out = []
    for ch in str(text).translate(_ASCII):
        if not ch.isprintable():
            out.append("?")
        elif ord(ch) < 256:
            out.append(ch)
        else:
            base = unicodedata.normalize("NFKD", ch).encode("latin-1", "ignore").decode("latin-1")
            out.append(base if base and base.isprintable() else "?")
    return "".join(out)


class _Pdf(FPDF):
    def __init__(self, doc: ReportDoc) -> None:
        super().__init__(orientation="P", unit="mm", format="A4")
        self._doc = doc
        self.set_margins(14, 16, 14)
        self.set_auto_page_break(True, margin=16)

    def header(self) -> None:
        if self._doc.drill:
            self.set_font("Helvetica", "B", 10)
            self.set_text_color(*_RED)
            self.cell(0, 6, latin1(self._doc.banner).upper(), border=1, align="C", new_x="LMARGIN", new_y="NEXT")
            self.set_text_color(0, 0, 0)
            self.ln(2)

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "", 7.5)
        self.set_text_color(90, 90, 90)
        self.cell(0, 5, latin1(f"{self._doc.title} - generated {self._doc.generated} - page {self.page_no()}/{{nb}}"),
                  align="C")  # fmt: skip
        self.set_text_color(0, 0, 0)


def _para(
    pdf: FPDF, text: str, *, size: float = 9.5, style: str = "", color: tuple[int, int, int] | None = None
) -> None:
    pdf.set_font("Helvetica", style, size)
    if color:
        pdf.set_text_color(*color)
    pdf.multi_cell(0, size * 0.5, latin1(text), new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(0, 0, 0)


def _widths(pdf: FPDF, rows: Sequence[tuple[str, ...]]) -> tuple[float, ...]:
    """Each column as wide as its widest cell (bold headings included), and where the page is too
    narrow for all, the widest columns capped at one limit: short values never wrap mid-word,
    the free text wraps."""
    natural = []
    for i in range(len(rows[0])):
        pdf.set_font("Helvetica", "B", 8)
        head = pdf.get_string_width(latin1(rows[0][i]))
        pdf.set_font("Helvetica", "", 8)
        natural.append(max([head, *(pdf.get_string_width(latin1(r[i])) for r in rows[1:])]) + 3)
    avail = pdf.epw
    if sum(natural) <= avail:
        return tuple(natural)
    lo, hi = 0.0, max(natural)
    for _ in range(40):  # the cap at which the capped widths just fill the page
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sum(min(n, mid) for n in natural) < avail else (lo, mid)
    return tuple(min(n, lo) for n in natural)


def _section(pdf: FPDF, s: Section) -> None:
    pdf.ln(2)
    _para(pdf, s.heading, size=12, style="B", color=_RED if s.alarm else None)
    for line in s.lines:
        _para(pdf, line)
    if not s.headers:
        return
    if not s.rows:
        _para(pdf, "none", color=(90, 90, 90))
        return
    pdf.set_font("Helvetica", "", 8)
    rows = ((*s.headers,), *s.rows)
    widths = _widths(pdf, rows)
    with pdf.table(headings_style=FontFace(emphasis="BOLD", fill_color=(230, 230, 230)), text_align="LEFT",
                   line_height=4, padding=1, first_row_as_headings=True, col_widths=widths,
                   width=sum(widths)) as table:  # fmt: skip
        for row in rows:
            cells = table.row()
            for c in row:
                cells.cell(latin1(c))


def render_assessment_pdf(a: Assessment, vendors: Sequence[VendorReview] = (), timeline: Timeline | None = None,
                          now: datetime | None = None) -> bytes:  # fmt: skip
    doc = build_report(a, vendors, timeline, now)
    pdf = _Pdf(doc)
    pdf.set_title(latin1(doc.title))
    pdf.set_creator("Tiergate")
    pdf.set_subject(latin1(("DRILL - " if doc.drill else "") + "exposure assessment " + doc.meta[0][1]))
    pdf.add_page()
    _para(pdf, ("" if doc.drill else "Exposure assessment: ") + doc.title, size=15, style="B")
    for key, value in doc.meta:
        _para(pdf, f"{key}: {value}", size=9)
    pdf.ln(2)
    _para(pdf, f"Verdict: {doc.verdict}", size=12, style="B", color=_RED if doc.sensitive else None)
    _para(pdf, doc.verdict_text)
    for note in doc.notes:
        _para(pdf, note, style="B")
    for s in doc.sections:
        _section(pdf, s)
    return bytes(pdf.output())
