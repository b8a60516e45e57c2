"""Where a run of digits is part of something larger than an identifier: a decimal number, a term
of a sequence written as a code literal, a constant assigned in code. Shared by the recognizers of
digit identifiers (cards, phones, account numbers).

Each test reads a bounded window around the candidate, so a text of many candidates stays linear.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["assigned_name", "chance_term", "compared_name", "in_arithmetic", "in_decimal", "in_integer_sequence"]

_RUN_LIMIT = 32  # digits read past a candidate's end: no identifier is longer
_LINE_LIMIT = 200  # how far back an assignment's name is looked for on the number's line
_LITERAL_LIMIT = 512  # how far back the opening bracket of a sequence literal is looked for
# the terms of a literal before a candidate, and after it up to the closing bracket
_TERMS_BEFORE = re.compile(r"[ \t\r\n]*(?:[+-]?[0-9]+[ \t]*,[ \t\r\n]*)*")
_TERMS_AFTER = re.compile(r"(?:[ \t]*,[ \t\r\n]*[+-]?[0-9]+)*[ \t]*,?[ \t\r\n]*[)\]}]")
_INTEGER = re.compile(r"[+-]?[0-9]+")
# a name alone on its line's left, an optional annotation, "=", then the number and the line's end
_ASSIGNED = re.compile(r"(?:^|\n)[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?::[^=\n]{1,80})?=[ \t]*\Z")
_LINE_END = re.compile(r";?[ \t]*(?:#[^\n]*|//[^\n]*)?(?:\n|\Z)")
# a comparison in code: a (dotted) name and an operator right before the number, the end of the
# condition right after it ("sys.hexversion < 51314855:", "if (build >= 20230815) {")
# (not a markup tag: ``<dd>40211987``, ``</strong> 40211987`` end a tag; "<" and ">" compare only
# with a blank before them)
_COMPARED = re.compile(r"(?<![<A-Za-z0-9_./])([A-Za-z_][A-Za-z0-9_.]*)(?:[ \t]+[<>]=?|[ \t]*(?:[<>]=|[!=]==?))[ \t]*\Z")
_CONDITION_END = re.compile(r"[ \t]*(?:[:)\]]|&&|\|\||\b(?:and|or|then)\b|;|\n|\Z)")


def in_decimal(text: str, start: int, end: int) -> bool:
    """Digits right after a decimal point are a fraction (``0.2662102282047272``, a float's
    repr); a candidate's first or last digit run followed by a point and digits is an integer
    part (``78527.3994291277`` in a table of mathematical values, ``4977554533101009.4``): one
    point, the candidate's last, not groups joined by points or after one (``4111.1111.1111.1111``,
    ``030.901.820``, ``4000.0000 0000 0002``)."""
    if start >= 2 and text[start - 1] == "." and text[start - 2].isdigit():
        return True
    last = end
    while last > start and text[last - 1].isdigit():
        last -= 1
    return (text[start : start + 1].isdigit() and _integer_part(text, start, end)) or (
        last < end and _integer_part(text, last, end)
    )


def _run_end(text: str, pos: int) -> int:
    limit = min(len(text), pos + _RUN_LIMIT)
    while pos < limit and text[pos].isdigit():
        pos += 1
    return pos


def _point_and_digit(text: str, pos: int) -> bool:
    return text[pos : pos + 1] == "." and text[pos + 1 : pos + 2].isdigit()


def _integer_part(text: str, pos: int, end: int) -> bool:
    """Whether the digit run at ``pos`` is followed by a decimal point and a fraction that runs
    to the candidate's ``end`` or past it, and no further point and digits follow: the
    candidate's groups go on after a point that is a separator (``4000.0000 0000 0002``)."""
    run = _run_end(text, pos)
    if not _point_and_digit(text, run):
        return False
    fraction = _run_end(text, run + 1)
    return fraction >= end and not _point_and_digit(text, fraction)


def in_integer_sequence(text: str, start: int, end: int) -> bool:
    """A bare integer that is a term of a sequence in a code literal: between its brackets four
    integer terms or more and nothing else, all growing or all falling, of three lengths or more
    and the shortest at most half the candidate's (``[1, 1, 4, 108, 27648, 86400000,
    4031078400000]``, the hyperfactorials in a test). A record's numbers (``(17, 4111…, 12,
    2027)``) are no sequence, nor three numbers, nor a sorted list of identifiers: card numbers
    of any mix of kinds are 13 to 19 digits long, so a sorted list of them stays cards."""
    if not text[start:end].isdigit():
        return False
    lo = max(0, start - _LITERAL_LIMIT)
    opening = max(text.rfind("[", lo, start), text.rfind("(", lo, start), text.rfind("{", lo, start))
    if opening < 0 or _TERMS_BEFORE.fullmatch(text, opening + 1, start) is None:
        return False
    after = _TERMS_AFTER.match(text, end, min(len(text), end + _LITERAL_LIMIT))
    if after is None:
        return False
    terms = [int(t) for t in _INTEGER.findall(text, opening + 1, after.end())]
    steps = list(zip(terms, terms[1:], strict=False))
    monotone = all(a <= b for a, b in steps) or all(a >= b for a, b in steps)
    lengths = {len(str(abs(t))) for t in terms}
    return len(terms) >= 4 and monotone and len(lengths) >= 3 and 2 * min(lengths) <= end - start


def assigned_name(text: str, start: int, end: int) -> str | None:
    """The name a number is assigned to when it is the whole right-hand side of a line of code
    (``_HAUSNUMERO = 156384712``, ``acctNo: int = …``, ``MAX = 4294967295;``); None when the
    number stands anywhere else."""
    if _LINE_END.match(text, end) is None:
        return None
    lo = max(0, start - _LINE_LIMIT)
    line = text.rfind("\n", lo, start)
    if line < 0 and lo > 0:
        return None  # a longer line: no assignment of a constant
    m = _ASSIGNED.match(text, max(line, 0), start)
    if m is None:
        return None
    return m.group(1)


def compared_name(text: str, start: int, end: int) -> str | None:
    """The name a number is compared with in a line of code (``sys.hexversion < 51314855:``,
    ``if (build >= 20230815)``); None when the number stands anywhere else. Like an assignment,
    a comparison says what the number is: the name's own."""
    if _CONDITION_END.match(text, end) is None:
        return None
    m = _COMPARED.search(text, max(0, start - 80), start)
    return None if m is None else m.group(1)


# a term of a code literal: a bracket, a comma or a line's start before it, a comma or a bracket after
_TERM_BEFORE = re.compile(r"[\[({,][ \t\r\n]*[+-]?\Z")
_TERM_AFTER = re.compile(r"[ \t]*(?:[uUlL]{1,3}|n)?[ \t\r\n]*[,)\]}]")
_LONG_TERM = re.compile(r"(?<=[\[({,\s])[+-]?([0-9]{12,20})(?=[ \t]*(?:[uUlL]{1,3}|n)?[ \t\r\n]*[,)\]}])")
_TERMS_AROUND = 400  # characters read each side of a candidate for the literal's other terms


def chance_term(text: str, start: int, end: int, valid: Callable[[str], bool]) -> bool:
    """Whether the digits at ``start:end`` are one term of a bracketed code literal of long
    integers of the same length, of which fewer than half pass ``valid`` (a check digit): random
    numbers that pass a check digit by chance, one in ten for Luhn's (numpy's expected 64-bit
    states, ``[[5707374374421908479, 5456764827585442327], …]``). A literal of real cards passes
    throughout; a CSV's cells stand in no bracket and are not judged here."""
    digits = text[start:end]
    if not digits.isdigit() or _TERM_BEFORE.search(text, max(0, start - 8), start) is None:
        return False
    if _TERM_AFTER.match(text, end) is None:
        return False
    before = text[max(0, start - _TERMS_AROUND) : start]
    if before.count("[") + before.count("(") <= before.count("]") + before.count(")"):
        return False  # inside no open bracket
    lo, hi = max(0, start - _TERMS_AROUND), min(len(text), end + _TERMS_AROUND)
    others = [m.group(1) for m in _LONG_TERM.finditer(text, lo, hi) if m.start(1) != start]
    others = [o for o in others if len(o) == len(digits)]
    return len(others) >= 4 and 2 * sum(map(valid, others)) < len(others)


# An operand of arithmetic in code or a formula: a product or a power with a one-letter variable,
# a power, a call or a bracket on its other side ("…*q**2", "…*x + ", "…*sqrt(", "x**…",
# ")**(1/3)"); a quotient between brackets ("S(…)/(16*10**11)", "…/(35184372088832*"); a sum
# after a product's one-letter factor or a power ("…*x + …", "t**12 - …"); a negative term of a
# literal of negative integers ("-3839159765625, -1562475,"). Not a number between stars (an X12
# record's elements, "REF*CR*4556…*1227~", "REF*CR*4666…*Y", a keypad's "*4556…*1227#", a
# quantity "2*4556…"), a star before a note in brackets ("4666…*(exp 12/27)"), nor
# markdown's emphasis around it or before it ("**4556…**(exp 12/27)", "**Card (Visa)**4556…"), a
# factor after a bracket (a spreadsheet's "=SUM(A1:A3)*4556…"), a blank-separated
# " * " or " / " (an expiry, a CVV), a dash or a plus after a word or a bracket ("Plan B - …"),
# a minus glued to a label or before a positive term ("card: -4556…", "Bob,-4556…,1227").

# a bracket that opens an expression: a number or a one-letter variable first ("(1/3)", "(x + 1)"),
# not words ("*(exp 12/27)", "**(Visa)**", "*(see note)")
_EXPRESSION = r"\((?:[0-9]|[a-z](?![A-Za-z]))"
_OPERATOR_AFTER = re.compile(
    # a lower-case variable with a power, another variable, a sum, a bracket or the line's end
    # after it ("*q**2", "*x*y", "*x + 1", "*x\n"); not a record's one-letter code in capitals
    # ("REF*CR*4666…*Y", "card 4666…*A")
    r"\)*\*\*?(?:[a-z](?=\*\*|\*[a-z](?![A-Za-z0-9])|[ \t]+[-+][ \t]|[ \t]*[)\n]|[ \t]*$)|[a-z_][a-z0-9_]*\(|"
    + _EXPRESSION
    + r")"
    # the number's own power, then an operator or the line's end ("**2 installments" is none)
    r"|\*\*[0-9]+(?=[ \t]*(?:[-+*/)\n]|$))"
    # a quotient between brackets with an operator in the divisor ("S(…)/(16*10**11)")
    r"|\)+/\([0-9a-z.]+[ \t]*[-+*/]"
)
_OPERATOR_BEFORE = re.compile(r"(?:^|[^A-Za-z0-9_*])[a-z]\*\*\(*\Z")
# a dividend's bracket before it, an operator after it ("…/(35184372088832*sqrt(")
_DIVIDEND_BEFORE = re.compile(r"[0-9)]/\(+\Z")
_OPERATOR_NEXT = re.compile(r"[ \t]*[-+*/]")
_SUMMAND_BEFORE = re.compile(r"(?:\*[a-z]|[A-Za-z0-9_)]\*\*[0-9]+)[ \t]+[+-][ \t]+\Z")
# a literal of three negative terms or more ("-3839159765625, -1562475, 9536712644531250,")
_NEGATIVE_TERM = re.compile(r"[ \t]*,[ \t\r\n]*-[0-9]+[ \t]*,")
_OPERATOR_WINDOW = 24


def in_arithmetic(text: str, start: int, end: int) -> bool:
    """Whether the bare integer at ``start:end`` is an operand of arithmetic in code or a formula
    (sympy's polynomials: ``2447509765625*q**2*r*s**6``, ``120352542776360960*x +
    269116466014453760``) or a negative term of a literal of negative integers. An identifier is
    never multiplied by a variable, raised to a power or divided between brackets: a long integer
    there passes a check digit by chance."""
    if not text[start:end].isdigit():
        return False
    for mark in ("**", "*"):  # emphasis around it ("**4556…**"), not a product ("x**4556…*y")
        if text.endswith(mark, max(0, start - len(mark)), start) and text.startswith(mark, end):
            outside = text[start - len(mark) - 1] if start > len(mark) else " "
            if not (outside.isalnum() or outside in "_)*"):
                return False
    lo, hi = max(0, start - _OPERATOR_WINDOW), min(len(text), end + _OPERATOR_WINDOW)
    if _OPERATOR_BEFORE.search(text, lo, start) or _SUMMAND_BEFORE.search(text, lo, start):
        return True
    if _DIVIDEND_BEFORE.search(text, lo, start) and _OPERATOR_NEXT.match(text, end, hi):
        return True
    if _OPERATOR_AFTER.match(text, end, hi):
        return True
    return (
        start > 1
        and text[start - 1] == "-"
        and text[start - 2] in "[(, \t\n"
        and _NEGATIVE_TERM.match(text, end, hi) is not None
    )
