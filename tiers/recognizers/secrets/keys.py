"""Key material and self-contained credentials: PEM / OpenSSH / PGP / SSH2 private-key blocks,
PuTTY key files, JWTs, URLs that carry a password or a token."""

from __future__ import annotations

import base64
import binascii
import codecs
import re

import re2
from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from .._vocabulary import is_common
from ..contact import documentation_domain
from ._samples import is_sample_jwt
from ._values import entropy, is_placeholder, joined_words, machine_made, mixed_classes

__all__ = ["CredentialUrlRecognizer", "JwtRecognizer", "PrivateKeyRecognizer", "TokenUrlRecognizer"]


# The inside of a key block, line by line: base64 runs, white space, JSON-escaped line breaks and
# ``Header: value`` lines. Written without a lazy ``.*?`` to the END line: from every BEGIN without
# one, that would rescan the rest of the text (quadratic on a text of truncated blocks).
_BODY = r"(?:[ \t\r\n]|\\[nr]|[A-Za-z0-9+/=]+|[A-Za-z-]+: ?[^\n\\]*)*"
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/=]{12,}")

# A block between its armour lines, whatever its line breaks became on the way: JSON escapes of
# any depth (``\\n``, ``\\\\n``, ``\\/``), XML character references (``&#10;``), ``<br>``, a log's
# folding. The armour says what it is, so the text between is the key. It ends at the first
# closing ``KEY-----`` (an END line, also one whose leading dashes were lost) and never crosses a
# run of five dashes (another armour line): a search from each BEGIN stops at the next armour.
_ARMOURED = (
    r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[^-]|-{1,4}[^-]){16,}?"
    r"(?:-----END[ A-Z0-9_]{0,40})?KEY(?: BLOCK)?-----"
)
_ARMOUR = re.compile(r"^-----BEGIN[ A-Z0-9_-]*PRIVATE KEY(?: BLOCK)?-----|(?:-----END[ A-Z0-9_]*)?KEY(?: BLOCK)?-----$")
# line breaks as written in strings, markup and URLs, and blanks: none of them is key material
_BREAKS = re.compile(r"\\+[nrt]|\\+(?=/)|&#(?:1[03]|x[aAdD]);|<br\s*/?>|%0[aAdD]|\s")
_LONG_MATERIAL = re.compile(r"[A-Za-z0-9+/]{40,}")
# code that writes a key rather than holds one: a string joined with a name, a template field
_BUILT = re.compile(r"[\"'`]\s*\+\s*[A-Za-z_(]|[A-Za-z0-9_)\]]\s*\+\s*[\"'`]|\$\{|\{[A-Za-z_][\w.]*\}")
_PROSE_RUN = re.compile(r"(?:\b[A-Za-z]{2,}\b[ ,.;:]+){3}")
# code between two armour strings (a parser's ``line.equals("-----BEGIN …") { inKey = true; }``):
# brackets, braces or a statement's ``;`` with a keyword of code; no key encoding holds either
_CODE_PUNCT = re.compile(r"[(){};]")
_CODE_WORD = re.compile(
    r"\b(?:if|else|elif|for|while|return|break|continue|true|false|null|nil|None|True|False|this|self"
    r"|new|throw|raise|def|function|var|let|const|in|not|and|or)\b"
)
_PLAIN_BODY = re2.compile(_BODY)


def _armoured_key(block: str) -> bool:
    """Whether the text between a block's armour lines is a key: a plain body (base64 lines,
    headers) with key material, as ever; else base64 of a key's length, or random text of some
    length that is neither a template, prose nor code building one."""
    inner = _ARMOUR.sub("", block)
    if _PLAIN_BODY.fullmatch(inner) is not None:
        return _KEY_MATERIAL.search(inner) is not None
    body = _BREAKS.sub("", inner)
    if _LONG_MATERIAL.search(body):
        return True
    if (
        len(body) < 32
        or is_placeholder(body)
        or _BUILT.search(inner)
        or _PROSE_RUN.search(inner)
        or (_CODE_PUNCT.search(inner) is not None and _CODE_WORD.search(inner) is not None)
    ):
        return False
    return mixed_classes(body) >= 2 and entropy(body) >= 3.5


class PrivateKeyRecognizer(TiersPatternRecognizer):
    """Private-key blocks, whole (also with JSON-escaped line breaks, as in a GCP service-account
    file, and between their armour lines whatever the line breaks became: ``_ARMOURED``); a
    truncated block up to the end of its base64. A header without key material after it (a string
    constant in code), and armour around a template, prose or code that builds a block, are none."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "private_key_block",
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
            + _BODY
            + r"(?:-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----)?",
            1.0,
        ),
        Pattern("armoured_block", _ARMOURED, 1.0),
        Pattern(
            "ssh2_private_key",
            # ([ ] so that this source line is no key block itself)
            r"----[ ]BEGIN SSH2 ENCRYPTED PRIVATE KEY[ ]----"
            + _BODY
            + r"(?:----[ ]END SSH2 ENCRYPTED PRIVATE KEY[ ]----)?",
            1.0,
        ),
        # PuTTY .ppk: the header and every ``Key: value`` or base64 line after it, the
        # Private-MAC line included
        Pattern(
            "putty_key",
            r"PuTTY-User-Key-File-[1-3]: [^\n]*(?:\r?\n(?:[A-Za-z-]+: [^\n]*|[A-Za-z0-9+/=]+))*",
            1.0,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        if pattern_text.startswith("-----BEGIN") and pattern_text.endswith(("KEY-----", "KEY BLOCK-----")):
            return not _armoured_key(pattern_text)
        body = pattern_text.split("-----", 2)[-1] if pattern_text.startswith("-----") else pattern_text
        return pattern_text.startswith(("-----", "----")) and not _KEY_MATERIAL.search(
            body.split("\n", 1)[-1] if pattern_text.startswith("---- ") else body
        )


class JwtRecognizer(TiersPatternRecognizer):
    """JSON Web Tokens (header and payload are base64url JSON: ``eyJ``), signed or not, and
    signed ones whose payload is not JSON (RFC 7515 allows any bytes; API keys built as a JWS
    with a packed payload), and ones whose header and payload open as objects otherwise (``ey``:
    ``{`` and a blank or a quote), of two character classes and no words joined as names are in
    code; the samples of documentation (jwt.io's, ``"name": "John Doe"``) and
    unsigned tokens without a personal claim are none (``_samples``)."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,})?", 0.9),
        Pattern("jws", r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", 0.9),
        # header and payload that open as objects but not with ``{"``: ``{ "alg": …}`` written
        # with a blank (``eyAi…``), a dict printed as Python writes it (``{'alg'``: ``eyd…``);
        # in base64 with ``+`` and ``/`` too (libraries that confuse it with base64url), a ``/``
        # escaped by a JSON writer (``\/``), padded
        Pattern(
            "jwt_loose",
            r"\bey[A-Za-z0-9_+/\\-]{14,}={0,2}\.ey[A-Za-z0-9_+/\\-]{14,}={0,2}\.(?:[A-Za-z0-9_+/\\-]{8,}={0,2})?",
            0.9,
        ),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """A token that shows it is base64url (a ``-`` or ``_``) ends before the first ``/`` or
        ``\\``, which base64url has not: the path of the URL it sits in (``/v1/<jwt>/items``), a
        line break written in the string around it (``<jwt>\\r\\nHost``)."""
        cut = _NOT_BASE64URL.search(text)
        if cut is not None and ("-" in text[: cut.start()] or "_" in text[: cut.start()]):
            return (0, cut.start())
        return (0, len(text))

    def invalidate_result(self, pattern_text: str) -> bool:
        segments = pattern_text.split(".")
        if not pattern_text.startswith("eyJ"):
            # the loose form. Names joined as code joins them are none (``eyeColorDefault.
            # eyebrowStyleName.``); a header and payload that do not read as an object's text (a
            # draw of a scanner's rule, a mangled copy) count only with a capital in each, as
            # random base64 has (fourteen characters hold none once in 1,500):
            # ``eyelid-surgery-2019.eyebrow-lift-2020`` is a file name
            heads = segments[:2]
            if any(mixed_classes(x) < 2 or joined_words(x) for x in heads):
                return True
            if not all(_text_object(x) for x in heads) and not all(any(c.isupper() for c in x) for x in heads):
                return True
        if (
            len(segments) > 1
            and not segments[1].startswith("eyJ")
            and any(is_placeholder(x) and not _random_segment(x) for x in segments[1:] if x)
        ):
            return True  # a JWS-shaped run with a masked part (``….xxxxxxxx-xxxx``) in documentation
        return is_sample_jwt(pattern_text)


def _random_segment(segment: str) -> bool:
    """A segment of sixteen characters or more with capitals, small letters and digits and no
    run of six mask characters: a signature's random base64url, where "x", "X", "-" and "_" are
    four of its 64 characters and meet four in a row about once in 1,700 signatures (the mask
    check read "X-_X" of one as ``xxxx``)."""
    return len(segment) >= 16 and mixed_classes(segment) == 3 and _LONG_MASK.search(segment) is None


_LONG_MASK = re.compile(r"[xX*•.#?_-]{6,}")
_HOST_END = re.compile(r"[:/?#]")  # a URL's host ends at its port, path, query or fragment
_NOT_BASE64URL = re.compile(r"[/\\]")
_BASE64URL = str.maketrans("-_", "+/")


def _text_object(segment: str) -> bool:
    """Whether a token's segment is base64 (url-safe or not) of text opening an object: what a
    JWT's header and payload are. Names that start with ``ey`` decode to bytes no text has."""
    raw = segment.replace("\\/", "/").rstrip("=").translate(_BASE64URL)
    raw = raw[: len(raw) // 4 * 4]
    try:
        # a segment cut off mid-character still decodes: the decoder keeps an unfinished tail
        text = codecs.getincrementaldecoder("utf-8")().decode(base64.b64decode(raw, validate=True))
    except (binascii.Error, UnicodeDecodeError):
        return False
    return text.startswith("{") and all(c.isprintable() or c in "\t\r\n" for c in text)


# the loopback host of a URL, as its authority starts after the userinfo
_LOOPBACK = re.compile(r"(?i:localhost|127\.0\.0\.1|\[::1\])(?::[0-9]{1,5})?(?:$|[/?#])")


class CredentialUrlRecognizer(TiersPatternRecognizer):
    """URLs that carry a password: database DSNs (``redis://:pw@…`` too), brokers, JDBC, HTTP
    basic auth in the URL. The whole URL is reported.

    The user part may be a template (``mongodb+srv://<user>:Xk9…@…``: whoever fills in the user
    still pasted the password), and a password of three characters is one (``root:K9q@db``: a
    weak password, still the database's); shorter ones, template words (``u:pw@``,
    ``user:pwd@``), or a common word of three letters at a documentation host
    (``alice:you@example.com``) are documentation's."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "url_with_password",
            r"(?i)\b[a-z][a-z0-9+.:-]{1,30}://[^\s:/@'\"]{0,128}:[^\s@/'\"<>]{1,256}@[^\s'\"<>]{1,512}",
            0.9,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        userinfo = pattern_text.split("://", 1)[1].rsplit("@", 1)[0]
        password = userinfo.split(":", 1)[1] if ":" in userinfo else ""
        if any(c in userinfo for c in "[]"):
            # a grammar's optional parts ("git://[path-to-repo[:]][ref@]path"): RFC 3986 has no
            # brackets in a user part (a host with no name, "postgresql://u:pw@/db", still counts)
            return True
        if (
            len(password) == 3
            and password.isalpha()
            and is_common(password)
            and documentation_domain(_HOST_END.split(pattern_text.rsplit("@", 1)[1], maxsplit=1)[0])
        ):
            return True  # a word at a documentation host (``alice:you@example.com``); ``admin:sun@db`` is one
        if (
            password
            and password.lower() == userinfo.split(":", 1)[0].lower()
            and _LOOPBACK.match(pattern_text.rsplit("@", 1)[1])
        ):
            return True  # a server's default account on this machine (``amqp://guest:guest@localhost``)
        return not password or is_placeholder(password, min_len=3) or password.startswith(("{", "%("))


class TokenUrlRecognizer(TiersPatternRecognizer):
    """A web URL whose user part is a token alone: ``https://<token>@github.com/owner/repo.git``,
    how Git hosts and some APIs take a personal access token, and a Sentry DSN's key
    (``https://<key>@sentry.example.com/42``). The whole URL is reported, as a password's is
    (:class:`CredentialUrlRecognizer`). Only HTTP's schemes: SSH's user part is a login (``ssh://
    687fb701029421ae5549d998@ssh.hf.jobs``, a job's id), and a user's name there is no secret
    ("https://jsmith@bitbucket.org": too short and no mix of letters and digits)."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "url_with_token_user",
            r"(?i)\b(?:git\+)?https?://[A-Za-z0-9_-]{20,256}@[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?(?:[/?#][^\s'\"<>`]{0,512})?",
            0.85,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        return not machine_made(pattern_text.split("://", 1)[1].split("@", 1)[0])
