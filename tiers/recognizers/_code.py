"""Whether a capitalised value stands where source code puts type, class and module names.

The list-free name recognizers (people, companies) look for capitalised words after a role word
or a given name. Code is full of those shapes: ``owner: Mapped[User]``, ``inspector: Inspector``,
``client: Optional[DeidentificationClient]``, ``raised by Queue.get()``, ``self.owner: Router |
None``. What tells them apart is around the value, not in it: a type annotation's key is one
lower-case identifier and its type one word, a class name is followed by ``[``, ``(``, ``.attr``
or ``| None``, and identifiers are camel-cased in ways names are not ("AsyncResolver" against
"McDonald", "FitzGerald", "DeVries").
"""

from __future__ import annotations

import re

from ._english_words import is_english_word
from ._per_text import per_text
from ._surnames import is_surname

__all__ = ["code_around", "code_identifier", "in_code_position", "spelt_in_code"]

# prefixes after which a name has an inner capital: McDonald, MacArthur, FitzGerald, DeVries …
_NAME_PREFIXES = frozenset("mc mac fitz de le la di du da van von ten ter del della des st ap al el o d".split())
# legal forms written with inner capitals ("Müller GmbH", "Textor GmbH & Co. KGaA")
_MIXED_CASE_WORDS = frozenset(
    {"GmbH", "gGmbH", "KGaA", "GmbHs", "SpA", "ApS", "AmbH", "InvAG", "PartG", "PartGmbB", "mbH", "GbR", "eG", "eK"}
)
_HUMPS = re.compile(r"[A-Z]?[a-z]+(?=[A-Z])|[A-Z]{2,}(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# right after the value: a call or a generic "(" "[", an attribute ".x", "| None", an assignment
# "=", a path "::", a return annotation "->" (prose puts a space before "(", tables before "|")
_CODE_AFTER = re.compile(r"[\[(]|\.[A-Za-z_(]|::|[ \t]*(?:\|[ \t]*None\b|=(?!=)|->)")
# a key before the value: "owner: ", "self.owner: ", "client=" — one identifier and ":" or "="
# (multi-line: searched within the text itself, where "^" is a line's start, not the search's)
_KEY_BEFORE = re.compile(
    r"(?m)(?:^|[^A-Za-z0-9_.])((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*)[ \t]*[:=][ \t]*$"
)
# a line of code: a keyword or decorator starting it, or "self." / "cls." anywhere in it
_CODE_LINE_HEAD = re.compile(
    r"[ \t]*(?:(?:async[ \t]+)?def|class|import|return)\b|[ \t]*from[ \t]+[\w.]+[ \t]+import\b|[ \t]*@[a-z]"
)
# an import in a docstring's example, after the interpreter's prompt, up to the candidate: the
# names it imports so far ("    >>> from sympy import Point, Ray"); a line of prose after "... "
# ("... import duties paid by Maria Gonzalez") has no module path and comma-joined names
_PROMPT_IMPORT = re.compile(
    r"[ \t]*(?:>>>|\.\.\.)[ \t]+(?:from[ \t]+[a-z_][\w.]*[ \t]+)?import[ \t]+\(?[ \t]*"
    r"(?:[A-Za-z_]\w*(?:[ \t]+as[ \t]+\w+)?[ \t]*,[ \t]*)*"
)
# the rest of an import's line: names joined by commas, maybe a closing bracket
_IMPORTED_NAMES = re.compile(r"[A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)*[ \t]*,?[ \t]*\)?[ \t]*\r?")
_RECEIVERS = ("self.", "cls.")
# how far back a value's line is read: every name candidate reads it, so reading a line of any
# length was quadratic (32 KB of "Anna Berg, " on one line took 10 s); a longer line is read from
# here, where no line-start keyword can match
_LINE_WINDOW = 512


def code_identifier(word: str) -> bool:
    """A word spelt as identifiers are and names are not: camel humps after a prefix names do not
    have ("AsyncResolver", "TestClient", "DNSResolver"), or an underscore."""
    if "_" in word:
        return True
    if word in _MIXED_CASE_WORDS:
        return False
    hump = _HUMPS.match(word)
    if hump is None:
        return False
    return hump.group().lower() not in _NAME_PREFIXES


def code_line(text: str, line_start: int, start: int) -> bool:
    """Whether ``text[line_start:start]`` (no line break in it) reads as a line of code: one regex
    search over it tried every place of the line for every candidate (27 µs on a long line of
    names), so the head is matched where a line starts and the receivers found by ``str.find``."""
    if (line_start == 0 or text[line_start - 1] == "\n") and (
        _CODE_LINE_HEAD.match(text, line_start, start) or _prompt_import(text, line_start, start)
    ):
        return True
    for receiver in _RECEIVERS:
        i = text.find(receiver, line_start, start)
        while i != -1:
            if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"):  # a word starts there (\b)
                return True
            i = text.find(receiver, i + 1, start)
    return False


def _prompt_import(text: str, line_start: int, start: int) -> bool:
    """An import after the interpreter's prompt whose whole line is names joined by commas
    (``>>> from sympy import Point, Ray``): "... import Maria Gonzalez's designs" is prose."""
    if not _PROMPT_IMPORT.fullmatch(text, line_start, start):
        return False
    line_end = text.find("\n", start)
    return _IMPORTED_NAMES.fullmatch(text, start, len(text) if line_end < 0 else line_end) is not None


def _line_start(text: str, start: int) -> int:
    """Where the line holding ``start`` begins, or ``_LINE_WINDOW`` before it on a longer line."""
    low = max(0, start - _LINE_WINDOW)
    return text.rfind("\n", low, start) + 1 or low


def code_around(text: str, start: int, end: int) -> bool:
    """Code's marks around ``text[start:end]`` whatever its spelling: a call, generic or attribute
    after it, a "." or "`" before it, or a line of code (for values whose inner capitals may be a
    brand's, "SindoPower", rather than an identifier's)."""
    return (
        _CODE_AFTER.match(text, end) is not None
        or text[max(0, start - 1) : start] in (".", "`")
        or code_line(text, _line_start(text, start), start)
    )


def _colon_or_equals_before(text: str, line_start: int, start: int) -> bool:
    """Whether ``:`` or ``=`` stands right before ``start`` (blanks between): what a key's match
    needs to end there. Checked first because the key's search tries every place of the line
    (26 µs over a long one, for every candidate of a line of names)."""
    j = start
    while j > line_start and text[j - 1] in " \t":
        j -= 1
    return j > line_start and text[j - 1] in ":="


def in_code_position(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (a capitalised name candidate) reads as code there."""
    value = text[start:end]
    if any(code_identifier(w) for w in _WORD.findall(value)):
        return True
    if _CODE_AFTER.match(text, end):
        return True
    before = text[max(0, start - 1) : start]
    if before in (".", "_", "`") or text[end : end + 1] in ("_", "`"):
        return True
    line_start = _line_start(text, start)
    if code_line(text, line_start, start):
        return True
    key = _KEY_BEFORE.search(text, line_start, start) if _colon_or_equals_before(text, line_start, start) else None
    if key is not None and " " not in value.strip():
        k = key.group(1)
        # a one-word value after a lower-case key ("owner: Literal", "client: T"): an annotation;
        # "Owner: Müller" in a document capitalises its label
        if k[:1].islower() or "." in k or "_" in k:
            return True
    return False


# how far around a candidate its words are looked for as an identifier: the definition a
# docstring describes ("def turan_graph(n, r): Return the Turan Graph") is that close
_SPELT_WINDOW = 1024
_SPELT_PLACES = 4  # places of the spelling read per candidate
_IDENTIFIER_REACH = 64  # characters read each side of a place for the identifier holding it
_IDENTIFIER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def spelt_in_code(text: str, start: int, end: int) -> bool:
    """Whether the words of ``text[start:end]`` (two or more, letters only, the last a word of
    the dictionary) name something the code around them defines or uses: joined in camel case
    or in snake case, as an identifier in a code position ("Turan Graph" under ``def
    turan_graph(``, "Edit Distance" beside ```graph_edit_distance```, "Huey Chord" beside
    ``isinstance(item, HueyChord)``). A person's surname is rarely a word of the dictionary
    ("Maria Gonzalez"); where it is ("Anna Hill"), a handle, a file name or a mention spelt so
    (``anna_hill_resume.pdf``, ``#AnnaHill``, ``@anna_hill``) is in no code position and keeps
    the name a name. Near the candidate any code position counts; anywhere in the text, a
    definition (:func:`_defined_words`) of words whose last no census spells as a surname."""
    words = text[start:end].split()
    if len(words) < 2 or not all(w.isalpha() and w.isascii() for w in words) or not is_english_word(words[-1]):
        return False
    lo, hi = max(0, start - _SPELT_WINDOW), min(len(text), end + _SPELT_WINDOW)
    camel = "".join(w[:1].upper() + w[1:].lower() for w in words)
    snake = "_".join(w.lower() for w in words)
    return (
        _found_as(text, camel, lo, hi, camel=True)
        or _found_as(text, snake, lo, hi, camel=False)
        # from afar only where the last word is no surname: a test named after the customer
        # who reported the bug ("def test_refund_grace_hill") leaves "Customer Grace Hill" a name
        or (not is_surname(words[-1]) and hash(" ".join(w.lower() for w in words)) in _defined_words(text))
    )


_DEFINING = ("def ", "class ")
_IDENTIFIER_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# an identifier's words: a run of capitals before a capitalised word ("HTTP" of "HTTPServer"), a
# capitalised or lower-case word, digits
_IDENTIFIER_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_MOST_WORDS = 8  # of one identifier's words, runs of at most this many are kept


@per_text
def _defined_words(text: str) -> frozenset[int]:
    """The hashes of every run of two or more words (lower case, joined by one blank) of an
    identifier that ``text`` defines with ``def`` or ``class``: "zoe depth", "depth image", "zoe
    depth image" … of ``class ZoeDepthImageProcessor``. A definition anywhere in the text says
    what its words name everywhere in it ("# Zoe Depth model adds padding" two hundred lines below
    the class), where the spellings :func:`_found_as` reads stand only near the candidate. One
    pass for "def " and "class " costs ≈ 1 – 7 ms per MB; searching the whole text for each
    candidate's spellings would be quadratic."""
    defined: set[str] = set()
    for keyword in _DEFINING:
        at = text.find(keyword)
        while at >= 0:
            if at == 0 or text[at - 1] not in _IDENTIFIER_CHARS:
                m = _IDENTIFIER_AT.match(text, at + len(keyword))
                if m is not None:
                    defined.add(m.group())
            at = text.find(keyword, at + 1)
    found: set[int] = set()
    for name in defined:
        words = [w.lower() for w in _IDENTIFIER_WORD.findall(name)][:_MOST_WORDS]
        found.update(hash(" ".join(words[i:j])) for i in range(len(words)) for j in range(i + 2, len(words) + 1))
    return frozenset(found)


def _found_as(text: str, spelt: str, lo: int, hi: int, *, camel: bool) -> bool:
    """Whether ``spelt`` stands in ``text[lo:hi]`` inside an identifier in a code position. Only
    the first few places are read, and an identifier only so far around each (a page of the same
    name and handle took seconds per megabyte when every place in every candidate's window was
    read)."""
    at = text.find(spelt, lo, hi)
    for _ in range(_SPELT_PLACES):
        if at < 0:
            return False
        after = at + len(spelt)
        s = at
        while s > max(0, at - _IDENTIFIER_REACH) and text[s - 1] in _IDENTIFIER_CHARS:
            s -= 1
        e = after
        while e < min(len(text), after + _IDENTIFIER_REACH) and text[e] in _IDENTIFIER_CHARS:
            e += 1
        whole = (
            not text[after : after + 1].islower()  # "HueyChord", not "HueyChords"
            if camel
            # whole words of a snake-case identifier ("edit_distance" in "graph_edit_distance",
            # not in "credit_distances")
            else not text[at - 1 : at].isalnum() and not text[after : after + 1].isalnum()
        )
        if whole and _code_position(text, s, e):
            return True
        at = text.find(spelt, at + 1, hi)
    return False


def _code_position(text: str, s: int, e: int) -> bool:
    """Whether the identifier ``text[s:e]`` is called or defined, quoted as code, an attribute, or
    a class tested against."""
    if text[e : e + 1] == "(" or text[s - 1 : s] in (".", "`"):
        return True
    return _DEFINED_OR_TESTED.search(text, max(0, s - 80), s) is not None


# "def name", "class Name", "isinstance(item, Name", "except Name"
_DEFINED_OR_TESTED = re.compile(
    r"(?:\b(?:def|class|except|raise)[ ]+|\b(?:isinstance|issubclass)\([^()\n]{0,60},[ ]*)\Z"
)
