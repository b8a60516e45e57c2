"""Credentials that a statement's words introduce rather than a key and an ``=``.

- SQL: ``CREATE USER … IDENTIFIED BY '…'`` (MySQL, Oracle; ``IDENTIFIED WITH plugin BY``; a
  user, role or login named before it: "identified by 'name'" in prose is none), Oracle's
  unquoted ``IDENTIFIED BY pw``, MySQL's ``SET PASSWORD … = 'x'`` / ``= PASSWORD('x')``;
  PostgreSQL's ``PASSWORD '…'`` is a key and a blank, read by ``assignments``;
- PowerShell: ``ConvertTo-SecureString "…" -AsPlainText``;
- prose, as people write to an assistant: "my password is …", "the API key is: …",
  "Passwort ist …". The value must look like one: a password's letters and digits mixed, or
  machine-made; a word after the verb is prose ("the password is required").

Values are judged as an assignment's are (:func:`.assignments.accept_value`): placeholders and
names of code are none.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._code_values import references_a_variable
from ._keys import Strength
from ._values import letters_at_random
from .assignments import accept_value, named_in_code

__all__ = ["ProseCredentialRecognizer", "StatementRecognizer"]

_STRING = r"(?:'(?:[^'\\\n]|\\.|'')*'|\"(?:[^\"\\\n]|\\.)*\")"


# what follows Oracle's ``IDENTIFIED BY`` and is no password
_ORACLE_KEYWORDS = frozenset({"VALUES", "PASSWORD", "EXTERNALLY", "GLOBALLY", "DEFAULT", "NULL"})


class StatementRecognizer(TiersPatternRecognizer):
    """A quoted password right after SQL's ``IDENTIFIED BY`` or PowerShell's
    ``ConvertTo-SecureString``: whatever the string holds is the password."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "sql_identified_by",
            r"(?i:\b(?:user|role|login|to)\b[^;\n]{0,200}?\bidentified(?:[ \t]+with[ \t]+[A-Za-z0-9_]+)?[ \t]+by(?:[ \t]+password)?)[ \t]+(?P<value>"
            + _STRING
            + ")",
            0.9,
        ),
        # Oracle's password is an identifier, unquoted (``CREATE USER app IDENTIFIED BY Secr3tPw;``)
        Pattern(
            "sql_identified_by_unquoted",
            r"(?i:\b(?:user|role|login|to)\b[^;\n]{0,200}?\bidentified[ \t]+by)[ \t]+(?P<value>[A-Za-z0-9_$#]{4,128})"
            r"[ \t]*(?:;|$|[ \t]+(?i:account|default|quota|password|profile|temporary)\b)",
            0.9,
        ),
        # MySQL's ``SET PASSWORD [FOR 'u'@'h'] = 'x'`` and the old ``= PASSWORD('x')``
        Pattern(
            "sql_set_password",
            r"(?i:\bset[ \t]+password\b)[^;\n=]{0,200}=[ \t]*(?:(?i:password)[ \t]*\([ \t]*)?(?P<value>"
            + _STRING
            + ")",
            0.9,
        ),
        Pattern(
            "powershell_secure_string",
            r"(?i:\bConvertTo-SecureString)[ \t]+(?:-String[ \t]+)?(?P<value>" + _STRING + ")",
            0.9,
        ),
    ]
    LITERALS = {
        "sql_identified_by": ("IDENTIFIED", "identified", "Identified"),
        "sql_identified_by_unquoted": ("IDENTIFIED", "identified", "Identified"),
        "sql_set_password": ("PASSWORD", "password", "Password"),
        "powershell_secure_string": ("ConvertTo-SecureString", "convertto-securestring", "Convertto-SecureString"),
    }

    def refine_span(self, text: str) -> tuple[int, int] | None:
        if text[0] not in "'\"":
            # Oracle's unquoted identifier: its keywords are none (``IDENTIFIED BY VALUES '…'``)
            if text.upper() in _ORACLE_KEYWORDS or not accept_value(text, Strength.STRONG, False):
                return None
            return 0, len(text)
        value = text[1:-1].replace("''", "'") if text[0] == "'" else text[1:-1]
        if not value or (text[0] == '"' and references_a_variable(value)):
            return None  # ``ConvertTo-SecureString "$env:PASSWORD"``: PowerShell interpolates
        return (1, len(text) - 1) if accept_value(value, Strength.STRONG, True) else None


# the words a sentence names a credential by, English, German and French, as the recognizers read
# them: folded to ASCII (``tiers.normalize``: "Schlüssel" is "Schlussel", "für" is "fur")
_PASSWORD_WORDS = r"password|passcode|passphrase|passwort|kennwort|mot de passe|pin"
# a credential's name of two words: its value is a key's (eight characters or more, varied)
_NAMED_KEY_WORDS = (
    r"api[ _-]?key|api[ _-]?token|access[ _-]?token|auth[ _-]?token|secret[ _-]?key|client[ _-]?secret"
    r"|access[ _-]?key|cle d'api|cle api|api[ _-]?schl(?:u|ue)ssel|jeton d'acces"
)
# one word alone: only a random-looking value is a credential's
_KEY_WORDS = _NAMED_KEY_WORDS + r"|token|secret|schl(?:u|ue)ssel|jeton"
# what the credential is for, between its name and the verb: "the password for the staging
# server is …", "das Kennwort für den Server ist …", "le mot de passe du serveur est …"
_FOR = r"(?:[ \t]+(?i:for|of|on|fur|fuer|vom|von|des|du|de|pour)(?:[ \t]+[^\s.,;:!?*_`]+){1,4})?"
# Markdown's emphasis around the name or its colon ("**Password:** …", "- **API key**: …")
_EMPHASIS = r"(?:\*\*|__)?"
# the verb or mark between the word and its value
_VERB = (
    r"[ \t]+(?:is|was|is now|will be|ist|lautet|est|:)[ \t]*:?" + _EMPHASIS + r"[ \t]+|[ \t]*:" + _EMPHASIS + r"[ \t]+"
)
# a value as a sentence writes it, in Markdown's backticks or not
_VALUE = r"`?[^\s\"'`<>()\[\]{},;]{6,256}`?"


# the credential's name, its kind in a group: a password's, a named key's, any other (``extra``
# adds words only a verb of use makes a credential's name: "with key …")
def _named(extra: str = "") -> str:
    return (
        r"(?i:(?P<password>"
        + _PASSWORD_WORDS
        + r")|(?P<named>"
        + _NAMED_KEY_WORDS
        + r")|(?:"
        + _KEY_WORDS
        + extra
        + r"))"
    )


_PROSE = re.compile(_named() + _EMPHASIS + _FOR + r"(?:" + _VERB + r")`?(?P<value>[^\s`]+)`?\Z")
# a user and a password in one sentence: "user admin, password …", "Benutzer admin, Passwort …",
# "the credentials are admin / …", "Zugangsdaten: admin / …"
_USER_WORDS = r"user|username|login|benutzer|benutzername|utilisateur|identifiant"
_CREDENTIALS_WORDS = r"credentials|creds|zugangsdaten|anmeldedaten|identifiants"
# (the head before the value, as the pattern and its re-reading share it)
_PAIR_HEAD = (
    r"(?i:(?:" + _USER_WORDS + r")[ \t]*:?[ \t]+\S{1,64}?[ \t]*[,;/][ \t]*(?:" + _PASSWORD_WORDS + r"|pw|pwd)"
    r"[ \t]*:?[ \t]+|(?:"
    + _CREDENTIALS_WORDS
    + r")(?:[ \t]+(?:are|sind|sont|is))?[ \t]*:?[ \t]+\S{1,64}?[ \t]*[/:][ \t]*)"
)
_PAIR = re.compile(_PAIR_HEAD + r"`?(?P<value>[^\s`]+)`?\Z")
# a credential handed to a verb of use: "use the password … to log in", "Using API key … in the
# request", "with key …" (a key alone: only a machine-made value)
_USE_VERBS = r"use|using|with|try|enter|mit|avec"
_USE = re.compile(_named(r"|key") + r"[ \t]+`?(?P<value>[^\s`]+)`?\Z")


def _sentence_value(value: str) -> str:
    """A value without the sentence's closing mark; an ellipsis is the value's own (``sk-...``)."""
    return value if value.endswith(("...", "…")) else value.rstrip(".!?:")


def _mixed(value: str) -> bool:
    """Letters and digits mixed, or random letters: a sentence's word after "password" is none."""
    return (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)) or letters_at_random(value)


class ProseCredentialRecognizer(TiersPatternRecognizer):
    """A credential a sentence gives: "my password is Summer2024x", "API key: k3J9…", "the
    password for the staging server is …", "use the password … to log in", Markdown's
    "**Password:** …"."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "prose",
            r"(?:^|[^A-Za-z0-9_.-])(?P<value>(?i:"
            + _PASSWORD_WORDS
            + "|"
            + _KEY_WORDS
            + r")"
            + _EMPHASIS
            + _FOR
            + r"(?:"
            + _VERB
            + r")"
            + _VALUE
            + r")",
            0.8,
        ),
        Pattern("prose_pair", r"(?:^|[^A-Za-z0-9_.-])(?P<value>" + _PAIR_HEAD + _VALUE + r")", 0.8),
        Pattern(
            "prose_use",
            r"(?:^|[^A-Za-z0-9_.-])(?i:"
            + _USE_VERBS
            + r")[ \t]+(?:(?i:the|my|our|this|that|the new|an|a|dem|le|la)[ \t]+)?(?P<value>(?i:"
            + _PASSWORD_WORDS
            + "|"
            + _KEY_WORDS
            + r"|key)[ \t]+"
            + _VALUE
            + r")",
            0.8,
        ),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        # a user and a password first; then a name and a verb ("prose"), else a name after a verb
        # of use ("prose_use": no verb between the name and the value)
        pair = _PAIR.match(text)
        if pair is not None:
            value = _sentence_value(pair.group("value"))
            if not accept_value(value, Strength.STRONG, False) or not _mixed(value):
                return None
            return pair.start("value"), pair.start("value") + len(value)
        m = _PROSE.match(text) or _USE.match(text)
        if m is None:
            return None
        # judged without a sentence's closing mark, stripped with it ("Summer2024!" may be whole)
        value = _sentence_value(m.group("value"))
        if not _mixed(value):
            return None  # "the password is required", "token: expired", "PIN: 4711" (a number)
        # a password's value is any such value (as under a password's key), a named key's one of
        # eight characters or more, a bare "token"'s one that looks machine-made
        strength = Strength.STRONG if m.group("password") else Strength.MEDIUM if m.group("named") else Strength.WEAK
        if strength is not Strength.STRONG and named_in_code(value):
            return None  # ``api_token: output_2_mask,`` names a variable of code, no key
        if not accept_value(value, strength, False):
            return None
        return m.start("value"), m.end("value")
