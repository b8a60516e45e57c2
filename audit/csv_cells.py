"""CSV exports that a spreadsheet opens as text: no cell can start a formula.

Exported cells hold client-chosen text (tenants, model names, upstream names, disclosure titles).
A cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage return, which some
spreadsheets skip before reading one of those) is run as a formula when the file is opened:
``=HYPERLINK(...)`` leaks the sheet, ``=cmd|...`` runs a program. As OWASP's CSV injection
guidance says, such a cell gets a leading apostrophe, which spreadsheets read as "text follows"
and do not show; the csv module does the quoting. The apostrophe is the only change, so a reader
that knows the rule gets every value back exactly.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, TextIO

__all__ = ["FORMULA_STARTS", "SafeCsvWriter", "neutral_cell"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutral_cell(value: object) -> str:
    """``value`` as a CSV cell no spreadsheet reads as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class SafeCsvWriter:
    """``csv.writer`` whose every cell goes through :func:`neutral_cell`."""

    def __init__(self, out: TextIO) -> None:
        self._writer: Any = csv.writer(out)

    def writerow(self, cells: Iterable[object]) -> None:
        self._writer.writerow([neutral_cell(c) for c in cells])
