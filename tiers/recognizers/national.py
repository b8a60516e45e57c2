"""National identifiers and other regulated numbers, from presidio's predefined recognizers
(their patterns, context words and checksum validators).

Patterns presidio scores below the classifier's ``min_score`` only count with one of their
context words nearby, even when a checksum passes: a random 11-digit number passes a mod-89
check one time in 89, which is far too often for a Tier 3 verdict on a spreadsheet.

Every pattern runs on RE2 (linear time). Three of presidio's need a look-around or a
back-reference, which only a backtracking engine runs; ``PAN (Low)``'s look-aheads
(``(?=.*?[0-9]{4})``) scan the rest of the line from every candidate, quadratic on a long line.
Their subclasses below keep presidio's validators and recognizer names (not class names:
presidio's loader finds its classes by name among all subclasses), use an RE2 pattern, and check
what the look-around or back-reference checked in ``invalidate_result``. US SSNs also get the
spellings presidio misses (other separators, doubled ones, digits glued to the word "SSN"),
counted, like presidio's bare nine digits, only next to a context word.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from presidio_analyzer import EntityRecognizer, Pattern, PatternRecognizer
from presidio_analyzer import predefined_recognizers as pr

from ._digits import assigned_name, compared_name
from ._hash_constants import hash_constant

__all__ = ["national_id_recognizers"]

_SSN_GAP = r"[ \t._/-]{1,3}"


class SsnRecognizer(pr.UsSsnRecognizer):
    """presidio's SSN patterns, plus weak ones for separators it does not know and for digits
    glued to a word (``ssn_536228451``, ``SSN536228451``)."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through
        self.patterns = [
            *self.patterns,
            Pattern(
                "SSN6 (very weak, any separators)",
                r"(?:^|[^0-9A-Za-z])(?P<value>[0-9]{3}"
                + _SSN_GAP
                + r"[0-9]{2}"
                + _SSN_GAP
                + r"[0-9]{4})(?:$|[^0-9A-Za-z])",
                0.05,
            ),
            Pattern("SSN7 (very weak, glued)", r"(?:^|[^0-9])(?P<value>[0-9]{9})(?:$|[^0-9])", 0.05),
        ]

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Nine digits inside a long hex token are part of a digest (a sha256 in a listing),
        not an SSN glued to a word; the example of a format's description is nobody's."""
        lo, hi = start, end
        while lo > 0 and text[lo - 1] in _HEX:
            lo -= 1
        while hi < len(text) and text[hi] in _HEX:
            hi += 1
        return (hi - lo >= 16 and (lo, hi) != (start, end)) or format_example(text, start)

    def invalidate_result(self, pattern_text: str) -> bool:
        """Besides presidio's samples: each group one digit repeated ("111-22-3333", pyparsing's
        documented example) is typed, not issued; about 900 numbers of a billion look so."""
        digits = "".join(c for c in pattern_text if c.isdigit())
        if len(digits) == 9 and all(len(set(g)) == 1 for g in (digits[:3], digits[3:5], digits[5:])):
            return True
        if pattern_text.isdigit() and hash_constant(pattern_text):
            return True  # a hash's published constant (:mod:`._hash_constants`)
        return bool(super().invalidate_result(pattern_text))


_HEX = frozenset("0123456789abcdefABCDEF")
_NINO_EXCLUDED = frozenset({"BG", "GB", "NK", "KN", "NT", "TN", "ZZ"})


class NinoRecognizer(pr.UkNinoRecognizer):
    """presidio's NINO pattern without its look-ahead; the excluded prefixes are checked here."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through
        self.patterns = [
            Pattern(
                "NINO (medium)",
                r"\b[a-ceghj-pr-tw-zA-CEGHJ-PR-TW-Z][a-ceghj-npr-tw-zA-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[a-dA-D]\b",
                0.5,
            )
        ]

    def invalidate_result(self, pattern_text: str) -> bool:
        return pattern_text[:2].upper() in _NINO_EXCLUDED or bool(super().invalidate_result(pattern_text))


_LETTER = re.compile(r"[A-Za-z]")
_FOUR_DIGITS = re.compile(r"[0-9]{4}")


class PanRecognizer(pr.InPanRecognizer):
    """presidio's PAN patterns; ``PAN (Low)`` without look-aheads: the ten characters must hold a
    letter and four digits in a row (presidio looked for them anywhere in the rest of the line)."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through
        self.patterns = [
            p if p.name != "PAN (Low)" else Pattern(p.name, r"\b[0-9A-Za-z_@#$%^?~-]{10}\b", p.score)
            for p in self.patterns
        ]

    def invalidate_result(self, pattern_text: str) -> bool:
        if _LETTER.search(pattern_text) is None or _FOUR_DIGITS.search(pattern_text) is None:
            return True
        return bool(super().invalidate_result(pattern_text))


# what the name of a constant holding an account number has in it (``ACCOUNT_NO``, ``bankAcct``)
_ACCOUNT_NAME = re.compile(
    r"(?i:account|acct|bank|debit|checking|chequing|saving|konto|iban|beneficiar|(?:^|[_.])acc(?:$|[_.]|no|nr|num))"
)


# a routing number's label right before it: "routing_number='", "Routing No.: ", "ABA# ", "RTN "
_ROUTING_BEFORE = re.compile(r"(?i:routing|\baba\b|\brtn\b|transit)[^0-9\n]{0,24}\Z")


def aba_routing_number(digits: str) -> bool:
    """Whether nine digits carry the ABA routing number's check digit (weights 3, 7, 1)."""
    if len(digits) != 9 or not digits.isdigit():
        return False
    weights = (3, 7, 1) * 3
    return sum(int(d) * w for d, w in zip(digits, weights)) % 10 == 0


class BankAccountRecognizer(pr.UsBankRecognizer):
    """presidio's account-number pattern, but a digit run glued into a token by ``_ - . / ~`` or
    letters (a UUID's all-digit group, ``user_…``, a path) is part of that token: random session
    ids next to the word "account" made one request in a few hundred Tier 3."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        # presidio's "check" and "save" are in every checksum routine ("the check digit") and
        # editor; a checking account is named as one
        kwargs.setdefault(
            "context", ["account", "account#", "acct", "bank", "debit", "checking", "chequing", "savings"]
        )
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through
        self.patterns = [
            Pattern(p.name, r"(?:^|[^0-9A-Za-z_.~/-])(?P<value>[0-9]{8,17})(?:$|[^0-9A-Za-z_.~/-])", p.score)
            for p in self.patterns
        ]

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A number that is the whole value of a constant in code (``_HAUSNUMERO = 156384712``)
        is what its name says; it is an account only when the name says so (``ACCOUNT_NO =
        …``, ``bankAcct = …``): a context word elsewhere near it (``if TYPE_CHECKING:`` in
        every typed module) says nothing about it; so is a number compared with a name
        (``sys.hexversion < 51314855:``). Nor is a bank's routing number an account:
        nine digits with the ABA check digit, labelled as one (``routing_number='122105155'``,
        "ABA 021000021"), name a bank branch, which every cheque of it prints."""
        if (
            end - start == 9
            and aba_routing_number(text[start:end])
            and _ROUTING_BEFORE.search(text, max(0, start - 40), start)
        ):
            return True
        name = assigned_name(text, start, end) or compared_name(text, start, end)
        return name is not None and _ACCOUNT_NAME.search(name) is None

    def invalidate_result(self, pattern_text: str) -> bool:
        # one repeated digit (a checksum routine's degenerate example), a one-run sequence, or a
        # hash's published constant (:mod:`._hash_constants`)
        return (
            len(set(pattern_text)) == 1
            or hash_constant(pattern_text)
            or pattern_text in "0123456789012345678"
            or bool(super().invalidate_result(pattern_text))
        )


class PassportNumberRecognizer(pr.UsPassportRecognizer):
    """presidio's passport shapes, near a passport word: its "us", "united", "states", "document"
    and "travel" are in any prose and any documentation next to some nine-digit number."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        kwargs.setdefault("context", ["passport", "passport#", "passport number", "passport no", "travel document"])
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through


# every licence header and SPDX line says "license"; a driver's licence is written with "driver"
_DL_CONTEXT = [
    "driver",
    "drivers",
    "driving",
    "dl",
    "dls",
    "cdl",
    "cdls",
    "lic#",
    "dl#",
    "license number",
    "licence number",
    "license no",
    "licence no",
    "permit",
]
_NOT_IN_TOKEN_L = r"(?:^|[^0-9A-Za-z_.~/#-])"
_NOT_IN_TOKEN_R = r"(?:$|[^0-9A-Za-z_.~/-])"


_DL_REACH = 64  # the default context window
_DL_WORD = re.compile(
    r"(?i)(?<![A-Za-z0-9])("
    + "|".join(re.escape(w).replace(r"\ ", r"[ _-]") for w in sorted(_DL_CONTEXT, key=len, reverse=True))
    + r")(?![A-Za-z0-9])"
)
# what makes "driver" a program's or a device's: a technical word right before it ("CUDA
# driver", "the JDBC driver"); not a vehicle's, a state's, a fleet's or a trade's ("TRUCK DRIVER",
# "TX driver", "Moving & Storage driver", "Video driver"): words that name a trade too are left out
_TECHNICAL_BEFORE = re.compile(
    r"(?i:\b(?:gpu|cuda|nvidia|rocm|kernel|usb|pci|pcie|nvme|sata|scsi|jdbc|odbc|chromium|gecko|selenium"
    r"|sql|mysql|postgres|postgresql|mongodb|redis|opengl|vulkan))[ \t_-]*\Z"
)


class DriverLicenceRecognizer(pr.UsLicenseRecognizer):
    """presidio's driver's-licence shapes, upper case as licences are printed, at least six
    characters with four digits, not glued into a token, and only near a driver / DL word: with
    presidio's context ("license", "lic", "identification") and case-insensitive letters, every
    source file's licence header made ``pg8000``, ``E501`` (a lint code) or ``v2`` a licence."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        kwargs.setdefault("context", _DL_CONTEXT)
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through
        self.global_regex_flags = re.MULTILINE
        self.patterns = [
            Pattern(
                p.name,
                _NOT_IN_TOKEN_L
                + r"(?P<value>"
                + p.regex.removeprefix(r"\b").removesuffix(r"\b")
                + r")"
                + _NOT_IN_TOKEN_R,
                p.score,
            )
            for p in self.patterns
        ]

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Near a software's or a device's driver only ("CUDA driver allocated memory was
        1254555648", "the JDBC driver version 42010004"), a number of digits alone is none: a
        driver's licence has a person's driver, written without a technical word before it."""
        if not text[start:end].isdigit():
            return False  # "Video driver: D1234567": a licence's shape, whatever the driver
        lo, hi = max(0, start - _DL_REACH), min(len(text), end + _DL_REACH)
        words = [m for m in _DL_WORD.finditer(text, lo, hi) if not (start <= m.start() < end)]
        return bool(words) and all(
            m.group(1).lower() in ("driver", "drivers")
            and _TECHNICAL_BEFORE.search(text, max(0, m.start() - 24), m.start())
            for m in words
        )

    def invalidate_result(self, pattern_text: str) -> bool:
        if len(pattern_text) < 6 or sum(c.isdigit() for c in pattern_text) < 4:
            return True
        # a hash's published constant (SHA-512's in a minified bundle, beside ``this._dl=``)
        return hash_constant(pattern_text) or bool(super().invalidate_result(pattern_text))


class ItFiscalCodeRecognizer(pr.ItFiscalCodeRecognizer):
    """presidio's codice fiscale with a digit in it. presidio's pattern has no boundary and
    ignores case, so sixteen letters inside any word fit its shape, and its check letter then
    passes one time in 26 (sympy's ``raises(InconsistentAssumptions`` gave ``nconsistentAssum``,
    a Tier 3 file beside a "cf." comment). Letters stand in a code's seven digit places only where
    codes collide (omocodia), one place at a time from the last: never all seven. The pattern
    keeps no boundary: text taken out of a PDF glues a code to its label or the next word
    ("Codice FiscaleRSSMRA85T10A562S", "RSSMRA85T10A562SNato a Roma")."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through

    def invalidate_result(self, pattern_text: str) -> bool:
        return not any(c.isdigit() for c in pattern_text) or bool(super().invalidate_result(pattern_text))


class EsNifRecognizer(pr.EsNifRecognizer):
    """presidio's NIF (eight digits and a check letter, one in 23 numbers passes), except where
    the letter is a hex digit in hex text: ``"0500000A:0016"`` is a little-endian IPv4 address
    and port of ``/proc/net``, ``0x0500000A`` a constant, and a line of other hex words (a dump,
    a table of masks) is no place for a Spanish identity number; nor the example of a format's
    description (:func:`format_example`), nor a float's fraction and exponent ("1.06156156e-315")."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through

    def reject_at(self, text: str, start: int, end: int) -> bool:
        if format_example(text, start):
            return True
        if _FLOAT_DIGITS_BEFORE.search(text, max(0, start - 2), start) or _EXPONENT_AFTER.match(text, end - 1):
            return True  # a float's digits and exponent ("1.06156156e-315", "6.10351563E-05")
        value = text[start:end]
        if value[-1:] not in "ABCDEF" or "-" in value:
            return False
        if _HEX_GLUE_AFTER.match(text, end) or _HEX_GLUE_BEFORE.search(text[max(0, start - 12) : start]):
            return True
        # the line around it, within a window: an endless line is no table of masks to read whole
        lo, hi = max(0, start - _LINE_REACH), min(len(text), end + _LINE_REACH)
        line_start = max(lo, text.rfind("\n", lo, start) + 1)
        line_end = text.find("\n", end, hi)
        line = text[line_start:start] + " " + text[end : line_end if line_end >= 0 else hi]
        return any(_LETTER.search(w) and re.search(r"[0-9]", w) for w in _HEX_WORD.findall(line))


# a float written out: a decimal point right before the digits, or the letter an exponent's
_FLOAT_DIGITS_BEFORE = re.compile(r"[0-9]\.\Z")
_EXPONENT_AFTER = re.compile(r"[eE][+-]?[0-9]")
# a hex word glued on by ":" (address:port of /proc/net, a MAC-like run) or "0x" before it
_HEX_GLUE_AFTER = re.compile(r":[0-9A-Fa-f]{2,}\b")
_HEX_GLUE_BEFORE = re.compile(r"(?:0[xX]|\b[0-9A-Fa-f]{2,}:)\Z")
# another hex word of eight digits or more on the line (letters and digits both, checked after)
_HEX_WORD = re.compile(r"\b[0-9A-Fa-f]{8,}\b")
_LINE_REACH = 256


class SgFinRecognizer(pr.SgFinRecognizer):
    """presidio's NRIC/FIN shapes, except the example a description of the format gives."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through

    def reject_at(self, text: str, start: int, end: int) -> bool:
        return format_example(text, start)


# "e.g.", "for example" … right before the value, as a sentence describing a format ends
_EXAMPLE_BEFORE = re.compile(
    r"(?i:\b(?:e\.[ ]?g\.|eg\.|for example|for instance|such as|like|example:?))[,:]?[ \t]*[\"'`(]?\Z"
)
# the words a format is described in: what a number starts or ends with, consists of, its digits
_FORMAT_WORDS = re.compile(
    r"(?i:\b(?:starts?|starting|begins?|beginning|ends?|ending)[ \t]+with\b|\bfollowed[ \t]+by\b"
    r"|\bconsists?[ \t]+of\b|\bformat\b|\bdigits?\b|\bletters?\b|\bcharacters?\b|\bcheck[ \t]?(?:sum|digit|letter)s?\b"
    r"|\bprefix(?:ed)?\b)"
)
_SENTENCE_END = re.compile(r"[.!?][ \t]*(?:\n[ \t]*\n|\n[ \t]*(?![#*/ \t])|[ \t]+[A-Z])")


def example_may_end(tail: str) -> bool:
    """Whether ``_EXAMPLE_BEFORE`` can match at the end of a text ending with ``tail``: its words
    end with ".", "e" or "s" before the marks and blanks that may follow them. Looked at first:
    the search tries every place of its 240 characters (≈ 12 µs, on every candidate it guards)."""
    if not tail.isascii():
        return True  # case folding beyond ASCII: let the search decide
    bare = tail.rstrip(_EXAMPLE_TRAIL)
    return not bare or bare[-1] in "eEsS."  # (all marks and blanks: the word may be further back)


_EXAMPLE_TRAIL = " \t\"'`(,:"


def format_example(text: str, start: int) -> bool:
    """Whether the value at ``start`` is the example of a sentence that describes an identifier's
    format ("all FIN numbers start with S, T, F, G or M and end with a character, e.g.,
    S2740116C", in a recognizer's comment): documentation of the shape, nobody's number. The
    description must come first, in the same sentence: "the customer's FIN, e.g. S…" is one."""
    lo = max(0, start - 240)
    if not example_may_end(text[max(lo, start - 16) : start]):
        return False
    example = _EXAMPLE_BEFORE.search(text, lo, start)
    if example is None:
        return False
    sentence = lo
    for m in _SENTENCE_END.finditer(text, lo, example.start()):
        sentence = m.end()
    return _FORMAT_WORDS.search(text, sentence, example.start()) is not None


class SinRecognizer(pr.CaSinRecognizer):
    """presidio's SIN patterns; the back-reference (one separator throughout) is checked here."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("name", type(self).__mro__[1].__name__)  # presidio's name, in findings too
        super().__init__(**kwargs)  # type: ignore[arg-type]  # presidio's own keywords, passed through
        self.patterns = [
            p if p.name != "SIN (medium)" else Pattern(p.name, r"\b[1-79][0-9]{2}[- ][0-9]{3}[- ][0-9]{3}\b", p.score)
            for p in self.patterns
        ]

    def invalidate_result(self, pattern_text: str) -> bool:
        if len({c for c in pattern_text if c in "- "}) > 1:
            return True
        return bool(super().invalidate_result(pattern_text))


# class, score cap (None: presidio's scores). Recognizers of bare digit runs with a one-digit
# checksum (NHS mod 11, PESEL, personnummer, and Luhn for the grouped SIN, which a French SIREN
# "732 829 320" passes too) are capped below ``min_score``: a
# check digit passes on 1 in 10 random numbers (timestamps, order ids, US phone numbers), too
# often to count without a context word.
_NATIONAL: tuple[tuple[Callable[[], PatternRecognizer], float | None], ...] = (
    (SsnRecognizer, None),
    (pr.UsItinRecognizer, None),
    (PassportNumberRecognizer, None),
    (DriverLicenceRecognizer, None),
    (BankAccountRecognizer, None),
    (pr.NhsRecognizer, 0.1),
    (NinoRecognizer, None),
    (EsNifRecognizer, None),
    (pr.EsNieRecognizer, None),
    (ItFiscalCodeRecognizer, None),
    (PanRecognizer, None),
    (pr.InAadhaarRecognizer, None),
    (SgFinRecognizer, None),
    (pr.AuTfnRecognizer, None),
    (pr.AuMedicareRecognizer, None),
    (pr.PlPeselRecognizer, 0.3),
    (pr.FiPersonalIdentityCodeRecognizer, None),
    (pr.SePersonnummerRecognizer, 0.3),
    (SinRecognizer, 0.3),
    (pr.CryptoRecognizer, None),
)


def national_id_recognizers() -> list[EntityRecognizer]:
    """Fresh instances of the national-id recognizers, each registered for presidio's language
    of it (Spanish NIF ``es``, PESEL ``pl`` …): a stock presidio ``AnalyzerEngine`` given this
    registry then applies them, and their context words, to text of that language. The
    gateway's scanner runs every recognizer on every text whatever its language. The German
    and French ones (and the Steuer-ID) are in :mod:`.european`."""
    out: list[EntityRecognizer] = []
    for cls, cap in _NATIONAL:
        rec = cls()
        if cap is not None:
            rec.patterns = [Pattern(p.name, p.regex, min(p.score, cap)) for p in rec.patterns]
        out.append(rec)
    return out
