"""A credential's name in one field and its value in the next.

Infrastructure writes environment variables and parameters as pairs of fields rather than as
``KEY=value``: Kubernetes' ``- name: DB_PASSWORD`` / ``value: "…"``, an ECS task's
``{"name": "DB_PASSWORD", "value": "…"}``, Terraform's ``{ name = "…", value = "…" }``,
CloudFormation's ``ParameterKey`` / ``ParameterValue``; command lines name the secret, then give it
(``aws ssm put-parameter --name /app/db_password --value …``, ``az keyvault secret set --name
DbPassword --value …``, ``gh secret set API_TOKEN --body …``); tables put them in two cells
(``| password | … |``, a CSV's ``password,…``), where only a machine-made value counts. The name is judged as an
assignment's key (``_keys``), the value as its value (:func:`.assignments.accept_value`):
``valueFrom:`` (a reference to a stored secret) is no value, and neither is a placeholder.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._keys import Strength, key_strength
from ._values import machine_made
from .assignments import _KEY, _QUOTED, accept_value

__all__ = ["NameValueRecognizer"]

# a field that names: "name", "key", "ParameterKey", "secretName", "variable"
_NAME_FIELD = r"(?i:name|key|parameterkey|parametername|secretname|variable|var)"
_VALUE_FIELD = r"(?i:value|parametervalue|secretvalue)"
_UNQUOTED = r"[^\s\"'`,}\]]{1,256}"
# a command-line argument: quoted, or a word
_ARG = r"(?:'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|[^\s'\"]{1,256})"


class NameValueRecognizer(TiersPatternRecognizer):
    """The value field after a name field that names a credential, and ``--value`` after
    ``--name``."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "fields",
            r"(?:^|[^A-Za-z0-9_])[\"']?"
            + _NAME_FIELD
            + r"[\"']?[ \t]*[:=][ \t]*[\"']?(?P<value>"
            + _KEY
            + r"[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*(?:-[ \t]+)?)?[\"']?"
            + _VALUE_FIELD
            + r"[\"']?[ \t]*[:=][ \t]*(?:"
            + _QUOTED
            + "|"
            + _UNQUOTED
            + "))",
            0.8,
        ),
        Pattern(
            "command",
            r"(?:--name|--parameter-name|\bsecret[ \t]+set)[ \t=]+[\"']?(?P<value>[A-Za-z0-9_./-]*?"
            + _KEY
            + r"[\"']?(?:[ \t]+[^\n]{0,200}?)?[ \t]+(?:--value|--body|-b|--secret-string|--secret-value)[ \t=]+"
            + _ARG
            + ")",
            0.8,
        ),
        # a table's row: a Markdown table's ``| password | … |``, a CSV's ``password,…``
        Pattern(
            "cells",
            r"(?:^|\|)[ \t]*(?P<value>" + _KEY + r"[ \t]*[|,;][ \t]*[^\s|,;\"'`]{8,256})[ \t]*(?:[|,;]|$)",
            0.8,
        ),
    ]
    LITERALS = {
        "fields": ("alue", "ALUE"),
        "command": ("--", "secret"),
        "cells": ("|", ",", ";"),
    }

    def refine_span(self, text: str) -> tuple[int, int] | None:
        m = _NAME.match(text)
        if m is None:
            return None
        key = m.group("key").rsplit("/", 1)[-1]
        strength = key_strength(key)
        if strength is Strength.NONE or key[:1].isdigit():
            return None
        cell = _CELL.match(text, m.end())
        if cell is not None:
            # a cell after a cell naming a credential: only a machine-made value (a table of
            # settings describes them: "| password | string |", "| token | required |")
            value = text[cell.end() :]
            s = len(text) - len(value)
            if not _TOKEN_CELL.fullmatch(value) or _PATH.fullmatch(value):
                return None  # code's arguments (``x.to(dev, non_blocking=True)``), a dotted name
            return (s, len(text)) if machine_made(value) and accept_value(value, strength, False, key=key) else None
        v = _LAST_VALUE.search(text)
        if v is None:
            return None
        group = next(g for g in ("dq", "sq", "word") if v.group(g) is not None)
        s, e = v.span(group)
        quoted = group != "word"
        value = text[s:e]
        return (s, e) if value and accept_value(value, strength, quoted, key=key) else None


_NAME = re.compile(r"(?P<key>[A-Za-z0-9_./-]+)")
_CELL = re.compile(r"[ \t]*[|,;][ \t]*")
# a token's characters in a cell: base64, base64url, hex, "~", a dot inside; "=" only as padding
_TOKEN_CELL = re.compile(r"[A-Za-z0-9_+/~-](?:[A-Za-z0-9_+/~.-]*[A-Za-z0-9_+/~-])?={0,2}")
_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# the value as the pattern took it, at the end: inside its quotes, or the last word
_LAST_VALUE = re.compile(r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.)*)\"|'(?P<sq>[^'\n]*)'|(?<=[ \t=:])(?P<word>[^\s\"'`]+))\Z")
