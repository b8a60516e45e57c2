"""Dates of birth (``DATE_OF_BIRTH``): a date right after a birth word in English, German or
French ("born 14 March 1962", "DOB: 1962-03-14", "geboren am 14.03.1962", "geb. 14. März 1962",
"né le 14/03/1962", "date de naissance : 14 mars 1962").

A date alone is no identifier (release dates, due dates); next to one of these words it is, and
with a name it singles a person out. The birth word is part of the pattern (at most a few
connecting words between it and the date), so only the date is reported and stripped.
Text is seen normalised: "né" is "ne", "März" is "Marz".
"""

from __future__ import annotations

import calendar
from datetime import date

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer

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


class DateOfBirthRecognizer(TiersPatternRecognizer):
    """A date after a birth word (module docstring)."""

    ENTITY = "DATE_OF_BIRTH"
    PATTERNS = [Pattern("date_of_birth", r"\b" + _BIRTH + _LINK + r"(?P<value>" + _DATE + r")\b", 0.7)]

    def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
        # numeric forms must be a real day of a real month (either order: 14.03. or 3/14/)
        if pattern_text[:1].isdigit() and not any(c.isalpha() for c in pattern_text):
            parts = [int(p) for p in pattern_text.replace("/", "-").replace(".", "-").split("-")]
            if len(parts) != 3:
                return False
            if parts[0] > 31:  # ISO
                y, m, d = parts
            else:
                d, m, y = parts
                if m > 12:
                    d, m = m, d
            if y < 100:
                y += 1900
            if not 1 <= m <= 12 or not 1 <= d <= calendar.monthrange(y, m)[1]:
                return False
            return 1880 <= y <= date.max.year
        return True
