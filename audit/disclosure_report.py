"""Stored disclosures as a table, JSON, CSV or Markdown (``tiergate exposure disclosures``).

The same four formats as the exposure query (``audit.report``). Titles and references are vendor
text pasted by an admin: control characters are kept out of the terminal and pipes out of Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TextIO

from audit.csv_cells import SafeCsvWriter
from audit.disclosures import StoredDisclosure

__all__ = ["DISCLOSURE_FIELDS", "write_disclosures"]

FORMATS = ("table", "json", "csv", "markdown")
DISCLOSURE_FIELDS = ("id", "loaded_at", "tenant", "reference", "title", "window_start",
                     "window_end", "source_sha256")  # fmt: skip
_TABLE_COLUMNS = (("id", 6), ("loaded_at", 26), ("tenant", 14), ("reference", 24), ("title", 40),
                  ("window_start", 26), ("window_end", 26))  # fmt: skip


def _clean(text: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _cells(d: StoredDisclosure) -> dict[str, str]:
    # An empty tenant cell means platform-wide; JSON says null instead.
    return {k: "" if v is None else str(v) for k, v in d.as_dict().items()}


def write_disclosures(items: Iterable[StoredDisclosure], fmt: str, out: TextIO) -> int:
    """Write the disclosures in ``fmt``; returns how many were written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    rows = list(items)
    if fmt == "json":
        out.write(json.dumps([d.as_dict() for d in rows], indent=2, ensure_ascii=False) + "\n")
    elif fmt == "csv":
        writer = SafeCsvWriter(out)
        writer.writerow(DISCLOSURE_FIELDS)
        for d in rows:
            cells = _cells(d)
            writer.writerow([cells[f] for f in DISCLOSURE_FIELDS])
    elif fmt == "markdown":
        out.write("| " + " | ".join(DISCLOSURE_FIELDS) + " |\n")
        out.write("|" + "---|" * len(DISCLOSURE_FIELDS) + "\n")
        for d in rows:
            cells = _cells(d)
            out.write("| " + " | ".join(_clean(cells[f]).replace("|", "\\|")
                                        for f in DISCLOSURE_FIELDS) + " |\n")  # fmt: skip
    else:
        out.write("  ".join(name.ljust(w)[:w] for name, w in _TABLE_COLUMNS).rstrip() + "\n")
        for d in rows:
            cells = _cells(d)
            out.write("  ".join(_clean(cells[name]).ljust(w)[:w]
                                for name, w in _TABLE_COLUMNS).rstrip() + "\n")  # fmt: skip
    return len(rows)
