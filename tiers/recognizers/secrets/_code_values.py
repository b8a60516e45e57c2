"""Assigned values that are code or names, not credentials, in shapes the assignment rules of
``assignments`` do not already refuse; each seen in real packages' sources (bench/outside.py).

* text with white space around it (an NLP token's ``token_str=' happiness'``): a token or key
  has none, so this holds for every key but a password's;
* a name made of words that says what it names (``"X-Xet-Access-Token"``,
  ``"hf_oauth__refresh_token"``), again not for a password's key;
* the rest of a URL after its scheme (``credential.https://host.helper=store``), and a call,
  quoted or not (``token: `get_token()` may refresh``);
* unquoted code the other rules miss: shifts, powers and bit operations (``Password = 1 << 13``),
  type annotations and numpydoc types (``token_type: bool=False``, ``include_password: bool,
  default True``), class names that end in what they are (``private_key: Ed25519PrivateKey``,
  ``private_key: PKCS7PrivateKeyTypes``), and attribute paths through modules named with a
  number (``x25519.X25519PrivateKey``, ``decode_dss_signature = asn1.decode_dss_signature``),
  and tuples of numbers and attribute paths (``SOCKS_PASSWORD = 100, _OptType.bytes``), and
  PowerShell's cmdlets (``$pw = ConvertTo-SecureString …``), variables referenced
  (``$password = $request->input('password')``, ``$env:DB_PASSWORD``);
* a value that code goes on using (:func:`used_as_code`): unquoted and called
  (``authorization = base64.decodebytes(authorization)``) or assigned to in turn
  (``exports.Socks5Auth = exports.Socks4Response = … = void 0``), quoted and formatted or joined
  (``user_pass = '%(user)s' % …``, ``pw = " ...\\n".join(pairs)``): a template, a separator;
* a value that is the key's own name in other words (``CHALLENGE_PASSWORD: "challengePassword"``,
  ``ECDSA_WITH_SHA1: "ecdsa-with-SHA1"``): a table of names, as ASN.1 and OID tables are.
"""

from __future__ import annotations

import re

from ._values import looks_random

__all__ = ["names_a_class_of_its_key", "names_its_key", "names_or_code", "references_a_variable", "used_as_code"]

_PART = re.compile(r"[-_.]+")
_CREDENTIAL_WORDS = frozenset(
    {
        "token",
        "key",
        "secret",
        "password",
        "passwd",
        "auth",
        "credential",
        "credentials",
        "apikey",
        "bearer",
        "jwt",
        "authorization",
        "authentication",
    }
)
# what a library's name may start with, and no credential's word or its short form does
_NOT_A_LEAD = _CREDENTIAL_WORDS | {"pass", "pwd", "secrets", "tokens", "creds"}
# characters that code writes outside its strings almost never and passwords often: a value
# holding one, and no quote or blank, is no call or index however its "(" stands
# ("kA9z1E5GiN6T5(@g5vgu6J3dJ)", "vSpw(KCWx(@--8-Pv6")
_PASSWORD_MARKS = frozenset("@#^~%")


def password_marked(value: str) -> bool:
    """Whether ``value`` holds a password's mark and nothing that code around a string holds."""
    return not _PASSWORD_MARKS.isdisjoint(value) and not any(c in value for c in "'\" \t")


# a call, quoted or not (a comment's ``token: `get_token()` may refresh``)
_CALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*\([^()]*\)$")
_OPERATOR = re.compile(r"\s(?:<<|>>|\*\*|&|\^|//)\s")
_TYPE = re.compile(
    r"^(?:bool|int|str|float|bytes|bytearray|dict|list|tuple|set|frozenset|None|Optional|Union|Any|Callable"
    r"|Sequence|Mapping|Iterable|Literal)\b\s*(?:[=,|\[]|or\b|$)"
)
_CLASS_NAME = re.compile(r"^(?:[A-Z][a-z0-9]+|[A-Z]{2,}(?=[A-Z][a-z]))+(?:Key|Token|Secret|Password|Credentials?)$")
# what a class or type name of credentials ends in (``PKCS7PrivateKeyTypes``, ``RSAPrivateKey``)
_TYPE_ENDINGS = tuple(
    f"{what}{kind}"
    for what in ("Key", "Token", "Secret", "Password", "Credential", "Credentials")
    for kind in ("", "Type", "Types", "Class", "Protocol", "Base", "Like", "Alias", "Kind")
)
# a PowerShell cmdlet by its approved verb (``$pw = ConvertTo-SecureString "…" -AsPlainText``,
# ``$token = Get-Secret -Name api``): unquoted there, a value is a command's name
_CMDLET = re.compile(
    r"^(?:Get|Set|New|Read|ConvertTo|ConvertFrom|Import|Export|Invoke|Add|Remove|Start|Stop|Select|Test|Join"
    r"|Split|Resolve|Protect|Unprotect|Find|Install|Update|Register|Out|Write|Format|Copy|Move|Clear|Enable"
    r"|Disable|Send|Receive|Connect|Wait|Use|Grant|Revoke|Unblock|Save|Restore|Initialize|Merge)-[A-Z][A-Za-z0-9]+$"
)
# a variable's value referenced, unquoted: PHP's and Perl's ``$request->input(…)``,
# PowerShell's ``$env:DB_PASSWORD``, a shell's ``$DB_PASS`` / ``${DB_PASS}``
_VARIABLE = re.compile(r"^\$(?:[A-Za-z_{(]|env:)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# the items of a tuple written in code: numbers and names or attribute paths
_TUPLE_ITEM = re.compile(r"[+-]?[0-9][0-9_]*|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_TUPLE_COMMA = re.compile(r",[ \t]+")
_HUMP = re.compile(r"[A-Z][a-z]{2,}")
_SNAKE_WORDS = re.compile(r"_*[a-z]{2,}(?:_[a-z0-9]+)+_*")
_KEY_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _type_name(word: str) -> bool:
    """``PKCS7PrivateKeyTypes``, ``X25519PrivateKey``: a capitalised identifier ending in what it
    is, with a capitalised word before that ending."""
    if not (word[:1].isupper() and word.isascii() and word.isalnum()):
        return False
    ending = next((e for e in _TYPE_ENDINGS if word.endswith(e)), None)
    return ending is not None and bool(_HUMP.search(word[: -len(ending)] + ending[:1]) or _CLASS_NAME.match(word))


def _module_path(value: str) -> bool:
    """A path of identifiers whose last part names something in words (``asn1.decode_dss_signature``,
    ``rust_openssl.hpke.MLKEM768X25519PrivateKey``): the module parts may carry numbers."""
    parts = value.rstrip(",;").split(".")
    if len(parts) < 2 or not all(_IDENTIFIER.fullmatch(p) for p in parts):
        return False
    return _type_name(parts[-1]) or bool(_SNAKE_WORDS.fullmatch(parts[-1]))


def _code_tuple(value: str) -> bool:
    """A tuple of code items, one an attribute path (``SOCKS_PASSWORD = 100, _OptType.bytes``:
    an option's number and type in an enum table); a comma and a space between each."""
    items = _TUPLE_COMMA.split(value.rstrip(",; \t"))
    return (
        len(items) >= 2
        and all(_TUPLE_ITEM.fullmatch(i) for i in items)
        and any("." in i and not i[:1].isdigit() for i in items)
    )


def names_its_key(value: str, key: str) -> bool:
    """Whether ``value`` is ``key``'s own words written another way (two words or more):
    ``AttributeOID.CHALLENGE_PASSWORD: "challengePassword"``; or a name's path that ends in the
    key, where code hands a setting on (``"s3_secret_access_key": config.s3_secret_access_key``)."""
    if not re.fullmatch(r"[A-Za-z0-9_. -]+", value):
        return False
    words = _lower_words(value)
    if sum(w.isalpha() for w in words) >= 2 and set(words) <= set(_lower_words(key)):
        return True
    head, _, last = value.rpartition(".")
    return bool(head) and _IDENTIFIER.fullmatch(last) is not None and _lower_words(last) == _lower_words(key)


def names_after_its_key(value: str, key: str, *, password: bool) -> bool:
    """Whether ``value`` is a name made from ``key``: the key's leading word, not itself a
    credential's, before numbers only (``"libsecret-1.so.0": "libsecret-1-0"``: a library's
    package), or, under a key that is no password's, the key as one of its lower-case parts
    (``"auth0": "types-auth0-python"``, a table of packages). "password-123" under ``password``
    is a (weak) password."""
    if not _NAME_PARTS.fullmatch(value):
        return False
    parts = re.split(r"[-_.]", value)
    lead = next(iter(_lower_words(key)), "")
    if len(lead) >= 4 and lead not in _NOT_A_LEAD and parts[0] == lead and all(p.isdigit() for p in parts[1:]):
        return True
    return not password and key.lower() in parts


# lower-case parts of a package's or a library's name (``types-auth0-python``, ``libsecret-1-0``)
_NAME_PARTS = re.compile(r"[a-z][a-z0-9]*(?:[-_.][a-z0-9]+)+")


def _lower_words(text: str) -> list[str]:
    """The words of a key or a name as code joins them (``dbPassword``, ``qwen2_5_omni``), lower-case."""
    return [w.lower() for w in _KEY_WORDS.findall(text)]


def names_a_class_of_its_key(value: str, key: str) -> bool:
    """Whether ``value`` is a class named after ``key``: its words and a kind of class
    (``("qwen2_5_omni_token2wav", "Qwen2_5OmniToken2WavConfig")``, a model library's table of
    configurations). Callers ask it under a token's key, not a password's: "AcmeAdminClient"
    under ``acme_admin_password`` is a (weak) password."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", value) or not value[:1].isupper():
        return False
    words = _lower_words(value)
    named = words[:-1]
    return words[-1] in _CLASS_KINDS and sum(w.isalpha() for w in named) >= 2 and set(named) <= set(_lower_words(key))


# the last word of a class named after what it serves ("Qwen2_5OmniToken2WavConfig")
_CLASS_KINDS = frozenset(
    """config configuration model tokenizer processor extractor class type module layer encoder decoder
    pipeline output outputs handler manager client factory builder adapter mixin error exception""".split()
)


# a comment ("// TODO", "//nothing here") or a protocol-relative URL ("//cdn.example.com/x.js",
# git's "credential.https://huggingface.co.helper=store") where a value stands; base64 of random
# bytes opens with "//" once in 4,096 values and then goes on with neither a word and a blank (or
# its end: a word is one case, or capitalised; 30 random letters are mixed, and one such value in
# 500 is letters only) nor a dotted name (its alphabet has no ".")
_COMMENT_OR_URL = re.compile(r"//(?:[ \t]|$|(?:[A-Z]?[a-z]+|[A-Z]+)(?:[ \t]|$)|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")


def names_or_code(value: str, strong: bool, quoted: bool) -> bool:
    """Whether ``value`` (assigned to a password's key when ``strong``; inside quotes when
    ``quoted``) is code or a name rather than a credential."""
    if _COMMENT_OR_URL.match(value) or (_CALL.match(value) and not password_marked(value)):
        return True
    if not strong:
        if value.strip() and value != value.strip():
            return True
        parts = [p for p in _PART.split(value) if p]
        if len(parts) >= 2 and all(p.isalpha() for p in parts) and any(p.lower() in _CREDENTIAL_WORDS for p in parts):
            return True
    if quoted:
        return False
    return bool(
        _OPERATOR.search(value)
        or _TYPE.match(value)
        or _CLASS_NAME.match(value)
        or _CMDLET.match(value)
        or _VARIABLE.match(value)
        or _type_name(value.rstrip(",;"))
        or _module_path(value)
        or _code_tuple(value)
    )


# after an unquoted value: "=" (not "==", "=>"): the value is assigned to in turn
_ASSIGNED = re.compile(r"[ \t]*=(?![=>])")
# an attribute path (``exports.Socks4Response``): what a chain of assignments assigns to
_ATTRIBUTE_PATH = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+")
# after a quoted value's closing quote: what joins with the string, formats its "%" verbs, or
# fills its "{}" fields
_JOINED = re.compile(r"\.join\(")
_PERCENT_FORMATTED = re.compile(r"[ \t]+%[ \t]+[(\w]")
_FIELDS_FILLED = re.compile(r"\.(?:format|format_map)\(")
_TEMPLATE_FIELD = re.compile(r"%(?:\([A-Za-z_][A-Za-z0-9_]*\))?[-+# 0-9.]*[a-zA-Z]|\{[^{}]*\}")


def used_as_code(text: str, start: int, end: int) -> bool:
    """Whether the value at ``text[start:end]`` is an expression's part rather than a literal
    credential: an unquoted name that is called, an attribute path assigned to in turn, a quoted
    string that joins others or whose own ``%`` verbs or ``{}`` fields are filled. A literal
    password is used as it is (``"hunter2".encode()``, ``'N7wr…=' % (a, b)`` without a verb
    stay one)."""
    quote = text[start - 1 : start] if start else ""
    if quote in ("'", '"', "`"):
        if text[end : end + 1] != quote:
            return False
        value = text[start:end]
        if _JOINED.match(text, end + 1) is not None:
            return True
        formatted = ("%" in value and _PERCENT_FORMATTED.match(text, end + 1) is not None) or (
            "{" in value and _FIELDS_FILLED.match(text, end + 1) is not None
        )
        # a template's fixed text may still hold a credential ("'%s:%s:ez364N1N…=' % (u, p)")
        return formatted and not looks_random(_TEMPLATE_FIELD.sub("", value), 12)
    if text[end : end + 1] == "(":
        return True
    return _ATTRIBUTE_PATH.fullmatch(text, start, end) is not None and _ASSIGNED.match(text, end) is not None


def references_a_variable(value: str) -> bool:
    """Whether ``value`` is a variable's reference (``$env:PASSWORD``, ``${DB_PASS}``,
    ``$request->…``), quoted or not: PowerShell, PHP, Perl and shells interpolate it."""
    return _VARIABLE.match(value) is not None and not any(c.isspace() for c in value)
