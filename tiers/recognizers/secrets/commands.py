"""Credentials in command lines, dot-files, HTTP headers and Kubernetes Secret data.

``curl -u user:pass``, ``mysql -pPASS``, ``--password pass``, ``sshpass -p``, ``docker login -p``,
``keytool -storepass``, ``redis-cli -a``, ``mongosh -p``, ``htpasswd -b``, ``aws configure set``,
``wpa_passphrase``, ``echo … | sudo -S`` / ``--password-stdin``, Oracle's ``user/password@db``;
``.netrc`` (``machine … login … password …``) and ``.pgpass`` (``host:port:db:user:password``)
lines, ``.htpasswd`` and ``/etc/shadow`` lines (a user and a password's hash); ``Authorization: Basic/Bearer/token …`` and a bare ``Bearer <opaque>``; the base64 values
of a Kubernetes Secret's ``data:`` (each one decodes to text).
"""

from __future__ import annotations

import base64
import binascii
import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from .._english_words import is_english_word
from ._code_values import used_as_code
from ._values import is_placeholder, letters_at_random, looks_random, sequential

__all__ = [
    "AuthorizationRecognizer",
    "BearerRecognizer",
    "CommandLineRecognizer",
    "CookieRecognizer",
    "DotfileRecognizer",
    "KubernetesSecretDataRecognizer",
]

# a value may start with one "-" (a base64url token does one time in 32; two dashes are the next
# option's); a flag is told by its shape
_ARG = r"(?:'[^'\n]{1,256}'|\"[^\"\n]{1,256}\"|-?[^\s'\"-][^\s'\"]{0,255})"


# an argument that holds a digit or a password's mark: what ``echo`` pipes to a password prompt
# ("echo hello | sudo -S true" pipes a word)
_MARK = r"[0-9!@#%^&*+=~?]"
_MARKED_ARG = (
    r"(?:'[^'\n]{0,128}" + _MARK + r"[^'\n]{0,128}'|\"[^\"\n]{0,128}" + _MARK + r"[^\"\n]{0,128}\""
    r"|[^\s'\"$-][^\s'\"]{0,128}" + _MARK + r"[^\s'\"]{0,128})"
)


def _strip_quotes(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


class CommandLineRecognizer(TiersPatternRecognizer):
    """Passwords passed on a command line."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "curl_user",
            r"(?:^|[\s'\"])(?:-u|--user|--proxy-user)(?:[ \t]+|=)['\"]?[^\s:'\"]{1,128}:(?P<value>[^\s'\"]{1,256})",
            0.9,
        ),
        Pattern(
            "mysql_p",
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|mariadb-dump)\b[^\n]{0,300}?[ \t]-p(?P<value>"
            + _ARG
            + ")",
            0.9,
        ),
        Pattern("sshpass", r"\bsshpass[ \t]+-p[ \t]*(?P<value>" + _ARG + ")", 0.9),
        Pattern(
            "login_p",
            r"\b(?:docker|podman|helm|oras|skopeo|buildah)[ \t]+(?:registry[ \t]+)?login\b[^\n]{0,300}?[ \t]-p[ \t]+(?P<value>"
            + _ARG
            + ")",
            0.9,
        ),
        Pattern(
            "password_flag",
            r"(?:^|[ \t])--(?:password|passwd|pass|db-password|token|api-key|apikey|secret|client-secret|auth-token"
            r"|access-token|requirepass|masterauth|storepass|keypass)[ \t]+(?P<value>" + _ARG + ")",
            0.9,
        ),
        # keytool's passwords (``-storepass``, ``-srckeypass`` …): one dash, the value after a blank
        Pattern(
            "keytool_pass",
            r"(?:^|[ \t])-(?:src|dest|new)?(?:storepass|keypass)[ \t]+(?P<value>" + _ARG + ")",
            0.9,
        ),
        # clients that take the password after a short option of their own: ``redis-cli -a``,
        # the MongoDB shell's and tools' ``-p`` (theirs is no port)
        Pattern(
            "client_short_option",
            r"\b(?:redis-cli[^\n]{0,300}?[ \t]-a|(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b"
            r"[^\n]{0,300}?[ \t]-p)[ \t]+(?P<value>" + _ARG + ")",
            0.9,
        ),
        # ``htpasswd -b [-c …] FILE USER PASSWORD`` (``-nb USER PASSWORD``: no file)
        Pattern(
            "htpasswd_batch",
            r"\bhtpasswd(?:[ \t]+-[A-Za-z]+)*?[ \t]+-[A-Za-mo-z]*b[A-Za-mo-z]*(?:[ \t]+-[A-Za-mo-z]+)*[ \t]+[^\s-]\S*"
            r"[ \t]+\S+[ \t]+(?P<value>" + _ARG + ")",
            0.9,
        ),
        Pattern(
            "htpasswd_no_file",
            r"\bhtpasswd(?:[ \t]+-[A-Za-z]+)*?[ \t]+-[A-Za-z]*(?:nb|bn)[A-Za-z]*(?:[ \t]+-[A-Za-z]+)*[ \t]+\S+[ \t]+(?P<value>"
            + _ARG
            + ")",
            0.9,
        ),
        # ``aws configure set aws_secret_access_key …`` (a profile's too: ``profile.dev.aws_…``)
        Pattern(
            "aws_configure_set",
            r"\baws[ \t]+configure[ \t]+set[ \t]+(?:[\w.-]+\.)?(?:aws_secret_access_key|aws_session_token)[ \t]+(?P<value>"
            + _ARG
            + ")",
            0.9,
        ),
        # Oracle's ``user/password@service``: a JDBC thin or OCI URL, ``sqlplus``, ``expdp``, ``rman``
        Pattern(
            "oracle_user_password",
            r"(?:\bjdbc:oracle:(?:thin|oci8?):|\b(?:sqlplus|sqlldr|expdp|impdp|exp|imp|rman)[ \t]+(?:-[A-Za-z]+[ \t]+)*"
            r"(?:(?:userid|target)=)?)[A-Za-z][A-Za-z0-9_$#]{0,63}/(?P<value>[^\s@/\"']{1,128})@",
            0.9,
        ),
        # a Go MySQL driver's DSN: ``user:password@tcp(host:3306)/db`` (no scheme, so no URL)
        Pattern(
            "go_mysql_dsn",
            r"[\"'`][A-Za-z0-9_.-]{1,64}:(?P<value>[^@\s\"'`/]{1,128})@(?:tcp|unix|udp)\(",
            0.9,
        ),
        # a token handed to a login command as its argument or on its input: ``vault login …``,
        # ``gh auth login --with-token <<< …``, ``vercel env add NAME env <<< …``
        Pattern("vault_login", r"\bvault[ \t]+login[ \t]+(?:-[a-z-]+(?:=\S+)?[ \t]+)*(?P<value>" + _ARG + ")", 0.9),
        Pattern(
            "here_string",
            r"(?:--with-token|--password-stdin|\benv[ \t]+add[ \t]+\S+(?:[ \t]+\S+)?)[ \t]*<<<[ \t]*(?P<value>"
            + _ARG
            + ")",
            0.9,
        ),
        # Azure's CLI: ``az login --service-principal -u app -p …``
        Pattern("az_login_p", r"\baz[ \t]+login\b[^\n]{0,300}?[ \t]-p[ \t]+(?P<value>" + _ARG + ")", 0.9),
        # ``npm config set //registry.npmjs.org/:_authToken …`` (and ``_password``)
        Pattern(
            "npm_config_set",
            r"\b(?:npm|yarn|pnpm)[ \t]+config[ \t]+set[ \t]+\S*:?_(?:authToken|auth|password)[ \t]+(?P<value>"
            + _ARG
            + ")",
            0.9,
        ),
        # ``wpa_passphrase SSID PASSPHRASE``
        Pattern("wpa_passphrase", r"\bwpa_passphrase[ \t]+" + _ARG + r"[ \t]+(?P<value>" + _ARG + ")", 0.9),
        # a password piped to a command that reads it from its input
        Pattern(
            "echo_to_stdin",
            r"\becho[ \t]+(?:-n[ \t]+)?(?P<value>"
            + _MARKED_ARG
            + r")[ \t]*\|[ \t]*(?:sudo(?:[ \t]+-[A-Za-z]+)*[ \t]+-[A-Za-z]*S\b|[^\n|]{0,200}?--(?:password-stdin|with-token)\b)",
            0.9,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        value = _strip_quotes(pattern_text)
        return is_placeholder(value) or _flag(value) or value.lower() in _FLAG_PROSE or _metavar(value)


def _flag(value: str) -> bool:
    """The next option rather than a value (``--password --verbose``, ``-p -``,
    ``--password-stdin``): a dash or two, then one letter or lower-case words that are no random
    draw. A token that starts with a dash (``-nHTisCe9RY2Cem-UZjvU_yRgxeE``) is none."""
    if not value.startswith("-"):
        return False
    name = value.lstrip("-").split("=", 1)[0]
    return len(name) <= 1 or (_FLAG_NAME.fullmatch(name) is not None and not looks_random(name))


def _metavar(value: str) -> bool:
    """A help text's name for the value (``--password TEXT  Database password``, click's and
    argparse's ``TEXT``, ``STRING``, ``FILE``): one English word in capitals."""
    return value.isalpha() and value.isupper() and is_english_word(value.lower())


# an option's name: lower-case words joined by hyphens (``password-stdin``, ``dry-run``)
_FLAG_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


# what prose writes after a flag's name: the flag named as one ("the --username and --password
# options", "the --token flag is required"), not its value
_FLAG_PROSE = frozenset(
    """option options flag flags argument arguments arg args parameter parameters param params switch
    switches setting settings and or is are was were be must should can may will to in on with for of
    from instead when if as at by""".split()
)


class DotfileRecognizer(TiersPatternRecognizer):
    """``.netrc``, ``.pgpass``, ``.htpasswd`` and ``/etc/shadow`` entries."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "netrc_line",
            r"(?:^[ \t]*default|(?:^|[ \t])machine[ \t]+\S+)[^\n]{0,300}?[ \t]password[ \t]+(?P<value>\"[^\"\n]{1,256}\"|\S{1,256})",
            0.9,
        ),
        # an entry spread over lines: ``machine`` / ``login`` lines, then ``password``
        Pattern(
            "netrc_lines",
            r"^[ \t]*(?:machine|login)[ \t]+\S+[ \t\r]*\n(?:[ \t]*(?:login|account|port)[ \t]+\S+[ \t\r]*\n){0,3}[ \t]*password[ \t]+(?P<value>\"[^\"\n]{1,256}\"|[^\s]{1,256})[ \t\r]*$",
            0.9,
        ),
        # a user and a password's crypt(3) hash: ``.htpasswd`` (``$apr1$``, bcrypt's ``$2y$``) and
        # ``/etc/shadow`` (``$6$``, yescrypt's ``$y$``) lines; a hash is cracked offline, so it
        # travels no further than the password
        Pattern(
            "password_hash_line",
            r"^[ \t]*[A-Za-z0-9._@-]{1,64}:(?P<value>\$(?:1|2[abxy]|5|6|apr1|y|gy|7|argon2id|argon2i|argon2d|scrypt)\$"
            r"[./A-Za-z0-9$=,+-]{16,256})(?::|[ \t]*$)",
            0.9,
        ),
        Pattern(
            "pgpass",
            r"^[A-Za-z0-9.*_\[\]:-]{1,253}?:(?:\d{2,5}|\*):[^:\s]{1,128}:[^:\s]{1,128}:(?P<value>\S{1,256})[ \t]*$",
            0.9,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        # digits and colons only: the ageing fields of a ``/etc/shadow`` line whose password is
        # locked (``root:*:19700:0:99999:7:::``), read as ``.pgpass``'s five fields
        return is_placeholder(pattern_text) or (":" in pattern_text and not pattern_text.strip("0123456789:"))


class AuthorizationRecognizer(TiersPatternRecognizer):
    """The credential of an ``Authorization`` / ``Proxy-Authorization`` header: whatever follows
    the scheme is one (a ``Basic`` one decodes to ``user:password``)."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "authorization_header",
            r"(?:^|[^A-Za-z0-9_])(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:(?:basic|bearer|token|bot|ssws|apikey|api-key|key|sharedkey|klaviyo-api-key|dsn|gitlab-token|flyv1)[ \t]+)?"
            r"(?P<value>[^\s\"',`<>()\[\]{}]{8,})",
            0.9,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        if is_placeholder(pattern_text) or pattern_text.endswith(":"):
            return True  # ``Authorization: Bearer Authorization: …``: a header name, no value
        if all(p.lower() in _SCHEMES for p in re.split(r"[/|,]", pattern_text) if p):
            return True
        decoded = _b64_text(pattern_text)
        if decoded is not None and ":" in decoded:
            password = decoded.partition(":")[2]
            return not password or is_placeholder(password)
        return False

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """An unquoted identifier is code, not a credential: ``"Authorization": authorization``,
        ``authorization: SimpleCheckConfig``, ``= self._expected_authorization``; so is a value
        that code goes on using (``= base64.decodebytes(authorization)``)."""
        if used_as_code(text, start, end):
            return True
        if text[start - 1 : start] in ('"', "'"):
            return False
        return bool(_IDENTIFIER.fullmatch(text[start:end])) and not any(c.isdigit() for c in text[start:end])


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*[,;]?")
_SCHEMES = frozenset({"basic", "bearer", "digest", "negotiate", "token", "ntlm", "hoba", "mutual"})


class BearerRecognizer(TiersPatternRecognizer):
    """A bare ``Bearer <opaque>`` or ``Basic <base64 user:password>`` anywhere (curl lines,
    logs, prose); an opaque bearer value must look machine-made."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern("bearer", r"\b(?i:bearer)[ \t]+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)", 0.9),
        Pattern("basic", r"\b(?i:basic)[ \t]+(?P<value>[A-Za-z0-9+/]{8,}={0,2})(?:[^A-Za-z0-9+/=]|$)", 0.9),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        if is_placeholder(pattern_text):
            return True
        decoded = _b64_text(pattern_text)
        if decoded is not None and ":" in decoded:
            password = decoded.partition(":")[2]
            return not password or is_placeholder(password)
        return not looks_random(pattern_text, 16)


def _b64_text(value: str) -> str | None:
    """``value`` decoded as (padded) base64 to printable text, else None."""
    if len(value) % 4:
        return None
    try:
        raw = base64.b64decode(value, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    # ASCII only: random letters decode to valid UTF-8 now and then ("Question" -> "B笶*'")
    return text if text and all(" " <= c <= "~" or c in "\r\n\t" for c in text) else None


_LOWER_AND_DIGITS = re.compile(r"[a-z0-9]+")


class KubernetesSecretDataRecognizer(TiersPatternRecognizer):
    """Indented ``key: <base64>`` lines whose value decodes to text: a Secret's ``data:`` (any
    key name, ``.dockerconfigjson`` and ``tls.key`` included)."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "secret_data",
            r"^[ \t]+[\"']?[A-Za-z0-9_.-]{1,253}[\"']?:[ \t]+[\"']?(?P<value>[A-Za-z0-9+/]{8,}={0,2})[\"']?[ \t]*$",
            0.9,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        # an alphabet written out ("TUVWTUVW") may decode to text by chance ("MUVMUV")
        if sequential(pattern_text):
            return True
        # lower-case letters (and digits) only: a word or a word piece ("entially" in a
        # tokenizer's JSON decodes to "z{bjYr"), a project's or a digest's name ("a000a000"
        # decodes to "kM4kM4"). Base64 of a value is that almost never (3 in 1,000 lower-case
        # passwords of six letters, none of twelve); of upper-case text it often is all capitals
        # ("TUFTVEVS" is "MASTER"), so capitals stay data
        if _LOWER_AND_DIGITS.fullmatch(pattern_text):
            return True
        decoded = _b64_text(pattern_text)
        return decoded is None or len(decoded.strip()) < 4 or is_placeholder(decoded)


class CookieRecognizer(TiersPatternRecognizer):
    """The machine-made values of a ``Cookie:`` or ``Set-Cookie:`` header: a session's cookie is
    the session to whoever holds it. One finding per header, from the first such value to the last
    (``theme=dark`` before them stays; a plain cookie between them goes with them)."""

    ENTITY = "SECRET"
    # the header's line, once (a pattern per "name=value" matched every ";x=" of minified code)
    PATTERNS = [Pattern("cookie_header", r"(?i:^[ \t]*(?:set-)?cookie[ \t]*:)(?P<value>[^\n]+)", 0.8)]
    LITERALS = {"cookie_header": ("ookie", "OOKIE")}

    def refine_span(self, text: str) -> tuple[int, int] | None:
        spans = [m.span("v") for m in _COOKIE_PAIR.finditer(text, 0, 65536) if _session_value(m.group("v"))]
        return (spans[0][0], spans[-1][1]) if spans else None


def _session_value(raw: str) -> bool:
    """A cookie's value that is a session's: sixteen characters or more, machine-made, no
    placeholder (its quotes aside)."""
    value = raw.strip('"')
    return len(raw) >= 16 and not is_placeholder(value) and (looks_random(value, 16) or letters_at_random(value))


_COOKIE_PAIR = re.compile(r"(?:^|;)[ \t]*[^=;\s]{1,128}=(?P<v>[^;\s]{1,4096})")
