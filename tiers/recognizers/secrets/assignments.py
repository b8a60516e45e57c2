"""Credentials by the name they are assigned to, in every common syntax.

dotenv and shell ``export``, YAML, JSON, TOML, INI, Java properties, docker-compose environment,
Terraform/HCL, Go ``:=`` and Python / JS / Java / C# / PHP assignments and keyword arguments,
query strings and ``;``-separated connection strings (JDBC ``?password=``, ADO.NET
``Password=…;``), XML elements and attributes. The RE2 pattern finds a candidate key followed by
a separator and a value; :meth:`refine_span` then judges the key by its words (``_keys``) and
narrows the span to the **whole** value: a quoted value up to its closing quote (spaces
included), an unquoted value at the start of a line to the end of the line (a trailing
`` # comment`` aside), elsewhere to the next space or delimiter. Placeholders (``changeme``,
``${VAR}``, ``<your-key>``, ``****``) and code (``token = get_token()``) are not reported.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._keys import Strength, key_strength
from ._values import entropy, is_placeholder, looks_random, mixed_classes

__all__ = ["AssignmentRecognizer", "MarkupRecognizer"]

# Any of these inside an identifier makes it a candidate key; ``_keys`` decides.
_KW = (
    r"(?i:passw|pwd|pass|secret|token|api[_.-]?key|apikey|access[_.-]?key|private[_.-]?key"
    r"|[a-z]key|credential|creds|auth|pat|sig|sas|dsn|conn|bearer|jwt|psw|pw)"
)
_KEY = r"[A-Za-z0-9_.-]{0,60}" + _KW + r"[A-Za-z0-9_.-]{0,60}"
_LEAD = r"(?:^|[^A-Za-z0-9_$.-])"
_SEP = r"[ \t]*(?:=|:=|:|=>|\+=|\?=|,)[ \t]*"
_QUOTED = r"(?:[rbuf]|@)?(?:\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`)"
_UNQUOTED_STOP = r"\s\"'`(){}\[\]<>,;&|"

# key, separator and the start of the value, as refine_span re-reads them (bounded text)
_PARSE = re.compile(
    r"(?P<kq>[\"'\[]?)(?P<key>[A-Za-z0-9_.-]+)[\"'\]]?[ \t]*(?P<sep>:=|=>|\+=|\?=|=|:|,)[ \t]*"
)
_INLINE_COMMENT = re.compile(r"[ \t]+(?:#|//|;)(?:[ \t].*)?$")
_CODE_REF = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)*[;,]?$")
_CODE_SHAPE = re.compile(
    r"[A-Za-z_$][A-Za-z0-9_$]*\s*[(\[]|^(?:new|await|function|lambda|yield|return|typeof|fn|func)\b"
    r"|\s(?:=|==|\|\||&&|\?\?|if|else|or|and)\s|^[!&*|>{\[(]|=>|\)\s*$"
)


def _unquote(body: str) -> tuple[int, int] | None:
    """Span of the quoted value's contents in ``body`` (which starts with its opening quote,
    maybe after a string prefix such as ``r`` or ``@``), or None if it does not close."""
    i = 1 if body[:1] in "rbuf@" and body[1:2] in "\"'`" else 0
    q = body[i : i + 1]
    if q not in ("\"", "'", "`"):
        return None
    j = i + 1
    while j < len(body):
        c = body[j]
        if c == "\\" and q != "`":
            j += 2
            continue
        if c == q:
            return i + 1, j
        if c == "\n":
            return None
        j += 1
    return None


def accept_value(value: str, strength: Strength, quoted: bool) -> bool:
    """Whether ``value`` assigned to a key of ``strength`` is a credential."""
    if strength is Strength.NONE or is_placeholder(value):
        return False
    if not quoted and (_CODE_REF.match(value) and not any(c.isdigit() for c in value)):
        return False
    if not quoted and _CODE_SHAPE.search(value):
        return False
    if strength is Strength.STRONG:
        return len(value) >= 4
    if strength is Strength.MEDIUM:
        return len(value) >= 8 and (mixed_classes(value) >= 2 or entropy(value) >= 3.0)
    return looks_random(value)


class AssignmentRecognizer(TiersPatternRecognizer):
    """``KEY = value`` in config files, shells and source code; the whole value is reported."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern("quoted", _LEAD + r"(?P<value>[\"'\[]?" + _KEY + r"[\"'\]]?" + _SEP + _QUOTED + ")", 0.8),
        # at the start of a line (dotenv, YAML, INI, properties): the rest of the line
        Pattern(
            "line",
            r"^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+|ENV[ \t]+)?(?P<value>[\"']?" + _KEY
            + r"[\"']?[ \t]*(?:=|:)[ \t]*[^\s\"'`][^\n]*)",
            0.8,
        ),
        # anywhere else (command lines, query strings, connection strings): up to a delimiter
        Pattern(
            "inline",
            _LEAD + r"(?P<value>" + _KEY + r"[ \t]*(?:=|:=|:)[ \t]*[^" + _UNQUOTED_STOP + r"]{4,})",
            0.8,
        ),
        # ``;``-separated connection strings (ADO.NET, ODBC): the value runs to the next ``;``
        Pattern("connection_string", r"(?:^|;)[ \t]*(?P<value>" + _KEY + r"[ \t]*=[ \t]*[^;\n\"'{}]{4,})", 0.8),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        m = _PARSE.match(text)
        if m is None:
            return None
        strength = key_strength(m.group("key"))
        if strength is Strength.NONE:
            return None
        if m.group("sep") == "," and not m.group("kq"):
            return None  # ``f(password, x)``: an argument list, not a pair
        start = m.end()
        rest = text[start:]
        if rest[:1] in "\"'`" or (rest[:1] in "rbuf@" and rest[1:2] in "\"'`"):
            span = _unquote(rest)
            if span is None:
                return None
            s, e = start + span[0], start + span[1]
            return (s, e) if accept_value(text[s:e], strength, True) else None
        if m.group("sep") == ",":
            return None
        value = rest.split("\n", 1)[0]
        value = _INLINE_COMMENT.sub("", value).rstrip()
        if value.endswith((";", ",")) and not value.startswith(("'", '"')):
            value = value[:-1]
        if not accept_value(value, strength, False):
            return None
        return start, start + len(value)

    def invalidate_result(self, pattern_text: str) -> bool:  # noqa: D102
        return False  # refine_span has judged it


_TAG = re.compile(r"(?P<key>[A-Za-z0-9_.:-]+)(?:\s[^>]*)?>")
_ATTR = re.compile(r"(?P<key>[A-Za-z0-9_.:-]+)\"[ \t]+value[ \t]*=[ \t]*\"")
_KEYED = re.compile(r"(?P<key>[A-Za-z0-9_.:-]+)\"[^>\n]{0,100}>")


class MarkupRecognizer(TiersPatternRecognizer):
    """XML and HTML: ``<password>…</password>``, ``<add key="DbPassword" value="…"/>``,
    ``<entry key="password">…</entry>`` (Spring, .NET config, Maven ``settings.xml``)."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern("element", r"<(?P<value>" + _KEY + r"(?:[ \t][^>\n]{0,200})?>[^<\n]{1,1000})</", 0.8),
        Pattern(
            "key_value_attributes",
            r"(?i:key|name)[ \t]*=[ \t]*\"(?P<value>" + _KEY + r"\"[ \t]+(?i:value)[ \t]*=[ \t]*\"[^\"\n]{1,1000}\")",
            0.8,
        ),
        Pattern(
            "keyed_element",
            r"(?i:key|name)[ \t]*=[ \t]*\"(?P<value>" + _KEY + r"\"[^>\n]{0,100}>[^<\n]{1,1000})<",
            0.8,
        ),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        for rx in (_ATTR, _KEYED, _TAG):
            m = rx.match(text)
            if m is not None:
                break
        else:
            return None
        s, e = m.end(), len(text) - (1 if rx is _ATTR else 0)
        raw = text[s:e]
        value = raw.strip()
        if not value:
            return None
        s += raw.index(value)
        e = s + len(value)
        strength = key_strength(m.group("key").split(":")[-1])
        return (s, e) if accept_value(value, strength, True) else None

    def invalidate_result(self, pattern_text: str) -> bool:  # noqa: D102
        return False
