"""Credentials handed to a call by position, where no key names them but the call does.

- a setter or a builder's method named after the credential: ``ds.setPassword("…")``,
  ``client.setApiKey("…")``, Go's ``.WithAuthToken("…")``, ``.apiKey("…")`` (the name is judged
  as a key is, ``_keys``);
- a user (or a key id) and a password as a pair: ``auth=("admin", "…")``, ``HTTPBasicAuth("admin", "…")``,
  ``AwsBasicCredentials.create("AKIA…", "…")``, ``Credentials.basic("admin", "…")``,
  ``smtp.login("alerts@…", "…")``, ``new NetworkCredential("svc", "…")``, JDBC's
  ``DriverManager.getConnection(url, "root", "…")``;
- a password typed into a login form by a browser test: ``cy.get('#password').type('…')``,
  ``page.fill('input[name="password"]', '…')``, ``find_element(By.ID, "password").send_keys("…")``.

Only a quoted literal counts (a variable passed is code), and it is judged as a quoted value under
a password's key is (:func:`.assignments.accept_value`): placeholders and names of code are none.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._keys import Strength, key_strength
from .assignments import accept_value

__all__ = ["CallArgumentRecognizer"]

_QUOTED = r"(?:\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
# the calls that take a user, then a password
_PAIR_CALLS = (
    r"auth|basic_auth|login|HTTPBasicAuth|HTTPDigestAuth|BasicAuth|DigestAuth|NetworkCredential"
    r"|UsernamePasswordCredentials|PasswordAuthentication|BasicAWSCredentials|StaticCredentialsProvider"
    r"|[A-Za-z]*Credentials?\.(?:create|basic|of|from)"
)
# the field a browser test fills: its selector names a password
_PASSWORD_FIELD = r"(?i:passw|pwd|passphrase)"
_FILL = r"(?:type|fill|send_keys|sendKeys|setValue|press_sequentially|pressSequentially)"
# a setter's whole candidate: its name and one quoted argument (the other forms hold two, or a
# selector and a chained call)
_SETTER = re.compile(
    r"(?:(?:set|with|Set|With)(?=[A-Z]))?(?P<name>[A-Za-z][A-Za-z0-9]*)\([ \t]*" + _QUOTED + r"[ \t]*\)\Z"
)
# a method that does something with a credential named by its argument, not one that is given it
_VERB = re.compile(
    r"(?i:get|fetch|read|load|find|lookup|retrieve|delete|remove|has|is|list|describe|rotate|create|generate"
    r"|validate|verify|check|hash|encrypt|decrypt|sign|parse|encode|decode|revoke|refresh|exchange|request)"
    r"(?=[A-Z_]|\Z)"
)
# words of one case each (or capitalised) joined by "_": a constant's or a symbol's name
# (``DW_ATE_signed``, ``DW_LANG_Python``)
_IDENTIFIER = re.compile(
    r"^(?:[A-Z][A-Z0-9]*|[a-z][a-z0-9]*|[A-Z][a-z0-9]+)(?:_(?:[A-Z][A-Z0-9]*|[a-z][a-z0-9]*|[A-Z][a-z0-9]+))+$"
)
_LAST_QUOTED = re.compile(_QUOTED + r"[ \t]*\)?\Z")


class CallArgumentRecognizer(TiersPatternRecognizer):
    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "setter",
            r"\.(?P<value>[A-Za-z0-9]*(?i:passw|pwd|secret|token|key|credential)[A-Za-z0-9]*\([ \t]*"
            + _QUOTED
            + r"[ \t]*\))",
            0.85,
        ),
        Pattern(
            "user_password_pair",
            r"(?:^|[^A-Za-z0-9_])(?P<value>(?:" + _PAIR_CALLS + r")[ \t]*(?:=[ \t]*)?\([ \t]*\(?[ \t]*"
            r"(?:new[ \t]+)?" + _QUOTED + r"[ \t]*,[ \t]*" + _QUOTED + ")",
            0.85,
        ),
        Pattern(
            "jdbc_get_connection",
            r"\b(?P<value>getConnection\([^()\n]{1,200}?,[ \t]*" + _QUOTED + r"[ \t]*,[ \t]*" + _QUOTED + ")",
            0.85,
        ),
        # ``page.fill('#password', '…')``: the selector first, then the text
        Pattern(
            "form_fill",
            r"\.(?P<value>"
            + _FILL
            + r"\([ \t]*(?:'[^'\n]{0,80}"
            + _PASSWORD_FIELD
            + r"[^'\n]{0,80}'|\"[^\"\n]{0,80}"
            + _PASSWORD_FIELD
            + r"[^\"\n]{0,80}\")[ \t]*,[ \t]*"
            + _QUOTED
            + ")",
            0.85,
        ),
        # ``cy.get('#password').type('…')``: the field found, then filled
        Pattern(
            "form_chain",
            r"(?P<value>"
            + _PASSWORD_FIELD
            + r"[^\n;]{0,80}?\)[ \t]*\.(?:clear\(\)[ \t]*\.)?"
            + _FILL
            + r"\([ \t]*"
            + _QUOTED
            + ")",
            0.85,
        ),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        quoted = _LAST_QUOTED.search(text)
        if quoted is None:
            return None
        literal = quoted.group().rstrip(") \t")
        start = quoted.start() + 1
        end = quoted.start() + len(literal) - 1
        value = text[start:end]
        if value != value.strip() or value.rstrip().endswith(":"):
            return None  # ``readUserInfo.password('       Again:     ')``: a prompt's text
        setter = _SETTER.match(text)
        if setter is not None:
            if _VERB.match(setter.group("name")):
                return None  # ``client.GetSecret("db-password")``: the name of a secret, looked up
            strength = key_strength(setter.group("name"))
            if strength is Strength.NONE:
                return None  # ``setName("…")``, ``withTimeout("…")``
            if strength is not Strength.STRONG and _IDENTIFIER.match(value):
                return None  # ``ir.DIToken("DW_ATE_signed")``: a token of a language, not a key
            return (start, end) if accept_value(value, strength, True, key=setter.group("name")) else None
        return (start, end) if accept_value(value, Strength.STRONG, True) else None

    def invalidate_result(self, pattern_text: str) -> bool:
        return False  # refine_span has judged it
