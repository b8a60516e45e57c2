"""Cells of one line of a delimited table (CSV, TSV, semicolon): shared by the recognizers that
judge a value by its column's header (dates of birth, company columns)."""

from __future__ import annotations

__all__ = ["cells"]


def cells(line: str, sep: str) -> list[str]:
    """The cells of a table line; a separator inside double quotes is part of its cell."""
    if '"' not in line:
        return line.split(sep)  # the common line, at C speed (a date cell's check runs per row)
    out = [""]
    quoted = False
    for c in line:
        if c == '"':
            quoted = not quoted
        if c == sep and not quoted:
            out.append("")
        else:
            out[-1] += c
    return out
