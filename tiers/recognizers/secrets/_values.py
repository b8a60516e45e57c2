"""What makes a value a placeholder rather than a secret, and how random a value looks.

Shared by the provider shapes (a ``ghp_xxxx…`` in documentation is no token) and the
assignments (``PASSWORD=changeme``, ``${VAR}``, ``<your-key>``, ``****``).

A value may hold percent-escapes: the secret recognizers also read the text with escapes as
written (see ``Classifier``), and then a value has two spellings, as written and as decoded.
Which one is the credential depends on the carrier, and the recognizer cannot tell: a dotenv,
YAML or shell value is its literal characters (``aAAAABC%42`` is ten of them), a query string's
is decoded (``p%40ss`` is ``p@ss``). So a value counts as random (or long, or varied) when
*either* spelling does: judging only the decoded one passed ``aAAAABC%42`` as ``aAAAABCB``, 1.75
bits a character. A placeholder is a matter of meaning, not of spelling: ``%24%7BVAR%7D`` is
``${VAR}`` to whatever reads it, and nobody's password is literally that, so a value is a
placeholder when either spelling is one (except for being short: ``a%42c`` decoding to three
characters does not make five written ones a placeholder).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import unicodedata
import urllib.parse
from collections import Counter

from ...normalize import normalize_text
from .._english_words import is_english_word
from ._samples import compound_of, is_published

__all__ = [
    "encodes_piece",
    "encodes_words",
    "entropy",
    "is_placeholder",
    "joined_words",
    "letters_at_random",
    "looks_random",
    "mixed_classes",
    "sequential",
    "spellings",
]

# Words that make up template values ("your-api-key-here", "example_password", "dummy-token").
_PLACEHOLDER_WORDS = frozenset(
    """your my the a an api key keys token tokens secret secrets password passwd pwd pass here
    example examples sample samples dummy fake test testing changeme change me placeholder insert passphrase
    replace put enter redacted hidden removed masked value default foo bar baz qux abc xyz todo tbd
    fixme none null nil undefined empty string str unset required optional generate generated
    access private public client app application service account user username admin root
    demo mock stub some any new old my_ our dev development local secure strong random set
    real actual valid goes this that it is to be filled provided supplied org repo host server database".""".split()
)
_EXACT = frozenset(
    {
        "changeme",
        "change_me",
        "password",
        "secret",
        "example",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "redacted",
        "undefined",
        "placeholder",
        "dummy",
        "test",
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        # a schema's type names (also optional or a list: "boolean?", "string[]")
        "boolean",
        "number",
        "integer",
        "float",
        "array",
        "secretstr",
        "optional",
        "required",
        "any",
        "object",
        "unknown",
        "default",
        "empty",
        "hidden",
        "masked",
        "todo",
        "tbd",
        "env",
        "prompt",
        # the documentation's own example passwords (SQLAlchemy's scott:tiger …)
        "tiger",
        "foobar",
        "s3cr3t",
        "mysecret",
        "mypassword",
        "mysecretpassword",
        "secretpassword",
        "supersecret",
        "topsecret",
        "top secret",
        "top-secret",
        "top_secret",
    }
)
# A template or reference instead of a value: ${VAR}, {{ var }}, %(name)s, $(cmd), <your-key>,
# [SECRET], %VAR%, #{var}, @VAR@, $VAR, os.environ[...], process.env.X …
_TEMPLATE = re.compile(
    r"^(?:\$\{|\{\{|\{%|%\(|\$\(|<[^>]*>$|\[[^\]]*\]$|%[A-Za-z_][A-Za-z0-9_]*%$|#\{|@@?[A-Za-z_]+@@?$"
    r"|__[A-Z][A-Z0-9_]+__$"
    # a reference to where the secret is kept (an AWS secret's or parameter's ARN) or SOPS's
    # encrypted value (``ENC[AES256_GCM,data:…,iv:…,tag:…]``): committed to git by design
    r"|arn:aws[a-z-]*:(?:secretsmanager|ssm|kms):|ENC\[[A-Za-z0-9_]+,"
    # and the other stores' references: 1Password's ``op://``, ``sm://`` / ``gcpsm://`` of secret
    # injectors, Google's ``projects/…/secrets/…``, Azure App Service's Key Vault reference
    r"|(?:op|sm|gcpsm|azkv|awssm|vault|doppler|infisical)://|projects/[^/\s]+/secrets/[^/\s]+|@Microsoft\.KeyVault\("
    r"|\$[A-Za-z_][A-Za-z0-9_]*$|\$\d+$|\{.*\}$|:[a-z_]+$)"
    r"|(?:os\.environ|os\.getenv|getenv\(|process\.env|System\.getenv|ENV\[|env\(|secrets\.|vault:"
    r"|keyring\.|\$\{\{|\{\d*\}|\{[A-Za-z_][A-Za-z0-9_.]*\})"
)
# "your" as a word of the value, in any case or joining (``YOUR_OPENAI_API_KEY``, ``xoxb-your-token``,
# ``yourApiKey``): an instruction to put one's own there
_YOUR = re.compile(r"(?:^|[_.:-])(?:your|YOUR|Your)(?:[_.:-]|[A-Z]|$)")
# a token's prefix and an ellipsis, as documentation elides a key (``sk-...``, ``sk_test_...``,
# ``AIza…``, ``sk-ant-api03-...``), or a dashboard shows one (``sk-...a1B2``): a prefix of letters
# and at most three short segments before the ellipsis
_ELIDED = re.compile(r"^[A-Za-z]{2,5}(?:[_-][A-Za-z0-9]{2,6}){0,3}[_-]?(?:\.{3}|…)[A-Za-z0-9]{0,4}$")
# a file's path instead of its content (``password: /run/secrets/db``, ``/Users/me/.key``): an
# absolute path under a Unix top-level directory, of path characters only
_PATH = re.compile(r"^/(?:Users|home|root|etc|opt|tmp|usr|var|bin|srv|run|mnt)/[\w .~/-]*$")
# a printf template of plain text (``"%s_upgrades"``, ``user_pass = '%s:%s' % (user, pw)``), not a
# random value that holds ``%r``
_PRINTF = re.compile(r"^[\w.:/ -]*(?:%[sdr][\w.:/ -]*)+$")
_VERB = re.compile(r"%[sdr]")
# format verbs and nothing else (C's ``%08x``, Go's ``%+v`` / ``%X``): a template, whatever its
# length (a URL's short password may be one, ``amqp://worker:%+X@…``)
_VERBS = re.compile(r"^(?:%[-+# 0]*[0-9]*(?:\.[0-9]+)?[a-zA-Z])+$")
# ... unless every ``%`` starts a percent-escape and the value decodes to printable text:
# ``%2F%3D%2B%5E`` and ``%40A%40B`` are URL-encoded passwords (``/=+^``, ``@A@B``), ``%08x`` (a
# backspace, then ``x``) and ``%+v`` stay verbs
_ESCAPES_ONLY = re.compile(r"^(?:%[0-9A-Fa-f]{2}|[^%])+$")
# hexspeak, the hex words of debuggers and examples ("deadbeef", "cafebabe", "8badf00d"), with at
# most a run of digits after: ``Authorization: Bearer deadbeef12346`` in an API's docstring
_HEXSPEAK = re.compile(
    r"^(?:0x)?(?:dead(?:beef|c0de|babe|face)|cafe(?:babe|d00d|f00d)|feed(?:face|beef)|facefeed|baadf00d"
    r"|8badf00d|decafbad|badc0ffee|c0ffee|defec8ed)+[0-9]*$",
    re.IGNORECASE,
)
# what may follow a character in a run typed along an alphabet ("abcdef", "0123456789",
# "ABC…XYZabc…xyz0…9+/", "…789ABC…"), compared without case
_NEXT = {
    **{chr(c): chr(c + 1) for c in range(ord("0"), ord("9"))},
    **{chr(c): chr(c + 1) for c in range(ord("a"), ord("z"))},
    "9": "0a+",
    "z": "a0+=",
    "+": "/",
    "=": "/",
}


def sequential(value: str) -> bool:
    """An alphabet or a count written out (``abcdefghijklmnop``, ``1234567890abcdef``,
    ``ABC…XYZabc…xyz0…9+/``): at most two runs along an alphabet, each three long at least."""
    low = value.lower()
    if len(low) < 8:
        return False
    runs = [1]
    for prev, cur in zip(low, low[1:], strict=False):
        if cur in _NEXT.get(prev, ""):
            runs[-1] += 1
        else:
            runs.append(1)
    return len(runs) <= 2 and min(runs) >= 3


# one name part of code: words of three letters or more, or a capitalised two-letter word of
# code (``getIdForUser``; any capital and one letter would make a random ``PtYgjmUhBe`` words),
# each maximal (a lower-case run ends before no lower-case letter, a capitals run before a
# capitalised word or the end, so a part splits one way only), then a count of at most two digits
_NAME_PART = re.compile(
    r"(?:[A-Z]?[a-z]{2,}(?![a-z])|(?:Id|Of|To|By|Is|At|In|On|Or|As|Io|Db|No|Up|If|Ok|Ui)(?![a-z])"
    r"|[A-Z]{2,}(?=[A-Z][a-z]|$))+[0-9]{0,2}"
)


def joined_words(value: str) -> bool:
    """Names joined as code joins them (``tss_handleRequestForUser``, ``prf_cli_load_config2``,
    ``s.getElementsByTagName``): every part between ``_``, ``-`` and ``.`` made of words (or one
    letter, a variable's name). A machine-made token has single letters between capitals and
    digits inside (``tss_hO3_Rm30e``)."""
    parts = [p for p in re.split(r"[_.-]+", value) if p]
    return bool(parts) and all(len(p) == 1 and p.isalpha() or _NAME_PART.fullmatch(p) for p in parts)


# a run of capitals, or a word with at most its first letter capitalised: how code's names split
_CASE_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def letters_at_random(value: str) -> bool:
    """Letters drawn at random (``pkhiscEfVwdDPKekNxH``) rather than a name of code: not words
    joined as code joins them, and under three tenths of the letters of its parts of three
    letters or more in English words of four letters or more (random letters spell three-letter
    words often). A token without a digit reads as a name otherwise; names of code that are
    mostly no words (``hipsolverDnSgesvd``) read as random here, and are no credential's value.
    Measured on the letters-only names of the standard library, the virtualenv and npm and on
    random letters: scripts in ``bench/RESULTS.md`` (issue 12, 2026-12-07)."""
    if joined_words(value):
        return False
    parts = [p for p in _CASE_PART.findall(value) if len(p) >= 3]
    total = sum(map(len, parts))
    words = sum(len(p) for p in parts if not p.isupper() and _a_word(p))
    return total > 0 and words < 0.3 * total


# words of code the dictionary of 1934 lacks, and short ones code spells (a random draw spells one
# of these three-letter words one time in 400)
_CODE_WORDS = frozenset(
    """config conf desc attr attrs info impl init args kwargs param params util utils async sync bool
    enum json html http https yaml spec repo auth admin proto impl ptr dict list tuple str int len num
    idx buf src dst tmp obj func proc req res resp env dev prod cmd cli gpu cpu dim vec mat max min get
    set add new old key val err msg ctx url uri api sql xml csv pdf png jpg img doc docs ref refs del
    ops op""".split()
)


def _a_word(part: str) -> bool:
    """A part of a name that is a word: a dictionary word of four letters or more (or its "-ed",
    "-ing", "-er" form: "expired", "parsing"), or one of code's words."""
    low = part.lower()
    if low in _CODE_WORDS:
        return True
    if len(low) < 4:
        return False
    if is_english_word(low):
        return True
    for suffix, stems in (("ed", ("", "e")), ("ing", ("", "e")), ("er", ("", "e"))):
        if low.endswith(suffix) and any(is_english_word(low[: -len(suffix)] + t) for t in stems):
            return True
    return low.endswith("d") and is_english_word(low[:-1])


# One mask character four times over ("XXXX", "****"), not a mix ("XXxx": 1 in 1,000 random
# 800-character key bodies holds one), ten zeros, any character eight times (see _masked).
_MASK_RUN = re.compile(r"([xX*•.#?_-])\1{3,}|0{10,}|(.)\2{7,}")
_WORD = re.compile(r"[A-Za-z]+")


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def mixed_classes(value: str) -> int:
    """How many of lower-case letters, upper-case letters and digits occur."""
    return any(c.islower() for c in value) + any(c.isupper() for c in value) + any(c.isdigit() for c in value)


def spellings(value: str) -> tuple[str, ...]:
    """``value`` as written and, if it holds percent-escapes that decode, as decoded (see the
    module docstring)."""
    if "%" not in value:
        return (value,)
    decoded = normalize_text(value)
    return (value,) if decoded == value else (value, decoded)


def is_placeholder(value: str, min_len: int = 4) -> bool:
    """A template, mask, reference or example rather than a credential, in either spelling.
    ``min_len``: as written, a value shorter than this is none (where a short value is still a
    credential, as a URL's password, a caller says so)."""
    return any(_placeholder(v, min_len if i == 0 else 0) for i, v in enumerate(spellings(value)))


def _placeholder(value: str, min_len: int) -> bool:
    v = value.strip()
    low = v.lower()
    if is_published(v):
        return True
    if (
        len(v) < min_len
        or low in _EXACT
        or low.removesuffix("?").removesuffix("[]") in _EXACT
        or _TEMPLATE.search(v)
        or (_PRINTF.match(v) and not looks_random(_VERB.sub("", v)))
        or (_VERBS.match(v) and not _escaped_text(v))
        or _PATH.match(v)
        or _ELIDED.match(v)
    ):
        return True
    if _masked(v) or len(set(low)) <= 2 or _HEXSPEAK.match(v) or sequential(v):
        return True
    if "example" in low and not any(c.isdigit() for c in v) and mixed_classes(v) < 2:
        return True
    words = _WORD.findall(low)
    if not any(c.isdigit() for c in v) and _YOUR.search(v):
        return True  # "YOUR_OPENAI_API_KEY", "xoxb-your-token", "sk-proj-your-key-here": fill in yours
    # made only of template words ("your_api_key_here", "insert-token"), digits aside
    return (
        bool(words)
        and all(w in _PLACEHOLDER_WORDS or compound_of(w, _PLACEHOLDER_WORDS) for w in words)
        and (not any(c.isdigit() for c in v) or len("".join(words)) >= len(v) - 2)
    )


def _masked(value: str) -> bool:
    """A run of mask characters. Runs of x or X, letters of random text too, count in a long
    value only as an eighth of it or more: a random 800-character key body holds "xxxx" about
    once in 10,000."""
    for m in _MASK_RUN.finditer(value):
        if m.group(1) in ("x", "X") and len(value) > 64 and (m.end() - m.start()) * 8 < len(value):
            continue
        return True
    return False


def _escaped_text(value: str) -> bool:
    """Percent-escapes and plain characters only, decoding to printable UTF-8 text."""
    if not _ESCAPES_ONLY.match(value):
        return False
    try:
        return urllib.parse.unquote(value, errors="strict").isprintable()
    except UnicodeDecodeError:
        return False


def machine_made(value: str) -> bool:
    """A token or an id rather than a word or a name: letters and digits mixed (two of lower,
    upper, digits), 3 bits a character, no run of words ("my-long-service-account") and no
    placeholder. Hex ids count: a classic GitHub token is 40 hex digits, a Sentry key 32. What a
    URL's user part must be to be read as a credential rather than a mailbox."""
    return mixed_classes(value) >= 2 and entropy(value) >= 3.0 and not joined_words(value) and not is_placeholder(value)


def looks_random(value: str, min_len: int = 12) -> bool:
    """Long enough, several character classes and enough entropy to be machine-made, in either
    spelling."""
    return any(
        len(v) >= min_len and mixed_classes(v) >= 2 and entropy(v) >= 3.0 and not any(c.isspace() for c in v)
        for v in spellings(value)
    )


def _padded_base64(value: str) -> bytes | None:
    """The bytes ``value`` encodes as padded base64 of four bytes at least, else None."""
    if len(value) % 4 or len(value) < 8:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


# what may stand between the letters of encoded words (" permitía", "/week", "l'été", "_context")
_WORD_MARKS = frozenset(" .,'’-/_()")


def encodes_words(value: str) -> bool:
    """Whether ``value`` is base64 of a few words of text (a tokenizer's ``"token_bytes":
    "IHBlcm1pdMOtYQ=="`` is " permitía", ``"4Kao4KeN4Kak"`` Bengali "ন্ত"): letters of any
    script with their combining marks, spaces and a few marks between words. A token's or key's
    random bytes decode to that almost never (each byte a letter: about one chance in five for
    ASCII; four bytes at least), and ``user:password`` (a colon) or a token's text (digits) is
    not that."""
    raw = _padded_base64(value)
    if raw is None:
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    letters = sum(c.isalpha() for c in text)
    return letters >= 2 and all(c.isalpha() or c in _WORD_MARKS or unicodedata.category(c)[0] == "M" for c in text)


_TEXT_CATEGORIES = frozenset("Lu Ll Lt Lm Lo Mn Mc Me Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Cf".split())
# blanks a vocabulary's pieces hold (``"\t\t   "``, ``" ),\n"``)
_BLANKS = frozenset(" \t\r\n")
# ``user:password``, ``root:@dmin`` and ``user@host`` encode a login, not a piece of text
# (``"():\n"`` and ``"std::"`` are pieces)
_LOGIN = re.compile(r"\w(?::(?!:)|@)")


def _utf8_piece(raw: bytes) -> str | None:
    """``raw`` as UTF-8 text, where a tokenizer may have cut a character: up to three
    continuation bytes may open it and an unfinished character may close it
    (``b" \xd7\x9c\xd7\x9e\xd7"`` is " לם" and the first byte of a third letter)."""
    start = 0
    while start < min(3, len(raw)) and 0x80 <= raw[start] < 0xC0:
        start += 1
    body = raw[start:]
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as e:
        cut = e.start if e.reason == "unexpected end of data" and len(body) - e.start <= 3 else -1
    if cut < 0:
        return None
    try:
        return body[:cut].decode("utf-8")
    except UnicodeDecodeError:
        return None


def encodes_piece(value: str) -> bool:
    """Whether ``value`` is base64 of a tokenizer's piece of text, judged under a vocabulary's
    own key only (``"token_bytes"``, where :func:`encodes_words` is too narrow): text of any
    script without digits, punctuation, symbols and blanks included, a character cut at either
    end allowed (``"IOyasA=="`` is Korean " 우", ``"KTsKCi8v"`` ");\n\n//", ``"4KWH4KQ="`` a
    Devanagari sign and the first bytes of the next). Random bytes pass too often for a token's
    key in general (one draw in 12 of four bytes, one in 400 of eight), and under this key a
    value must also look random to count (``Strength.WEAK``): long key material stays a secret."""
    raw = _padded_base64(value)
    if raw is None:
        return False
    text = _utf8_piece(raw)
    if not text or _LOGIN.search(text):
        return False
    # letters, marks, punctuation, symbols, spaces and format characters (Persian's zero-width
    # non-joiner, a right-to-left mark); no digit, no control character but a blank
    return all(c in _BLANKS or unicodedata.category(c) in _TEXT_CATEGORIES for c in text)
