"""Dates of birth (``DATE_OF_BIRTH``): a date right after a birth word in English, German or
French ("born 14 March 1962", "DOB: 1962-03-14", "geboren am 14.03.1962", "geb. 14. März 1962",
"né le 14/03/1962", "date de naissance : 14 mars 1962").

A date alone is no identifier (release dates, due dates); next to one of these words it is, and
with a name it singles a person out. The birth word is part of the pattern (at most a few
connecting words between it and the date), so only the date is reported and stripped.
Text is seen normalised: "né" is "ne", "März" is "Marz".
"""

from __future__ import annotations

import re
from datetime import date

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from ._table_cells import cells as _cells

__all__ = ["DateOfBirthRecognizer"]

_MONTHS = (
    r"(?i:jan(?:uary|uar|vier)?\.?|feb(?:ruary|ruar)?\.?|fevr?(?:ier)?\.?|mar(?:ch|z|s)?\.?|"
    r"apr(?:il)?\.?|avr(?:il)?\.?|may|mai|jun[ie]?|juin|jul[iy]?|juil(?:let)?\.?|aug(?:ust)?\.?|"
    r"aout|sep(?:t(?:ember|embre)?)?\.?|o[ck]t(?:ober|obre)?\.?|nov(?:ember|embre)?\.?|"
    r"de[cz](?:ember|embre)?\.?)"
)
_DATE = (
    r"(?:[0-9]{1,2}[./-][0-9]{1,2}[./-](?:[0-9]{4}|[0-9]{2})"  # 14.03.1962, 3/14/62
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}"  # 1962-03-14
    r"|[0-9]{1,2}(?:\.|st|nd|rd|th|er)?[ ]+(?:of[ ]+)?" + _MONTHS + r"[ ]+[0-9]{4}"  # 14 March 1962
    r"|" + _MONTHS + r"[ ]+[0-9]{1,2}(?:st|nd|rd|th)?,?[ ]+[0-9]{4})"  # March 14, 1962
)
_BIRTH = (
    r"(?i:born|date[ ]of[ ]birth|birth[ ]?date|d\.?o\.?b\.?|geboren|geb\.|geburtsdatum|geburtstag|"
    r"date[ ]de[ ]naissance|nee?(?:\(e\))?|naissance)"
)
_LINK = r"(?:[ ]*[:=][ ]*|[ ]+(?i:on|am|le|the|en|in|:)[ ]+|[ ]+)"


REQUIRED_WORD = r"(?i)born|birth|d\.?o\.?b|geb|naissance|\bnee?(?:[^a-z]|$)"
_CELL_SEP = ",;\t|"
_ROW_REACH = 8192
_NUMERIC = re.compile(r"([0-9]+)[./-]([0-9]+)[./-]([0-9]+)")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# a birth word, whole (not "Next", "Nested": "ne" before letters), and at most one word after it
_BIRTH_HEADER = re.compile(
    r"(?i)^\W*(?:" + _BIRTH.removeprefix("(?i:").removesuffix(")") + r")(?![a-z])\W*(?:\w+\W*)?$"
)


class DateOfBirthRecognizer(TiersPatternRecognizer):
    """A date after a birth word, or in a table column whose header is one (module docstring)."""

    ENTITY = "DATE_OF_BIRTH"
    PATTERNS = [
        Pattern("date_of_birth", r"\b" + _BIRTH + _LINK + r"(?P<value>" + _DATE + r")\b", 0.7),
        # a cell of a CSV / TSV / Markdown table: "name;born;city\nAnna Berg;14.03.1962;Ulm"
        Pattern("date_of_birth_cell", r"(?:^|[,;\t|])[ ]*(?P<value>" + _DATE + r")[ ]*(?:$|[,;\t|])", 0.7),
    ]
    # a cell counts only under a birth header or after a birth cell, so a text without a birth
    # word anywhere has none (each date of a CSV of dates was checked for one): a superset of
    # ``_BIRTH``'s words, which the scanner looks for once per text
    REQUIRES = {"date_of_birth_cell": REQUIRED_WORD}

    def __init__(self) -> None:
        super().__init__()
        # (text, block start, searched up to, which header cells are birth words) of the last
        # table: rows of one table share it, so a long CSV is not searched back once per date.
        # The text itself is kept, not its id: a freed text's id is reused by the next one.
        self._table: tuple[str, int, int, tuple[bool, ...]] | None = None

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A date in a cell counts under a birth header or right after a birth cell; one after a
        birth word always."""
        # the line before it is read back only so far: a whole endless line for every date on it
        # was quadratic, and a row that long is no table's (its cells count under no header)
        lo = max(0, start - _ROW_REACH)
        line_start = text.rfind("\n", lo, start) + 1 or lo
        endless = line_start == lo > 0 and text[lo - 1] != "\n"
        prefix = text[line_start:start].rstrip(" ")
        if prefix and prefix[-1] in _CELL_SEP:
            sep = prefix[-1]
        elif not prefix:
            sep = next((c for c in text[end : end + 3] if c in _CELL_SEP), "")
            if not sep:
                return True
        else:
            return False  # the birth-word pattern: "born 14 March 1962", "DOB: 1962-03-14"
        cells = _cells(prefix, sep)
        if len(cells) >= 2 and _BIRTH_HEADER.match(cells[-2].strip()):
            return False  # "DOB;14.03.1962"
        if endless:
            return True
        births = self._header(text, line_start, sep)
        column = len(cells) - 1
        return not (column < len(births) and births[column])

    def _header(self, text: str, line_start: int, sep: str) -> tuple[bool, ...]:
        """For each cell of the header of the table holding ``line_start``: a birth word?"""
        cached = self._table
        if cached is not None and cached[0] is text and cached[1] <= line_start:
            blank = text.find("\n\n", cached[2], line_start)
            if blank < 0:
                self._table = (text, cached[1], line_start, cached[3])
                return cached[3]
        block = text.rfind("\n\n", 0, line_start)
        block = 0 if block < 0 else block + 2
        stop = text.find("\n", block)
        first = text[block : stop if 0 <= stop < line_start else line_start]
        header = tuple(_cells(first, sep)) if sep in first else ()
        births = tuple(_BIRTH_HEADER.match(cell.strip()) is not None for cell in header)
        self._table = (text, block, line_start, births)
        return births

    def validate_result(self, pattern_text: str) -> bool:
        # numeric forms must be a real day of a real month (either order: 14.03. or 3/14/)
        m = _NUMERIC.fullmatch(pattern_text)
        if m is None:
            return True  # a month's name: the pattern read it
        first, second, third = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if first > 31:  # ISO
            y, mo, d = first, second, third
        else:
            d, mo, y = first, second, third
            if mo > 12:
                d, mo = mo, d
        if y < 100:
            y += 1900
        if not 1 <= mo <= 12:
            return False
        leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
        if not 1 <= d <= (29 if mo == 2 and leap else _DAYS[mo - 1]):
            return False
        return 1880 <= y <= date.max.year
