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

import json
import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._code_values import (
    names_a_class_of_its_key,
    names_after_its_key,
    names_its_key,
    names_or_code,
    password_marked,
    used_as_code,
)
from ._keys import Strength, blank_key_strength, key_strength, vocabulary_key
from ._values import (
    encodes_piece,
    encodes_words,
    entropy,
    is_placeholder,
    letters_at_random,
    looks_random,
    machine_made,
    mixed_classes,
    spellings,
)

__all__ = ["AssignmentRecognizer", "MarkupRecognizer"]

# Any of these inside an identifier makes it a candidate key; ``_keys`` decides. A word joined
# to "key" in any way (``encryptionKey``, ``ENCRYPTION_KEY``, ``license-key``): ``sort_key`` is
# a candidate too, and no key to ``_keys``.
_KW = (
    r"(?i:passw|pwd|pass|secret|token|api[_.-]?key|apikey|access[_.-]?key|private[_.-]?key"
    r"|[a-z][_.-]?key|credential|creds|auth|pat|sig|sas|dsn|conn|bearer|jwt|psw|pw|psk)"
)
_KEY = r"[A-Za-z0-9_.-]{0,60}" + _KW + r"[A-Za-z0-9_.-]{0,60}"
# "$" leads a key: PHP's, Perl's and PowerShell's variables (``$password = "…"``)
_LEAD = r"(?:^|[^A-Za-z0-9_.-])"
# a key as written around its name: quoted, an index's (``os.environ["API_KEY"] = …``,
# ``$config['password'] = …``), a C array's (``char api_key[] = …``)
_KEY_OPEN = r"(?:\[[ \t]*)?[\"']?"
_KEY_CLOSE = r"[\"']?(?:[ \t]*\]|\[\])?"
_SEP = r"[ \t]*(?:=|:=|:|=>|\+=|\?=|\|\|=|<-)[ \t]*"
_QUOTED = r"(?:[rbuf]|@)?(?:\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`[^`\n]*`)"
# quotes of a string, not Markdown's backticks ("pass `x`" names an argument)
_QUOTED_PLAIN = r"(?:[rbuf]|@)?(?:\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
_UNQUOTED_STOP = r"\s\"'`(){}\[\]<>,;&|"

# a declaration's type between a name and its value (``apiKey: string = "…"`` in TypeScript,
# ``API_KEY: str = "…"`` in Python, ``val apiKey: String``, ``const API_KEY: &str``, ``let k:
# &'static str``, ``Final[str]``, ``Map<String, String>``; Go's ``var apiKey string = "…"``)
_TYPE = (
    r"&?(?:'[a-z_]+[ \t]+)?(?:mut[ \t]+)?[A-Za-z_][A-Za-z0-9_.:]*"
    r"(?:<[^<>=\n]{0,40}>|\[[^\[\]=\n]{0,40}\])?(?:\[\])?\??"
)
_TYPED = re.compile(
    r"(?P<key>[A-Za-z0-9_.-]+)(?:[ \t]*:[ \t]*|[ \t]+)(?P<type>" + _TYPE + r")[ \t]*=[ \t]*(?=(?:[rbuf]|@)?[\"'`])"
)

# a command in backticks: a program's name, a blank, its arguments (``cat ~/.key``, ``vault read …``)
_SHELL_COMMAND = re.compile(r"[a-z][a-z0-9_.-]*[ \t]+\S")

# what names a setting with a blank, not "=", before its value: Dockerfile's old ``ENV KEY value``,
# Apache's ``SetEnv``, Windows' ``setx``, nginx's ``proxy_set_header X-Api-Key value;``
_DIRECTIVE = r"(?:ENV|SetEnv|setx|proxy_set_header|add_header|fastcgi_param|uwsgi_param|grpc_set_header)"
_DIRECTIVE_LINE = re.compile(_DIRECTIVE + r"[ \t]+(?P<key>[A-Za-z0-9_.-]+)[ \t]+")

# key, separator and the start of the value, as refine_span re-reads them (bounded text)
_PARSE = re.compile(
    r"(?P<kq>(?:\[[ \t]*)?[\"']?)(?P<key>[A-Za-z0-9_.-]+)[\"']?(?:[ \t]*\]|\[\])?(?P<pre>[ \t]*)(?P<sep>:=|=>|\+=|\?=|\|\|=|<-|=|:|,)[ \t]*"
)
_INLINE_COMMENT = re.compile(r"[ \t]+(?:#|//|;)(?:[ \t].*)?$")
_CODE_REF = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*[;,]?$")
# (``?.``: JavaScript's optional chaining, ``options?.authInfo``)
_DOTTED_REF = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\??\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)+[;,]?$")
# a pattern's marks: classes, groups, repeats, and a metacharacter escaped or a group repeated
# (``pat = r'libdevice(\\.\\d+)*\\.bc$'``); not an escaped "$", which a shell's password holds
_REGEX_SHAPE = re.compile(
    r"\\[wdsWDSbB]|\[\^|\(\?|\][+*]|[\])]\{[0-9]+(?:,[0-9]*)?\}|\.[*+]|\[[a-zA-Z0-9]-[a-zA-Z0-9]"
    r"|\\[.^()\[\]{}|?*+]|\)[*+?]"
)
# a value that is one bracket expression naming the digit or letter range, repeated or not: a
# grammar's character set (h11's ``token = r"[-!#$%&'*+.^_`|~0-9a-zA-Z]+"``, RFC 7230 tchar)
_CHARACTER_CLASS = re.compile(r"^\^?\[[^\]\n]*(?:0-9|a-z|A-Z|a-f|A-F)[^\]\n]*\](?:[+*?]|\{[0-9,]+\})?\$?$")
# words joined as names are (``csrf_token``, ``channel-markdown59``: a count of one or two digits
# after names a variant, not a secret)
_LOWER_NAME = re.compile(r"^_*(?:[a-z]+(?:[_.-][a-z]+)+|[A-Z]+(?:_[A-Z]+)+)(?:[_.-]?[0-9]{1,2})?_*$")
# each word maximal (a lower-case run ends before no lower-case letter, a capitals run before a
# capitalised word or the end), so a value splits one way only: with words that could split
# several ways, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef…0" took exponential time to fail
_CAMEL_NAME = re.compile(r"^(?:[A-Z]?[a-z]{2,}[0-9]*(?![a-z0-9])|[A-Z]{2,}[0-9]*(?=[A-Z][a-z]|$))+$")
# function words, a capitalised sentence start, a full stop: a description, not a passphrase
_PROSE = re.compile(
    r"(?i:\b(?:the|a|an|to|of|for|with|is|are|be|by|use|used|if|when|which|this|that|from|or|and|in"
    r"|on|as|it|not|will|can|must|should|your|you|see)\b)|^[A-Z][a-z]+ [a-z]|[.:]$"
)
# and a range of versions (typeshed's ``VERSIONS``: ``pwd: 3.0-``, ``secrets: 3.6-3.12``)
_NUMBER = re.compile(r"^[+-]?\d[\d_.,]*$|^\d+\.\d+(?:\.\d+)?-(?:\d+\.\d+(?:\.\d+)?)?$")
# lower-case words and single blanks as a pair's second item (``log.info('token', 'getting list')``,
# ``namedtuple('TokenInfo', 'type string start end line')``): a message or field names; as a
# pair, only under a password's name a passphrase (``("password", "correct horse …")``)
_LOWER_WORDS = re.compile(r"^[a-z]+(?: [a-z]+)+$")
# a JavaScript regular expression literal where a value stands, closed on its line with its flags
# (``const UNEXPECTED_TOKEN = /^Unexpected token '?(.)'?(,)? /i``)
_REGEX_LITERAL = re.compile(r"/[\^(\[\\][^\n]*/[dgimsuvy]*[ \t]*(?:[;,)]|$)", re.MULTILINE)
_CODE_MARKS = frozenset("\"'()$=,{}[];")
_LONG_WORDS = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{3,}(?![A-Za-z0-9])")  # words of code or prose, not a token's runs
# optional chaining on names written as code writes them, a lower-case start each
# (``options2?.authInfo``, ``config.browser.launchOptions?.channel``); "Kx9mQ2?.Horse" is a value
_OPTIONAL_CHAIN = re.compile(
    r"^[a-z_$][A-Za-z0-9_$]*(?:\??\.[a-z_$][A-Za-z0-9_$]*)*\?\.[a-z_$][A-Za-z0-9_$]*(?:\??\.[a-z_$][A-Za-z0-9_$]*)*[;,]?$"
)
# the Fetch API's credentials modes, under its own key (``credentials: "include"``)
_FETCH_MODES = frozenset({"include", "omit", "same-origin"})
# lower-case words with " / " between alternatives ("template data / text", "read / write"): a
# description under a token's name; a passphrase joins its words by blanks or hyphens. Also names
# joined by "|" (``signature="float64|complex64"``: a union of types in a docstring)
_ALTERNATIVES = re.compile(
    r"^(?:[a-z]+(?: [a-z]+)*(?: / [a-z]+(?: [a-z]+)*)+|[a-z]+[0-9]{0,2}(?:\|[a-z]+[0-9]{0,2})+)$"
)
# a tokenizer's special tokens: words of one case between runs of brackets with an angle bracket
# or a pipe among them ("|NEWLINE|", "]<]image[>[", "<|vision_start|><|image_pad|><|vision_end|>");
# a passphrase in brackets mixes cases or adds slashes ("<<DragonSlayer>>", "//Sunshine_Rainbow//").
# One run of brackets between two words, so that no text can be split two ways: a failing match
# is tried once, not once per split.
_SPECIAL_TOKEN = re.compile(r"^[<>|\[\]{}]{1,3}(?:(?:[a-z][a-z_]{0,23}|[A-Z][A-Z_]{0,23})[<>|\[\]{}]{1,6})+$")
# a type annotation's union (``pad_token_tensor: "torch.Tensor | None"``): names joined by "|",
# one of them None ("Acme.Corp|Winter24" is a password)
_TYPE_UNION = re.compile(
    r"^[A-Za-z_][A-Za-z0-9_.]*(?:\[[A-Za-z0-9_., \[\]]*\])?(?:[ ]*\|[ ]*[A-Za-z_][A-Za-z0-9_.]*(?:\[[A-Za-z0-9_., \[\]]*\])?)+$"
)
# a media type (RFC 6838: a registered top-level type, a subtype, a "+suffix"): a constant's
# value in every HTTP library (``APPLICATION_JWT = 'application/jwt'``), never a credential
_MEDIA_TYPE = re.compile(
    r"^(?:application|audio|font|example|image|message|model|multipart|text|video)/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$"
)
# style words and colours only: pygments' ``"bold #08547A"``, ``"italic bg:#f8f8f8 #000"``
_STYLE = re.compile(
    r"^(?:(?:no)?(?:bold|italic|underline|inherit)|(?:bg|border):|#[0-9a-fA-F]{3}(?:[0-9a-fA-F]{3})?\b|[ ])+$"
)
_CODE_SHAPE = re.compile(
    r"[A-Za-z_$][A-Za-z0-9_$]*\s*[(\[]|^(?:new|await|function|lambda|yield|return|typeof|fn|func)\s|^lambda\b"
    r"|\s(?:=|==|!=|<=|>=|<|>|\||\|\||&&|\?\?|if|else|or|and|[-+*/%]|\+=)(?:\s|$)|^[!&*|>{\[(]|=>|\)\s*$|,\s*[A-Za-z_]\w*="
)


def _code_shaped(value: str, strength: Strength) -> bool:
    """Whether an unquoted value has the shape of an expression (a call, an index, an operator
    between blanks); under a credential's key not if it holds a password's marks
    (``_code_values.password_marked``)."""
    if _CODE_SHAPE.search(value) is None:
        return False
    return strength < Strength.MEDIUM or not password_marked(value)


def _code_path(value: str) -> bool:
    """``settings.DB_PASSWORD``, ``jinja2.pass_context``: a dotted name with a word in it."""
    return bool(_DOTTED_REF.match(value)) and any(
        # a word of three letters or more, then letters and underscores: written as that (the
        # same language as word runs, which could split "aaa…a0" exponentially many ways)
        re.fullmatch(r"_*(?:[a-z]{3}|[A-Z]{3}|[A-Z][a-z]{2})[A-Za-z_]*", part)
        for part in re.split(r"\??\.|::|->", value.rstrip(";,"))
    )


def _unquote(body: str) -> tuple[int, int] | None:
    """Span of the quoted value's contents in ``body`` (which starts with its opening quote,
    maybe after a string prefix such as ``r`` or ``@``), or None if it does not close."""
    i = 1 if body[:1] in "rbuf@" and body[1:2] in "\"'`" else 0
    q = body[i : i + 1]
    if q not in ('"', "'", "`"):
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


# what a value under a weak key needs to look machine-made (``looks_random``'s default too)
_RANDOM_MIN_LEN = 12
_JSON_ESCAPE = re.compile(r"\\u[0-9A-Fa-f]{4}")


def _json_unescaped(value: str) -> str | None:
    """``value`` read as the inside of a JSON string, or None where it is no such thing."""
    try:
        out = json.loads(f'"{value}"')
    except ValueError:
        return None
    return out if isinstance(out, str) else None


def accept_value(
    value: str, strength: Strength, quoted: bool, tight: bool = False, key: str = "", env: bool = False
) -> bool:
    """Whether ``value`` assigned to a key of ``strength`` is a credential. ``tight``: written
    ``KEY=value`` without spaces (dotenv, properties, shell), where a dotted value with digits
    is a value, not an attribute path. ``env``: written ``KEY=value``, "=" and no blanks, where an
    environment variable's line holds a literal. ``key``: the key as written, when known (a value that
    only spells the key's words is its name).

    A value with percent-escapes is judged in both spellings (``_values``): a placeholder in
    either is none, otherwise it counts if either spelling would."""
    if strength is Strength.NONE:
        return False
    # the cheap refusals first: a vocabulary's 150,000 entries pass here
    if strength is Strength.WEAK and len(value) < _RANDOM_MIN_LEN and "%" not in value:
        return False  # too short to look machine-made, the one thing a weak key takes
    if key and vocabulary_key(key, "str") and not any(c.isdigit() for c in value):
        return False  # a word piece as text (".IOException", "-Weltmeisterschaft"); a token has digits
    if key and vocabulary_key(key, "bytes") and encodes_piece(value):
        return False  # any piece of text as base64: " 우", ");\n\n//", a character cut in two
    if is_placeholder(value) or names_or_code(value, strength is Strength.STRONG, quoted):
        return False
    if key and names_its_key(value, key):
        return False
    if key and strength is not Strength.STRONG and names_a_class_of_its_key(value, key):
        return False  # ``("qwen2_5_omni_token2wav", "Qwen2_5OmniToken2WavConfig")``
    if key and names_after_its_key(value, key, password=strength is Strength.STRONG):
        return False  # ``"auth0": "types-auth0-python"``, ``"libsecret-1.so.0": "libsecret-1-0"``
    if value in _FETCH_MODES and key.rsplit(".", 1)[-1].lower() in ("credentials", "withcredentials"):
        return False  # ``fetch(url, {credentials: "include"})``
    if strength is not Strength.STRONG and _JSON_ESCAPE.search(value):
        # JSON that escapes all but ASCII (``"token_str": "\\u00e9dition"``): judged as what it
        # writes; no token holds a backslash and four hex digits
        unescaped = _json_unescaped(value)
        if unescaped is not None and unescaped != value:
            return accept_value(unescaped, strength, quoted, tight, key)
    if strength is not Strength.STRONG and encodes_words(value):
        return False  # a vocabulary's token as base64 ("token_bytes": "IENydXNoaW5n", " Crushing")
    # ``DB_PASSWORD=sunshine``: an environment variable's line (dotenv, shell, a Dockerfile's
    # ``ENV``, compose) holds a literal; no name of code stands after its "="
    literal = env and strength is Strength.STRONG and _ENV_KEY.fullmatch(key) is not None and "=" not in value
    if literal and _ENV_WORD.fullmatch(value) and value.lower() not in _CONFIG_WORDS:
        return True
    return any(_accept_spelling(v, strength, quoted) for v in spellings(value))


# an environment variable's name, and a word as its value
_ENV_KEY = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,}")
_ENV_WORD = re.compile(r"[A-Za-z][a-z]{3,63}")
# what a setting says instead of a password (``REDIS_PASSWORD=none``, ``DB_PASSWORD=required``)
_CONFIG_WORDS = frozenset(
    """true false none null nil empty unset undefined required optional disabled enabled off on yes no
    default auto random generated string text hidden masked redacted secret password passwd""".split()
)


def _accept_spelling(value: str, strength: Strength, quoted: bool) -> bool:
    if _MEDIA_TYPE.match(value):
        return False  # a media type ("application/at+jwt")
    if strength is not Strength.STRONG and _glob(value) and not looks_random(value.replace("*", ""), 8):
        # a file or name pattern (``pat='test_*.py'``, ``GROUP_PAT = 'fr.comp.lang.*'``); under a
        # password's name any value is one ("/Users/.*22232456")
        return False
    if _TYPE_UNION.match(value) and any(p.strip() == "None" for p in value.split("|")):
        return False  # a type annotation ("torch.Tensor | None")
    if strength is not Strength.STRONG and _SPECIAL_TOKEN.match(value) and any(c in value for c in "<>|"):
        return False  # a model's special token under a token's name ("|NEWLINE|"); not a password
    if not quoted and value in ("void 0", "void(0)"):
        return False  # JavaScript's undefined (``this.credentials = void 0``)
    if value[:4].lower() == "urn:" or (not quoted and any(c in value for c in "\"'")):
        return False  # a URN names a type ("urn:ietf:params:oauth:…"); a quote ends a string we were in
    if not quoted and _CODE_REF.match(value) and not any(c.isdigit() for c in value):
        if not letters_at_random(value.rstrip(";,")):
            return False  # a variable's name (``password = password_input``); not random letters
    # an attribute path has no digits (``settings.DB_PASSWORD``); ``aaa.A23452`` is a value, but
    # optional chaining is code whatever its names hold (``options2?.authInfo``)
    path = _code_path(value) and (_OPTIONAL_CHAIN.match(value) is not None or not any(c.isdigit() for c in value))
    if not quoted and (_code_shaped(value, strength) or path):
        return False
    if strength is not Strength.STRONG and path:
        return False  # ``"package.module.name"``
    if len(_REGEX_SHAPE.findall(value)) >= 2 or _CHARACTER_CLASS.match(value):
        return False  # a pattern describing tokens, not one
    if "#" in value and _STYLE.match(value):
        return False  # a style of a highlighter or a stylesheet (``Token.Keyword: "bold #038B8B"``)
    if strength is not Strength.STRONG and _LOWER_NAME.match(value):
        return False  # ``"csrf_token"``: a name
    if not quoted and strength is not Strength.STRONG and any(c.isspace() for c in value):
        return False  # a token has no spaces: unquoted, that is code or prose
    if not quoted and value.rstrip().endswith("{"):
        return False  # ``.special-token:empty::before{``: a block opens, a selector or code
    if (
        strength is not Strength.STRONG
        and " " in value
        and sum(c in _CODE_MARKS for c in value) >= 3
        and len(_LONG_WORDS.findall(value)) >= 3
    ):
        # ``pat = 'call i32 asm "mov $1, $2", "=r,r"( i32 123 )'``: blanks and code's marks, a
        # pattern or a line of code; a passphrase under a token's name is words
        return False
    if any(c.isspace() for c in value) and _PROSE.search(value):
        return False  # docstrings' ``password: Redis password to use``, messages
    if _NUMBER.match(value) and (strength is not Strength.STRONG or not value.isdigit()):
        return False  # ``10_000``, ``3.5``: a quantity
    if strength is not Strength.STRONG and _ALTERNATIVES.match(value):
        return False  # ``TOKEN_DATA: "template data / text"``: a description naming alternatives
    if strength is not Strength.STRONG and _CAMEL_NAME.match(value) and not letters_at_random(value):
        return False  # ``"JWTCookieAuth"``: an identifier
    if strength is Strength.STRONG:
        return len(value) >= 4
    if strength is Strength.MEDIUM:
        return len(value) >= 8 and (mixed_classes(value) >= 2 or not value.isalnum()) and entropy(value) >= 2.5
    return looks_random(value, _RANDOM_MIN_LEN)


_GLOB_CHARS = re.compile(r"[A-Za-z0-9_.\-/*?{},]+")


def _glob(value: str) -> bool:
    """A file or name pattern: names, dots and slashes with a ``*`` at an edge or next to a
    separator, and a dot or a slash in it (``test_*.py``, ``**/*.js``, ``fr.comp.lang.*``). A
    password's ``*`` between letters ("Dragon*Slayer9") or beside other marks is none, and so is
    a token's (its other characters random: the caller asks)."""
    if "*" not in value or not _GLOB_CHARS.fullmatch(value) or not ("." in value or "/" in value):
        return False
    return all(
        i == 0 or i == len(value) - 1 or value[i - 1] in "./_-*" or value[i + 1] in "./_-*"
        for i, c in enumerate(value)
        if c == "*"
    )


_ESCAPED_QUOTE = re.compile(r"\\+[\"']")
# a key and the opening of its value, both quoted with the same escape (``\\"``, ``\\\\\\"``)
_ESCAPED_PAIR = re.compile(r"(?P<esc>\\+[\"'])(?P<key>[A-Za-z0-9_.-]+)(?P=esc)[ \t]*(?:=|:)[ \t]*(?P=esc)")


def _refine_escaped(text: str) -> tuple[int, int] | None:
    """The value of an escaped pair, up to the escape that closes it; judged as a quoted one."""
    m = _ESCAPED_PAIR.match(text)
    if m is None:
        return None
    strength = key_strength(m.group("key"))
    end = text.find(m.group("esc"), m.end())
    if strength is Strength.NONE or m.group("key")[0].isdigit() or end <= m.end():
        return None
    value = text[m.end() : end]
    return (m.end(), end) if accept_value(value, strength, True, key=m.group("key")) else None


_SEPARATED = (-1, -1)  # the value follows the key's "=", ":" or ","; read by _PARSE
_WITHOUT_SEPARATOR = re.compile(
    r"(?P<key>[A-Za-z0-9_.-]+)(?:(?P<variable>\"[ \t]*\{)|(?P<block>[\"']?[ \t]*:[ \t]*[|>][+-]?[0-9]?[ \t]*\n)|[ \t]+)"
)


# ``key=value`` or ``key='value'`` inside a string of settings (a libpq or ODBC string, a query)
_INNER_PAIR = re.compile(
    r"(?:^|[\s;&?])(?P<key>[A-Za-z0-9_.-]{1,60})[ \t]*=[ \t]*(?:'(?P<q>[^'\n]*)'|(?P<u>[^\s;&'\"]+))"
)


_INNER_HINT = re.compile(r"(?i:passw|pwd|pass|secret|token|key|auth|sig)[A-Za-z0-9_.-]*[ \t]*=")


def _inner_pair(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The first credential among the ``key=value`` settings of the string ``text[start:end]``."""
    inner = text[start:end]
    if "=" not in inner or _INNER_HINT.search(inner) is None:
        return None  # no credential's name before a "=" (a vocabulary's base64 "AA==" has none)
    for m in _INNER_PAIR.finditer(inner):
        strength = key_strength(m.group("key"))
        if strength is Strength.NONE:
            continue
        group = "q" if m.group("q") is not None else "u"
        if m.group(group) and accept_value(m.group(group), strength, group == "q", key=m.group("key")):
            return start + m.start(group), start + m.end(group)
    return None


# a string closed and another opened around an operator: ``'password "' + pw + '" is short'``
_CONCATENATION = re.compile(r"^['\"`]?[ \t]*[+.&]|[+.&][ \t]*['\"`]?$|['\"`][ \t]*[+.&][ \t]")


def _varied(value: str) -> bool:
    """Not one plain word: two of lower-case, capitals and digits, or a mark other than a
    sentence's end (a docstring's wrapped "username/\n    password combination.")."""
    word = value.rstrip(".,;:!?")
    return mixed_classes(word) >= 2 or not word.isalnum()


def _refine_without_separator(text: str) -> tuple[int, int] | None:
    """The value of a key written without "=" or ":" before it: blanks (``PASSWORD 'x'``,
    ``requirepass x``), a Terraform variable's default, a YAML block scalar. ``_SEPARATED``
    where the key has a separator after all."""
    m = _WITHOUT_SEPARATOR.match(text)
    if m is None:
        return _SEPARATED
    key, rest = m.group("key"), text[m.end() :]
    if (
        not m.group("variable")
        and not m.group("block")
        and (not rest or rest[0] in "=:,+?" or rest.startswith(("<-", "||=")))
    ):
        return _SEPARATED
    blank = not m.group("variable") and not m.group("block")
    strength = blank_key_strength(key) if blank else key_strength(key)
    if strength is Strength.NONE or key[0].isdigit():
        return None
    if m.group("variable"):
        s = text.rindex('"', 0, len(text) - 1) + 1
        e = len(text) - 1
    elif m.group("block"):
        value = rest.strip()
        s = m.end() + rest.index(value)
        e = s + len(value)
    elif rest[:1] in "\"'" or (rest[:1] in "rbuf@" and rest[1:2] in "\"'"):
        s = m.end() + (1 if rest[0] in "\"'" else 2)
        e = len(text) - 1
        if text[s:e] != text[s:e].strip() or _CONCATENATION.search(text[s:e]):
            return None  # ``"wrong password " + user + "!"``: the quotes close and open a string
        if not _varied(text[s:e]):
            return None  # a word in quotes after a name is prose ("the passphrase "lopt" is …")
    else:
        # unquoted, alone on its line after the key: not a word ("token expired", "password
        # required" are prose); under a password's name any other value, else a machine-made one
        value = rest.strip()
        s, e = m.end(), m.end() + len(value)
        shaped = _varied(value) if strength is Strength.STRONG else machine_made(value)
        return (s, e) if shaped and accept_value(value, strength, False, key=key) else None
    value = text[s:e]
    return (s, e) if value and accept_value(value, strength, True, key=key) else None


def _refine_typed(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """The quoted value of a typed declaration, judged as any quoted value under its key."""
    key = m.group("key")
    strength = key_strength(key)
    if strength is Strength.NONE or key[0].isdigit() or m.group("type").lower() in _NOT_TYPES:
        return None
    span = _unquote(text[m.end() :])
    if span is None:
        return None
    s, e = m.end() + span[0], m.end() + span[1]
    return (s, e) if accept_value(text[s:e], strength, True, key=key) else None


def _refine_directive(text: str, m: re.Match[str]) -> tuple[int, int] | None:
    """The value of ``ENV KEY value``, ``SetEnv``, ``setx``, ``proxy_set_header``: judged as an
    unquoted value after ``KEY=`` is."""
    key = m.group("key")
    strength = key_strength(key)
    value = text[m.end() :]
    if strength is Strength.NONE or key[0].isdigit():
        return None
    if not accept_value(value, strength, False, True, key=key, env=True):
        return None
    return m.end(), len(text)


# words that stand where a type would and are none: ``password: is = "x"`` is no declaration
_NOT_TYPES = frozenset({"is", "are", "was", "be", "the", "a", "an", "to", "of", "and", "or", "not"})


class AssignmentRecognizer(TiersPatternRecognizer):
    """``KEY = value`` in config files, shells and source code; the whole value is reported."""

    ENTITY = "SECRET"
    # every identifier of code can start a key (``[A-Za-z0-9_.-]{0,60}`` before the key word):
    # in a shared set these patterns' DFA states multiply with the others' (bench/scan_sets.py)
    OWN_SET = True
    PATTERNS = [
        Pattern("quoted", _LEAD + r"(?P<value>" + _KEY_OPEN + _KEY + _KEY_CLOSE + _SEP + _QUOTED + ")", 0.8),
        # a declaration with its type (``const apiKey: string = "…"``, Go's ``var apiKey string = "…"``)
        Pattern(
            "typed", _LEAD + r"(?P<value>" + _KEY + r"[ \t]*:[ \t]*" + _TYPE + r"[ \t]*=[ \t]*" + _QUOTED + ")", 0.8
        ),
        Pattern(
            "typed_go", r"\bvar[ \t]+(?P<value>" + _KEY + r"[ \t]+" + _TYPE + r"[ \t]*=[ \t]*" + _QUOTED + ")", 0.8
        ),
        # at the start of a line (dotenv, YAML, INI, properties): the rest of the line
        Pattern(
            "line",
            r"^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+|ENV[ \t]+)?(?P<value>[\"']?"
            + _KEY
            + r"[\"']?[ \t]*(?:=|:|\?=|\+=)[ \t]*[^\s\"'`][^\n]*)",
            0.8,
        ),
        # anywhere else (command lines, query strings, connection strings): up to a delimiter
        Pattern(
            "inline",
            _LEAD + r"(?P<value>" + _KEY + r"[ \t]*(?:=|:=|:)[ \t]*[^" + _UNQUOTED_STOP + r"]{4,}[(\[]?)",
            0.8,
        ),
        # ``put("password", "…")``, ``("password", "…")``: a pair in a call or tuple
        Pattern("pair", r"\([ \t]*(?P<value>[\"']" + _KEY + r"[\"'][ \t]*,[ \t]*" + _QUOTED + ")", 0.8),
        # JSON or code escaped into a string, to any depth: ``"{\\"client_secret\\": \\"…\\"}"`` in a
        # dotenv line, JSON of JSON, a log (also after a line break written as ``\\n``); the key's
        # and the value's quotes escaped alike
        Pattern(
            "escaped",
            r"(?:^|[^A-Za-z0-9_$.-]|\\[nrt])(?P<value>\\+[\"']"
            + _KEY
            + r"\\+[\"'][ \t]*(?:=|:)[ \t]*\\+[\"'][^\"'\n]*\\[\"'])",
            0.8,
        ),
        # a name, blanks, then a quoted value: SQL's ``PASSWORD 'x'``, a config's or a shell's
        # ``password "x"``, ``#define API_KEY "x"``
        Pattern("blank_quoted", _LEAD + r"(?P<value>" + _KEY + r"[ \t]+" + _QUOTED_PLAIN + ")", 0.8),
        # a key and one value alone on a line, blanks between (redis.conf's ``requirepass …``), or
        # in a comment (``# password …``)
        Pattern(
            "blank_line",
            r"^[ \t]*(?:(?:#+|//|--|;)[ \t]*)?(?P<value>" + _KEY + r"[ \t]+[^\s\"'`=:#;,(){}\[\]]{6,256})[ \t]*$",
            0.8,
        ),
        # a directive that sets a name to a value with a blank between them, as "=" does
        Pattern(
            "directive",
            r"^[ \t]*(?P<value>" + _DIRECTIVE + r"[ \t]+" + _KEY + r"[ \t]+[^\s\"'`=;]{1,256})[ \t]*;?[ \t]*$",
            0.8,
        ),
        # Terraform: the default of a credential's variable (``variable "db_password" { default = "…" }``)
        Pattern(
            "terraform_default",
            r"\bvariable[ \t]+\"(?P<value>" + _KEY + r"\"[ \t]*\{[^{}]{0,400}?\bdefault[ \t]*=[ \t]*\"[^\"\n]*\")",
            0.8,
        ),
        # YAML: a block scalar's first line under a credential's key (``password: |`` + the value)
        Pattern(
            "yaml_block",
            r"^[ \t]*[\"']?(?P<value>" + _KEY + r"[\"']?[ \t]*:[ \t]*[|>][+-]?[0-9]?[ \t]*\n[ \t]+\S[^\n]*)",
            0.8,
        ),
        # a value in escaped quotes after a plain key: code inside a JSON string (a notebook's
        # ``"openai.api_key = \\"…\\"\\n"``)
        Pattern(
            "escaped_value",
            _LEAD + r"(?P<value>" + _KEY + _KEY_CLOSE + _SEP + r"\\+[\"'][^\"'\n]{1,1000}\\+[\"'])",
            0.8,
        ),
        # ``;``-separated connection strings (ADO.NET, ODBC): the value runs to the next ``;``
        Pattern("connection_string", r";[ \t]*(?P<value>" + _KEY + r"[ \t]*=[ \t]*[^;\n\"'{}]{4,})(?:;|$)", 0.8),
        Pattern("connection_string_first", r"^[ \t]*(?P<value>" + _KEY + r"[ \t]*=[ \t]*[^;\n\"'{}]{4,});", 0.8),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        if text[:1] == "\\":
            return _refine_escaped(text)
        typed = _TYPED.match(text)
        if typed is not None:
            return _refine_typed(text, typed)
        directive = _DIRECTIVE_LINE.match(text)
        if directive is not None:
            return _refine_directive(text, directive)
        spaced = _refine_without_separator(text)
        if spaced is not _SEPARATED:
            return spaced
        m = _PARSE.match(text)
        if m is None:
            return None
        strength = key_strength(m.group("key"))
        if strength is Strength.NONE or m.group("key")[0].isdigit():
            # a string of settings under a name that is none (``$conn_string = "host=db
            # password='…'"``): a credential inside is its own key's value
            span = _unquote(text[m.end() :]) if text[m.end() : m.end() + 1] in ("'", '"') else None
            return None if span is None else _inner_pair(text, m.end() + span[0], m.end() + span[1])
        if m.group("sep") == "," and not m.group("kq"):
            return None  # ``f(password, x)``: an argument list, not a pair
        start = m.end()
        rest = text[start:]
        esc = _ESCAPED_QUOTE.match(rest)
        if esc is not None:
            # ``openai.api_key = \"…\"`` in a notebook's JSON: the value up to the same escape
            s = start + esc.end()
            e = text.find(esc.group(), s)
            value = text[s:e]
            return (s, e) if e > s and accept_value(value, strength, True, key=m.group("key")) else None
        if rest[:1] in "\"'`" or (rest[:1] in "rbuf@" and rest[1:2] in "\"'`"):
            span = _unquote(rest)
            if span is None:
                return None
            s, e = start + span[0], start + span[1]
            value = text[s:e]
            if text[s - 1] == "`" and _SHELL_COMMAND.match(value):
                return None  # ``API_KEY=`cat ~/.secrets/api_key```: the shell runs it; its output is the key
            if m.group("sep") == "," and (
                _CAMEL_NAME.match(value)
                or _LOWER_NAME.match(value)
                or (value.isalpha() and not letters_at_random(value))
                or (strength is not Strength.STRONG and _LOWER_WORDS.match(value))
            ):
                return None  # ``("password", "clientCredentials")``: a tuple of names
            if accept_value(value, strength, True, key=m.group("key")):
                return s, e
            return _inner_pair(text, s, e)  # ``auth_header = "token='…'"``
        if m.group("sep") == "," or (m.group("sep") == ":" and m.group("pre")):
            return None  # ``pass :ref:`` in prose; ``key : value`` is no config syntax
        value = rest.split("\n", 1)[0]
        if value.endswith(("(", "[")):
            return None  # a call or an index: code
        value = _INLINE_COMMENT.sub("", value).rstrip()
        if value.endswith((";", ",")) and not value.startswith(("'", '"')):
            value = value[:-1]
        # ``x = a.b1`` and ``x := a.b1`` read as code; ``X=a.b1`` and ``x: a.b1`` as values
        env = m.group("sep") == "=" and not m.group("pre") and start == m.end("sep")
        tight = m.group("sep") == ":" or env
        if not accept_value(value, strength, False, tight, key=m.group("key"), env=env):
            return None
        return start, start + len(value)

    def invalidate_result(self, pattern_text: str) -> bool:
        return False  # refine_span has judged it

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """An iteration's pass in a comment ("# First pass: decided_mask==0, every element"), a
        value that code goes on using (``_code_values.used_as_code``), and a
        keyword argument of a call naming a variable: ``(…,\n    seq_lens=int32_ptr,`` and
        ``f(x, token_ptr=a1q_scale)``: a lower-case snake name, unquoted, after ``key=`` that
        follows "(" or "," (a line break between allowed), and before "," or ")". A call passes a
        literal credential quoted; a dotenv or shell line has no "(" or "," before its key. Not
        under a password's key (``password=hunter2,``)."""
        if _ORDINAL_PASS.search(text, max(0, start - 80), start) or used_as_code(text, start, end):
            return True
        if _LIST_LAST_KEY.search(text, max(0, start - 200), start):
            # the key is a list's last item, not an index's: ``Literal["client_secret_basic",
            # "client_secret_post"] = "client_secret_basic"`` annotates a name with its choices
            return True
        if text[start - 1 : start] not in ("'", '"', "`") and _REGEX_LITERAL.match(text, start):
            # not under a password's name ("passwd=/^a3CMStU3-PJ2Dbm.U*Yj" is one)
            return key_strength(_key_before(text, start)) is not Strength.STRONG
        value = text[start:end]
        if _NAMESPACE.fullmatch(value) and text[end : end + 1] in ("'", '"'):
            # a string of names joined by colons that the key begins: a logger's namespace
            # (``debug("pw:mcp:server:response")``), no ``key:value`` setting
            key = _KEY_START.search(text, max(0, start - 64), start)
            if key is not None and key.start() > 0 and text[key.start() - 1] == text[end]:
                return not any(letters_at_random(n) for n in re.split(r"[:_-]", value) if len(n) >= 8)
        if text[start - 1 : start] not in ("'", '"', "`") and _ITEM_END.match(text, end) and named_in_code(value):
            # a name of code as an item of a list, a call or a mapping (``"fp8_per_token":
            # kFp8DynamicTokenSym,``, ``scale, per_token_scale = a1q_scale, None``). Not under a
            # password's key, by the same decision as a call's keyword below (``password=hunter22,``)
            return key_strength(_key_before(text, start)) is not Strength.STRONG
        if not _SNAKE_VALUE.fullmatch(text, start, end) or _ARG_END.match(text, end) is None:
            return False
        m = _KWARG_BEFORE.search(text, max(0, start - 200), start)
        return m is not None and key_strength(m.group(1)) is not Strength.STRONG


_LIST_LAST_KEY = re.compile(r",[ \t]*[\"'][A-Za-z0-9_.-]+[\"'][ \t]*\][ \t]*(?:=|:=|:|=>)[ \t]*(?:[rbuf]|@)?[\"'`]?\Z")
_KEY_AT_END = re.compile(r"([A-Za-z0-9_.-]+)[\"']?(?:[ \t]*\]|\[\])?[ \t]*(?:=|:=|:|=>)[ \t]*\Z")


def _key_before(text: str, start: int) -> str:
    """The key written right before the value at ``start`` ("" when none is)."""
    m = _KEY_AT_END.search(text, max(0, start - 128), start)
    return m.group(1) if m else ""


# "pass" after an ordinal or a quantifier in a code comment: an iteration of an algorithm, not a
# password's key
_ORDINAL_PASS = re.compile(
    r"(?:^|\n)[ \t]*(?:#+|//|\*|--)[ \t]*"  # in a comment: "Initial pass: Welcome2024!" in a note is one
    r"(?i:(?:first|second|third|fourth|final|last|next|each|every|another|initial|backward|forward)[ \t]+pass)"
    r"[ \t]*:[ \t]*\Z"
)
# a lower-case snake name with an underscore (a random token has none, or capitals)
_SNAKE_VALUE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
# a name of code with one run of up to three digits at most (``kFp8DynamicTokenSym``, ``a1q_scale``)
_CODE_NAME = re.compile(r"[A-Za-z_][A-Za-z_]*(?:[0-9]{1,3}[A-Za-z_]*)?")
_ITEM_END = re.compile(r"[ \t]*[,)\]}]")
_LOWER_RUN = re.compile(r"[a-z]{3}")
# names joined by colons, two or more of them after the key's own (three in all)
_NAMESPACE = re.compile(r"[A-Za-z][A-Za-z_-]*(?::[A-Za-z][A-Za-z_-]*)+")
_KEY_START = re.compile(r"[A-Za-z0-9_.-]+:\Z")


def named_in_code(value: str) -> bool:
    """A name or a dotted path as code spells them (``torch.ops._C.per_token_fp8_quant``): each
    name with at most one short run of digits, and letters that are not random."""
    if not all(_CODE_NAME.fullmatch(p) for p in value.split(".")):
        return False
    words = [w for w in re.split(r"[._0-9]+", value) if w]
    if sum(map(len, words)) < 3 or any(letters_at_random(w) for w in words if len(w) >= 3):
        return False
    # a word of code has a run of three lower-case letters, or is a constant's capitals; random
    # letters of both cases seldom do both ("OVqNBHhOpR5ZoSXz", where one digit cut them)
    return all(w.isupper() or _LOWER_RUN.search(w) for w in words if len(w) >= 4)


_ARG_END = re.compile(r"[ \t]*[,)]")
# "(" or "," and blanks or line breaks, then a lower-case key and "=" right before the value
_KWARG_BEFORE = re.compile(r"[(,][ \t]*(?:\r?\n[ \t]*)?([a-z_][a-z0-9_]*)=\Z")


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

    def invalidate_result(self, pattern_text: str) -> bool:
        return False
