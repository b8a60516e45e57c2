"""E-mail addresses and phone numbers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

import phonenumbers
from phonenumbers import PhoneMetadata, phonenumberutil
from phonenumbers.phonenumberutil import COUNTRY_CODE_TO_REGION_CODE, PhoneNumberType
from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer
from ._digits import in_decimal, in_integer_sequence
from ._english_words import is_english_word
from ._given_names import given_names
from ._surnames import is_surname
from ._tlds import tld_exists

__all__ = ["EmailAddressRecognizer", "PhoneNumberRecognizer"]

# The library's own check of a national number against a region's types. Its name is private:
# where a version lacks it, every "+" number is parsed and checked in full, as before.
_TYPE_OF: Callable[[str, PhoneMetadata], int] | None = getattr(phonenumberutil, "_number_type_helper", None)


_LETTER = r"\p{L}\p{N}\p{M}"  # letters, digits and marks of any script
_ATOM = f"[{_LETTER}_%+!#$*^`{{|}}~-]+"
# no counted repeats ({0,61}) of these classes: each copy of a Unicode class costs RE2 thousands
# of instructions, and the combined set's DFA runs out of memory
_LABEL = f"[{_LETTER}](?:[{_LETTER}-]*[{_LETTER}])?"


class EmailAddressRecognizer(TiersPatternRecognizer):
    """E-mail addresses, internationalised ones included (RFC 6531: Unicode local parts and
    domains, ``ivan@пример.рф``, punycode ``xn--`` labels). Presidio's own recognizer validates
    with tldextract, which fetches the public-suffix list over the network on first use; this one
    checks the shape locally.

    The local part takes RFC 5322's characters except ``/ = ? &``, which URLs and query strings
    put right before an address (``?email=jane@example.com``), and apostrophes only inside
    (``o'brien@…``, not a quote before it). No word boundaries: leftmost matching already starts
    at the first character that can begin the address, so a letter no fold table knows
    (``maria.gжnzalez@…``) is inside the finding instead of left in the clear before it.

    Addresses that reach nobody are not reported: under the reserved top-level domains of RFC
    2606 / 6761 (``.test``, ``.example``, ``.invalid``, ``.localhost``), and at the
    documentation domains ``example.com``, ``.org`` and ``.net`` a mailbox that provably holds no
    name (``user@``, ``noreply@``, ``jane@``, ``hello123@``: :meth:`_no_name`). One that may
    (``maria.gonzalez@``, ``jsmith2@``, ``ahmet.yilmaz@`` of a masked export) still counts: the
    name is what identifies. Any address under a configured internal domain counts, reserved or
    not (``corp.example.com``, ``build.test``).
    """

    ENTITY = "EMAIL_ADDRESS"
    PATTERNS = [
        Pattern(
            "email",
            _ATOM + f"(?:[.']{_ATOM})*@(?:{_LABEL}\\.)+(?:(?i:xn--)[A-Za-z0-9-]+|\\p{{L}}[\\p{{L}}\\p{{M}}]+)",
            0.9,
        )
    ]
    CONTEXT = ["email", "e-mail", "mail", "contact"]

    def __init__(self, internal_domains: Iterable[str] = ()) -> None:
        super().__init__()
        self._internal = tuple(d.lower() for d in internal_domains)

    def invalidate_result(self, pattern_text: str) -> bool:
        local, domain = pattern_text.rsplit("@", 1)
        domain = domain.lower()
        labels = domain.split(".")
        if labels[-1] in _FILE_EXTENSIONS:
            return True  # file names such as logo@2x.png, file@1.txt: no such top-level domain
        if any(domain == d or domain.endswith("." + d) for d in self._internal):
            return False
        if not any(c.isalnum() for c in local):
            return True  # "``@contextlib.contextmanager" in reST, "%@gmail.com" in a LIKE pattern
        if _TEMPLATE_FIELD.search(local):
            return True  # f"{info.subdomain}@ssh.hf.space": the mailbox is filled in later
        registered = labels[-3] if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL else labels[max(0, len(labels) - 2)]
        if registered[2:4] == "--" and not registered.startswith("xn--"):
            # RFC 5891 4.2.3.1: "--" in a label's third and fourth places is reserved for
            # A-labels ("xn--"); no registry delegates "a0--0", a generator's output does. Below
            # the registered name its owner names hosts as it likes ("a0--00.iam.gserviceaccount.com"
            # is a Google Cloud project's service account)
            return True
        if labels[-1] in _RESERVED_TLDS or domain in _PLACEHOLDER_DOMAINS:
            return True
        if len(local) >= 3 and set(local.lower()) == {"x"}:
            return True  # a mailbox masked out ("xxxxxxx@dot.ca.gov" in a saved bounce): its owner is gone
        if _MESSAGE_ID_LOCAL.fullmatch(local):
            return True  # a message's id ("<4FD05F05-F98B-…@gmail.com>", "<15090.61304.110929@…>")
        if (_unreachable(labels) or _one_letter(registered)) and _nobody_local(local):
            return True  # "aperson@dom.ain", "bbb@zzz.org", "ks_IN@devanagari.UTF-8": nobody, nowhere
        if len(local) == 1 and len(labels) == 2 and len(labels[0]) == 1:
            return True  # "a@b.com", "x@y.org": one letter at one letter, a textbook's mailbox
        documentation = documentation_domain(domain)
        if documentation and len(local) <= 2 and local.isalpha():
            return True  # initials at a documentation domain ("dp@x-force.example.com"): no name, no mailbox
        if local.lower() in _PLACEHOLDER_MAILBOXES and len(labels) == 2 and labels[0] in _PLACEHOLDER_MAILBOXES:
            return True  # a placeholder at a placeholder ("test@test.com", "name@email.com")
        if documentation and self._no_name(local):
            return True  # "jane@example.net", "hello123@example.com": a reserved domain, no name
        return (
            documentation and (local.lower() in _PLACEHOLDER_MAILBOXES or local.lower() in _SERVICE_USERS)
        ) or _algorithm_name(local)

    @staticmethod
    def _no_name(local: str) -> bool:
        """Whether a mailbox's local part provably holds no person's name. At a reserved domain
        no mail arrives, so only a name there identifies anyone; a masked export keeps real local
        parts ("ahmet.yilmaz@example.com"), which stay. None: a local part without letters, one
        word that is a placeholder, a given name alone or an English word no census surname
        spells ("jane", "user123", "illustrious"), or parts of which every longer one is a
        placeholder ("foo.na"). Two name-like parts, digits after a name ("jsmith2") and any
        letter beyond ASCII keep it."""
        if not local.isascii():
            return False
        parts = [p.rstrip("0123456789") for p in _LOCAL_PARTS.split(local.lower().replace("'", ""))]
        parts = [p for p in parts if p]
        if not parts:
            return True
        if len(parts) > 1:
            return all(p in _PLACEHOLDER_MAILBOXES or p in _SERVICE_USERS for p in parts if len(p) > 2)
        word = parts[0]
        if len(set(word)) == 1:
            return True  # one letter repeated: "yyy@example.com", "bbb@zzz.org"
        if word in _PLACEHOLDER_MAILBOXES or word in _SERVICE_USERS or word in given_names(1):
            return True
        return is_english_word(word) and not is_surname(word)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """The password of a URL's user part (``https://username:password@host.com``) is no
        mailbox: the URL is judged as one, with its credentials (``UrlCredentialRecognizer``).
        Without the scheme (``netloc can be usr:pwd@example.com``) the same user part is read as
        one at a documentation domain, where nobody's mailbox is; elsewhere ``user:jane@acme.com``
        in a log line is the address. And ``git@github.com:owner/repo.git`` is a repository's
        address in SSH's scp syntax (a user on a host, then ``:`` and a path), no mailbox: an
        address ends a sentence's clause with a blank after its colon. Nor is a string literal's
        escape (:func:`_escape_before_at`: ``"\\n@triton.jit\\n"`` in generated source,
        ``\\x01Z@google.golang.org`` in a serialised protobuf descriptor)."""
        if end + 1 < len(text) and text[end] == ":" and text[end + 1] in _PATH_START:
            return True
        if text[start - 1 : start] == "<" and _in_id_header(text, start):
            return True
        if _escape_before_at(text, start, end):
            return True
        if text.endswith("://", 0, start):
            login = text[start : text.find("@", start, end)]
            if _machine_user(login) or login.lower() in _SERVICE_USERS:
                # a URL's token or id as its user (a secret's recognizer reads the URL), or a
                # service's login ("git+ssh://git@github.com/…"): no mailbox
                return True
        if start == 0 or text[start - 1] != ":":
            return False  # both shapes below end with the colon right before the address
        if _URL_PASSWORD_BEFORE.search(text, max(0, start - 200), start):
            return True
        user = _USER_BEFORE.search(text, max(0, start - 64), start)
        if user is None or user.group(1).lower() == "mailto":
            return False
        return documentation_domain(text[start:end].rsplit("@", 1)[1])


# a message's id in place of a local part (RFC 5322 section 3.6.4 leaves its shape to the sender;
# these are the machine-made ones): a UUID, parts joined by "$", numbers joined by dots
_MESSAGE_ID_LOCAL = re.compile(
    r"[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}|[^@$]*\$[^@]*|[0-9]+(?:\.[0-9]+){2,}"
)
# the headers whose "<…@…>" are messages' ids, not mailboxes (RFC 5322 3.6.4, RFC 2045 7, RFC 3464);
# not "References:", which a CV writes before its referees' names and mailboxes
_ID_HEADER = re.compile(
    r"(?i:message-id|resent-message-id|in-reply-to|content-id|original-envelope-id|x-message-id)[ \t]*:"
)
_RECEIVED = re.compile(r"(?i:received)[ \t]*:")
# RFC 5322's line length, a header's folded lines and some slack
_HEADER_REACH = 2000
# "id <…>" of a "Received:" header: the relay's queue id
_RELAY_ID = re.compile(r"\bid[ \t]+<\Z")
# top-level names that sites use inside their networks (RFC 6762, ICANN's name-collision list):
# no public registry holds them, yet a mailbox there reaches somebody at that site
_INTERNAL_USE_TLDS = frozenset({"local", "localdomain", "lan", "internal", "intranet", "corp", "home", "private"})


def _in_id_header(text: str, start: int) -> bool:
    """Whether the "<" before ``start`` opens a message's id: in a header that holds only ids
    (its folded lines too) or after "id" in a relay's "Received:" header. The header's start is
    looked for within RFC 5322's line length only: a line of 160,000 ids read back to its start
    for each was quadratic."""
    floor = max(0, start - _HEADER_REACH)
    line = text.rfind("\n", floor, start) + 1
    for _ in range(32):  # a header folded over lines
        if line <= floor or text[line : line + 1] not in (" ", "\t"):
            break
        line = text.rfind("\n", floor, line - 1) + 1
    if line < floor:
        return False  # the header's start lies beyond its reach
    if _ID_HEADER.match(text, line) is not None:
        return True
    return _RECEIVED.match(text, line) is not None and _RELAY_ID.search(text, max(line, start - 16), start) is not None


def _unreachable(labels: list[str]) -> bool:
    """Whether the top-level domain of ``labels`` is none the root zone holds, and none that sites
    use inside their networks. Text glued to a real one ("jdoe@acme.comPhone: …" of scraped HTML)
    and a file's extension after a real domain ("li@acmecorp.com.ost", Outlook's store) leave a
    reachable mailbox before them. Only a label of ASCII letters is judged: others are read folded
    (look-alike letters) or glued to the text after them ("zhangwei@163.com即可"), and IANA's test
    names in other scripts are written as real ones are."""
    tld = labels[-1]
    if not (tld.isascii() and tld.isalpha()) or tld_exists(tld) or tld in _INTERNAL_USE_TLDS:
        return False
    if any(tld_exists(tld[:k]) and is_english_word(tld[k:]) for k in range(3, len(tld) - 1)):
        return False  # a real one and a word glued on ("comphone", "comor"; not "spam", "coms")
    return len(labels) < 3 or not tld_exists(labels[-2])


def _one_letter(registered: str) -> bool:
    """A registered name of one letter repeated, as examples write ("zzz.org"); three letters at
    least ("qq.com" is a mail provider's). Real ones exist ("mmm.com", "ccc.de"): only a mailbox
    there that names nobody is dropped (:func:`_nobody_local`)."""
    return len(registered) >= 3 and len(set(registered)) == 1 and registered.isalpha()


_LOCALE = re.compile(r"[A-Za-z]{2,3}_[A-Za-z]{2}")


def _nobody_local(local: str) -> bool:
    """Whether a local part names nobody: every piece a placeholder or a service's word, one
    letter repeated, one letter before a placeholder ("aperson", "buser"), or digits; or a
    locale's code ("ks_IN" of "ks_IN@devanagari.UTF-8"). A name, initials or any other word
    may be somebody's at a site's own domain ("rhall@acme.dom", "jd@acme.intern")."""
    if _LOCALE.fullmatch(local):
        return True
    for piece in _LOCAL_PARTS.split(local.lower()):
        word = piece.strip("0123456789")
        if not word:
            continue
        if word in _PLACEHOLDER_MAILBOXES or word in _SERVICE_USERS or (len(word) >= 2 and len(set(word)) == 1):
            continue
        if len(word) >= 5 and word[1:] in _PLACEHOLDER_MAILBOXES:
            continue
        return False
    return True


# second-level names under which registries delegate ("acme.co.uk", "uni.ac.jp")
_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "go"})
# the first character of the path after "user@host:" in SSH's scp syntax ("owner/repo.git",
# "~/app", "/srv/www", "22" of a port)
_PATH_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~./-")
# the local part of a candidate right after a backslash that is an escape: one letter
# ("\\n@triton"), or a control character's code (\\xHH, octal, \\uHHHH) and at most one more
# character (a protobuf descriptor's length byte and field tag: "\\x01Z@google.golang.org"). Not a
# letter escape and more: a Windows account writes its domain before a backslash
# ("AzureAD\\tk@contoso.com"); nor the code of anything but a control character: a letter's, an
# accent's, a UTF-8 byte's ("jos\\u00e9@", "jos\\xc3\\xa9@", "jos\\303\\251@": a mailbox
# written as bytes), a bracket's or a quote's ("\\u003cj@acme.com" of Go's JSON)
_CONTROL_CODE = re.compile(r"(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|([0-7]{1,3}))[A-Za-z0-9]?\Z")


_MACHINE_USER = re.compile(r"[A-Za-z0-9_-]{20,256}")


def _machine_user(local: str) -> bool:
    """A URL's user part that a machine made (twenty characters or more of a token's alphabet,
    :func:`.secrets._values.machine_made`: a 24-digit hex job id, a 40-digit hex token), never a
    mailbox ("https://3f4a…@github.com/acme/app.git", "ssh://687f…@ssh.hf.jobs"). The secret's
    recognizer reads such a web URL whole by the same predicate, so a user part is reported by
    one of the two (a placeholder, "0000000000000000…", stays the mailbox it is shaped like)."""
    from .secrets._values import machine_made  # (secrets' keys import this module)

    return _MACHINE_USER.fullmatch(local) is not None and machine_made(local)


def _escape_before_at(text: str, start: int, end: int) -> bool:
    """Whether the candidate's local part is an escape of a string literal: it follows a
    backslash that is not itself escaped (an odd run of them) and is one letter or a control
    character's code and one more character (generated source's ``"\\n@triton.jit"``, a
    serialised protobuf descriptor's ``\\x01Z@google.golang.org/…``)."""
    if start == 0 or text[start - 1] != "\\":
        return False
    run = start - 1
    while run > 0 and text[run - 1] == "\\":
        run -= 1
    if (start - run) % 2 == 0:
        return False  # "\\\\jd@…": an escaped backslash, then the mailbox (JSON of "AzureAD\\jd@…")
    at = text.find("@", start, end)
    if at == start + 1 and text[start].isascii() and text[start].isalpha():
        return True  # a letter's escape
    code = _CONTROL_CODE.match(text, start, at)
    if code is None:
        return False
    value = int(code[3], 8) if code[3] else int(code[1] or code[2], 16)
    return value < 0x20 or value == 0x7F


# what stands before the password of a URL: "scheme://user:" with no "/" or "@" in the user
_URL_PASSWORD_BEFORE = re.compile(r"://[^\s/@:]*:\Z")
# a user name and its colon glued to the password ("usr:pwd@…"); "mailto:" is a link's scheme
_USER_BEFORE = re.compile(r"(?:^|[\s\"'(<\[,;])([^\s/@:\"'(<\[,;]+):\Z")
# a template's field in place of the local part: "{name}", "{info.subdomain}", "{0}" of
# str.format, f-strings and Jinja's "{{ user }}" (RFC 5322 allows braces; no mailbox uses them)
_TEMPLATE_FIELD = re.compile(r"\{[A-Za-z0-9_.]*\}")
# the extensions of files that share the mailbox shape (logo@2x.png, file@1.txt, icon@3x.jpeg)
# and are no top-level domain of the root zone (py, sh, md, rs, pl, cc, java, zip and mov are;
# tests/tiers/test_recognizers.py checks the list against the Public Suffix List)
_FILE_EXTENSIONS = frozenset(
    """png jpg jpeg gif svg webp bmp tif tiff ico heic txt csv tsv json yaml yml toml ini cfg conf
    log lock xml html htm xhtml css scss js mjs cjs ts tsx jsx pyi pyc pyx ipynb rb php sql db sqlite
    parquet bin dat tmp bak swp doc docx xls xlsx ppt pptx odt ods rtf pdf rst tex whl egg exe dll
    tar gz tgz xz zst jar class cpp hpp cxx kt pem crt csr der pfx jks wav avi mkv webm flac ttf
    otf woff pkl pickle npy npz ckpt pth safetensors onnx h5 hdf5 msgpack""".split()
)
# the words SSH, TLS and JOSE algorithm names are made of; with a number they are the
# "name@domain" extension names of RFC 4251 section 6 ("aes256-gcm@openssh.com",
# "sk-ecdsa-sha2-nistp256@openssh.com", "-cert-v01@openssh.com"), not anybody's mailbox
_ALGORITHM_WORDS = frozenset(
    """aes sha hmac ecdsa rsa dsa dss ssh sk cert v gcm etm ctr cbc umac kex curve chacha poly nistp ed
    mlkem sntrup x zlib md blake camellia""".split()
)
_TOKEN_DIGITS = re.compile(r"[0-9]+$")


def _algorithm_name(local: str) -> bool:
    """A local part of two or more lower-case words joined by "-", one an algorithm's word of three
    letters at least, and a number in it (a person's "jean-luc" or "rsa-team" has none)."""
    if "-" not in local:
        return False
    tokens = local.split("-")
    if len([t for t in tokens if t]) < 2 or not all(t.isascii() and (t.isalnum() or not t) for t in tokens):
        return False
    if local != local.lower() or not any(c.isdigit() for c in local):
        return False
    words = [_TOKEN_DIGITS.sub("", t) for t in tokens if t]
    # one word of three letters at least: "v", "x", "sk", "ed" alone are a person's ("john-v2",
    # "a000-v" of a service account)
    return any(w in _ALGORITHM_WORDS and len(w) >= 3 for w in words)


def documentation_domain(domain: str) -> bool:
    """RFC 2606's and 6761's names: example.com, .org and .net with their subdomains, and the
    reserved top-level domains (``.test``, ``.example``, ``.invalid``, ``localhost``)."""
    d = domain.lower().rstrip(".")
    return d in _DOCUMENTATION_DOMAINS or d.endswith(_DOCUMENTATION_SUFFIXES) or d.rsplit(".", 1)[-1] in _RESERVED_TLDS


_RESERVED_TLDS = frozenset({"test", "example", "invalid", "localhost"})  # RFC 2606, RFC 6761
_DOCUMENTATION_DOMAINS = frozenset({"example.com", "example.org", "example.net"})
_DOCUMENTATION_SUFFIXES = tuple("." + d for d in sorted(_DOCUMENTATION_DOMAINS))  # www.example.com
# metasyntactic domains of examples and docstrings ("ed@foo.com", "foo@bar.com"): registered by
# somebody, but no one's mailbox in a text that writes them
_PLACEHOLDER_DOMAINS = frozenset(
    f"{label}.{tld}"
    for label in (
        "foo",
        "bar",
        "baz",
        "qux",
        "quux",
        "bat",
        "foobar",
        "domain",
        "yourdomain",
        "mydomain",
        "somedomain",
        "yourcompany",
        "mycompany",
        # the host of a URL written out as an example ("username:password@host.com")
        "host",
        "myhost",
        "yourhost",
        "hostname",
        "server",
        "myserver",
        "yourserver",
    )
    for tld in ("com", "org", "net")
)
_PLACEHOLDER_MAILBOXES = frozenset(
    """user username you your.name yourname your.email youremail name first.last firstname.lastname
    someone somebody anyone person me email mail address foo bar baz qux foo.bar test tester
    testuser test.user demo example sample info contact hello hi support help admin
    administrator root webmaster postmaster hostmaster noreply no-reply donotreply do-not-reply
    bounce alice bob carol dave eve mallory agent copy password secret redacted customer client
    sales billing team jdoe janedoe johndoe author maintainer owner developer""".split()
)


# the accounts of services and tools, no person's: at a documentation domain a URL's or SSH's
# user, not a mailbox ("ssh://git@example.com/repo.git", "https://accesstoken@example.com")
_SERVICE_USERS = frozenset(
    """git svn hg bzr cvs accesstoken access-token x-access-token token oauth2 oauth bearer apikey
    deploy deployer ubuntu ec2-user centos debian admin bot ci build jenkins runner www-data nobody
    daemon apache nginx postgres mysql redis ftp anonymous guest service system""".split()
)

_DECIMAL = re.compile(r"\d+\.\d+")
_SIGNED_DECIMAL = re.compile(r"[+-]\d+\.\d{1,3}")
_LOCAL_PARTS = re.compile(r"[._+-]")


class _RegionTable:
    """Per region: the national-number patterns of every valid number type, compiled once.

    ``phonenumbers.is_valid_number`` costs ≈ 0.1 ms; digit-heavy text has tens of thousands of
    candidates, so candidates are checked against the same metadata regexes directly (≈ µs).
    """

    _TYPES = (
        "fixed_line",
        "mobile",
        "toll_free",
        "premium_rate",
        "shared_cost",
        "personal_number",
        "voip",
        "pager",
        "uan",
        "voicemail",
    )

    def __init__(self, region: str) -> None:
        md = PhoneMetadata.metadata_for_region(region)
        if md is None:
            raise ValueError(f"no phone metadata for region {region}")
        self.region = region
        self.metadata = md
        self.country_code = md.country_code
        self.trunk = md.national_prefix or ""
        pats = []
        lengths: set[int] = set()
        for t in self._TYPES:
            desc = getattr(md, t, None)
            if desc is not None and desc.national_number_pattern:
                pats.append(desc.national_number_pattern)
                lengths.update(desc.possible_length or ())
        self.valid = re.compile("(?:" + "|".join(pats) + ")") if pats else None
        self.lengths = frozenset(lengths)

    def is_valid_national(self, nsn: str) -> bool:
        return (
            self.valid is not None
            and (not self.lengths or len(nsn) in self.lengths)
            and self.valid.fullmatch(nsn) is not None
        )


# A digit run glued to an identifier, a path, a version or a UUID by "_", "-", ".", "/" or "~"
# ("user_0301234567", "v2/0301234567", "…-a716-446655440000") is part of that token, not a phone.
_NOT_IN_TOKEN = r"(?:^|[^0-9A-Za-z_.~/-])"
# "0123456789", "9876543210" written as one run: alphabets and test data, never dialled
_SEQUENTIAL = ("01234567890123456789", "98765432109876543210")
# a bare run with six of one digit in a row (017700000001, 1000000000): a quantity or an
# address in another notation, not a subscriber number
_PHONE_WORD = re.compile(
    r"(?i:phone|tel|telephone|telefon|mobile|mobil|portable|cell|call|fax|whatsapp|sms|handy|rufnummer|"
    r"numero|dial|contact)"
)
_MACHINE_NUMBER = re.compile(r"(\d)\1{5}")
# six (or eight, EUI-64) hex pairs with one separator throughout: a hardware address
_MAC_SHAPE = re.compile(
    r"[0-9A-Fa-f]{2}([:-])[0-9A-Fa-f]{2}(?:\1[0-9A-Fa-f]{2}){4}(?:(?:\1[0-9A-Fa-f]{2}){2})?(?![0-9A-Za-z])"
)
# what stands before the numbers of a reference: identifiers of publications, journal and volume
# abbreviations, standards bodies ("JIS X 0208-1990", "ISO 8601-1")
_CITATION = re.compile(
    r"(?i:\b(?:doi|issn|e-?issn|isbn|arxiv|pmid|pmc)\b)"
    r"|\b(?:[Vv]ol|pp|[Nn]o|Rev|Phys|Lett|Proc|Trans|Ann|Math|Stat|Sci|Acad|Soc|Comput|Mat|Biol|Chem|Appl)\."
    r"|\b(?:JIS|ISO|IEC|DIN|ANSI|IEEE|ECMA|ITU-T|ETSI|BS|EN|GB|KS|ASTM)(?: [A-Z])? ?\Z"
)
# Plain substrings that every match of the two patterns above holds, read on an ASCII window:
# the patterns try every place of the window with each alternative (10 and 5 µs a phone number),
# these are a few ``in`` tests, and only a window that holds one is searched.
_PHONE_WORD_PARTS = ("phone", "tel", "mobil", "portable", "cell", "call", "fax", "whatsapp", "sms", "handy",
                     "rufnummer", "numero", "dial", "contact")  # fmt: skip
_CITATION_WORDS = ("doi", "issn", "isbn", "arxiv", "pmid", "pmc")
_CITATION_ABBREVIATIONS = frozenset(
    "Vol vol pp No no Rev Phys Lett Proc Trans Ann Math Stat Sci Acad Soc Comput Mat Biol Chem Appl".split()
)
_WORD_BEFORE_DOT = re.compile(r"(\w+)\.")


def in_mac_shape(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside a MAC-shaped run of hex pairs. Such a run holds
    hex digits and its separator only, so a span with any other character (a space, a
    parenthesis, a "+": most phone numbers) is in none and no search is needed."""
    if _HEX_OR_SEPARATOR.fullmatch(text, start, end) is None:
        return False
    lo = max(0, start - 18)
    return any(m.start() + lo <= start and end <= m.end() + lo for m in _MAC_SHAPE.finditer(text[lo : end + 18]))


_HEX_OR_SEPARATOR = re.compile(r"[0-9A-Fa-f:-]+")


def in_byte_run(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]``, two-digit groups one blank apart ("05 00 01 02 03", the shape
    of a French number), is part of a longer run of such hex pairs: a dump of bytes ("0x00 03 ff
    05 00 01 02 03 04"), where a phone number has no pair before or after it."""
    if _SPACED_PAIRS.fullmatch(text, start, end) is None:
        return False
    return (
        _PAIR_BEFORE.search(text[max(0, start - 4) : start]) is not None
        or _PAIR_AFTER.match(text[end : end + 4]) is not None
    )


_SPACED_PAIRS = re.compile(r"[0-9]{2}(?: [0-9]{2})+")
_PAIR_BEFORE = re.compile(r"(?:^|[^0-9A-Za-z])[0-9A-Fa-f]{2} \Z")
_PAIR_AFTER = re.compile(r" [0-9A-Fa-f]{2}(?:$|[^0-9A-Za-z])")


def near_phone_word(text: str, lo: int, hi: int) -> bool:
    """``_PHONE_WORD.search(text, lo, hi)``, without the search where the window cannot match."""
    window = text[lo:hi]
    if window.isascii():
        low = window.lower()  # on ASCII, what the case-blind pattern matches
        return any(part in low for part in _PHONE_WORD_PARTS)
    return _PHONE_WORD.search(text, lo, hi) is not None  # "mobıle": re's case folding, not lower()


def citation_before(text: str, lo: int, hi: int) -> bool:
    """``_CITATION.search(text, lo, hi)``, without the search where the window cannot match."""
    window = text[lo:hi]
    if window.isascii():
        low = window.lower()
        if not (
            any(c.isupper() for c in window[-2:])  # "ISO", "ISO ", "JIS X ": a capital ends it
            or any(word in low for word in _CITATION_WORDS)
            or ("." in window and not _CITATION_ABBREVIATIONS.isdisjoint(_WORD_BEFORE_DOT.findall(window)))
        ):
            return False
    return _CITATION.search(text, lo, hi) is not None


class PhoneNumberRecognizer(TiersPatternRecognizer):
    """Phone numbers in international form (any country) or the national formats of the
    configured regions: NANP (``(415) 555-2671``) and trunk-prefixed (``020 7946 0958``)."""

    ENTITY = "PHONE_NUMBER"
    PATTERNS = [
        Pattern(
            "international",
            r"(?:\+|\b00)[1-9]\d{0,3}[ .-]?(?:\(\d{1,5}\)[ .-]?)?\d{1,14}(?:[ .-]\d{1,8}){0,6}\b",
            0.6,
        ),
        Pattern(
            "nanp",
            _NOT_IN_TOKEN + r"(?P<value>(?:1[ .-]?)?(?:\([2-9]\d{2}\)|[2-9]\d{2})[ .-]?[2-9]\d{2}[ .-]?\d{4})\b",
            0.5,
        ),
        # Trunk-prefixed national numbers: "(030) 901820", "020 7946 0958", "06 12 34 56 78".
        # Shapes are kept tight so that dates ("2024-01-23") and decimals give no candidates.
        Pattern("trunk_area", r"\(0\d{1,5}\)[ .-]?\d{2,5}(?:[ .-]?\d{2,5}){0,3}\b", 0.5),
        Pattern("trunk", _NOT_IN_TOKEN + r"(?P<value>0\d{2,5}[ ./-]?\d{3,5}(?:[ ./-]?\d{2,5}){0,3})\b", 0.5),
        Pattern("trunk_pairs", _NOT_IN_TOKEN + r"(?P<value>0[1-9](?:[ .-]?\d{2}){4})\b", 0.5),
        Pattern("mobile_5_5", _NOT_IN_TOKEN + r"(?P<value>[6-9]\d{4}[ -]\d{5})\b", 0.5),  # Indian mobiles: 98765 43210
    ]
    CONTEXT = ["phone", "tel", "telephone", "mobile", "cell", "call", "fax", "whatsapp", "sms"]

    def __init__(self, regions: Iterable[str] = ("US", "GB", "DE")) -> None:
        super().__init__()
        self._tables = [_RegionTable(r) for r in regions]
        self._nanp = [t for t in self._tables if t.country_code == 1]
        self._valid = lru_cache(maxsize=16384)(self._check)
        # The configured regions that are their calling code's main region (US for +1, GB for
        # +44): a number valid there is valid for phonenumbers without parsing it (below).
        self._main = {
            str(t.country_code): t.metadata
            for t in self._tables
            if t.country_code is not None and COUNTRY_CODE_TO_REGION_CODE.get(t.country_code, ("",))[0] == t.region
        }

    def validate_result(self, pattern_text: str) -> bool:
        return self._valid(pattern_text)

    def valid_in_main_region(self, international: str) -> bool:
        """Whether ``international`` (the calling code and the number, digits only) is a valid
        number of its code's main region, when that region is configured: the check
        ``phonenumbers.is_valid_number`` makes for it, without parsing (≈ 1.5 against 17 µs; a
        prompt full of "+1 …" numbers). False means "not known here": the full check decides."""
        if _TYPE_OF is None:
            return False
        for k in (1, 2, 3):  # calling codes are a prefix code: at most one of these is one
            md = self._main.get(international[:k])
            if md is not None:
                return bool(_TYPE_OF(international[k:], md) != PhoneNumberType.UNKNOWN)
        return False

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The longest valid phone number that starts the candidate, cut at a separator.

        Candidate patterns are greedy: ``+44 20 7946 0958 12 items`` runs into the next number.
        """
        if sum(c.isdigit() for c in text) < 7:
            return None
        end = len(text)
        while end > 0:
            if self._valid(text[:end]):
                return 0, end
            cut = max(text.rfind(" ", 0, end), text.rfind("-", 0, end), text.rfind(".", 0, end))
            if cut <= 0:
                return None
            end = cut
            while end > 0 and not text[end - 1].isalnum() and text[end - 1] != ")":
                end -= 1
        return None

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A bare run of digits (no "+", no separators) is a phone only after a phone word: as
        it stands in code and data it is a timestamp (2272060800), a stamp (2026111700), a
        constant (6469693230) as often as a number to dial.

        Digit groups that are part of something else are none either: a decimal or a term of a
        sequence literal (:mod:`._digits`), a MAC-shaped run
        (``01-23-45-67-89`` of ``01-23-45-67-89-ab``), a path or DOI (``10.1111/0081-1750.00098``),
        and, with no phone word near, the numbers of a citation or a standard on the same line
        (``ISSN 0209-9683``, ``Phys. Rev. E 78, 046110 2008``, ``JIS X 0208-1990``)."""
        value = text[start:end]
        if in_decimal(text, start, end) or in_integer_sequence(text, start, end):
            return True  # ``78498 78527.3994291277`` in a table of values: a number, not a phone
        if _ZIP_PLUS_4.fullmatch(value) and _us_state_before(text, start):
            return True  # "Boston, MA 02110-1301" (the GPL's every header): a ZIP+4 code
        phone_word = near_phone_word(text, max(0, start - 64), start)
        if (
            not phone_word
            and value[:1] not in "+("
            and (_TIME_BEFORE.search(text, max(0, start - 8), start) or _TIME_AFTER.match(text, end))
        ):
            # glued to a time: "03:05:07.123457-05:00" (seconds, microseconds, the offset's
            # hours), "01-01-1980 00:61:00" (a date and its hour). Not after any "digit:"
            # ("contacts.csv:42:+48 506 891 428" of grep, "tel2:…"), never a number written with
            # its "+" or its area code in brackets ("+49 30 12345678:00 Uhr"), nor one after a
            # phone's word ("Fax: 050-7367512:00")
            return True
        if value.isdigit():
            return not phone_word
        if start > 0 and text[start - 1] == "/":
            return True
        if in_mac_shape(text, start, end) or in_byte_run(text, start, end):
            return True
        if phone_word:
            return False
        # the line's start looked for in the window only: from the text's start it read a whole
        # one-line prompt back for every number on it (quadratic: 1 MB, 4,000 numbers)
        lo = max(0, start - 48)
        return citation_before(text, max(lo, text.rfind("\n", lo, start) + 1), start)

    def _check(self, text: str) -> bool:
        digits = "".join(c for c in text if c.isdigit())
        if not 7 <= len(digits) <= 15:
            return False
        if _DECIMAL.fullmatch(text):
            return False  # 1.7724538509 is a number, not a phone
        if _SIGNED_DECIMAL.fullmatch(text):
            return False  # "+35236450.6" in a doctest; EPP's "+1.4155552671" (RFC 5733) has the number after its dot
        if digits == text and (any(digits in run for run in _SEQUENTIAL) or _MACHINE_NUMBER.search(digits)):
            return False
        if digits == text and min(abs(int(digits) - (1 << 31)), abs(int(digits) - (1 << 32))) <= 16:
            return False  # INT_MAX and friends (2147483647) in code and test suites
        nanp = digits[1:] if len(digits) == 11 and digits.startswith("1") else digits
        if len(nanp) == 10 and nanp[3:6] == "555" and (nanp[6:8] == "01" or nanp[6:] == "1212"):
            # 555-0100 to 555-0199: reserved for fiction and examples by the NANP; 555-1212:
            # directory assistance, the same service in every area code, nobody's line. Other
            # 555 numbers stay: the NANP has assigned them to real services since 1994.
            return False
        stripped = text.lstrip()
        if stripped.startswith(("+", "00")):
            international = digits[2:] if stripped.startswith("00") else digits
            if self.valid_in_main_region(international):
                return True
            try:
                num = phonenumbers.parse("+" + international)
            except phonenumbers.NumberParseException:
                return False
            return phonenumbers.is_valid_number(num)
        if len(digits) == 11 and digits.startswith("1") and any(t.is_valid_national(digits[1:]) for t in self._nanp):
            return True
        # National formats: with the region's trunk prefix ("020 7946 0958") or, when written
        # with separators, without it, as Indian and Brazilian numbers often are
        # ("(362) 748-7752"). A bare digit run without a trunk prefix counts only as NANP: too
        # many plain 10-digit numbers (ids, 2**32) are valid somewhere.
        formatted = any(c in " .-()/" for c in text.strip())
        odd_group = formatted and any(len(g) in (5, 7, 9) for g in _DIGIT_GROUPS.findall(text))
        for t in self._tables:
            if odd_group and t.region in _WRITTEN_IN_PAIRS:
                continue
            if (formatted or t.country_code == 1) and t.is_valid_national(digits):
                return True
            if t.trunk and digits.startswith(t.trunk) and t.is_valid_national(digits[len(t.trunk) :]):
                return True
        return False


_DIGIT_GROUPS = re.compile(r"[0-9]+")
# hours and minutes right before, minutes (and seconds) right after
_TIME_BEFORE = re.compile(r"(?<![0-9])[0-9]{1,2}:[0-9]{2}:\Z")
_TIME_AFTER = re.compile(r":[0-9]{2}(?::[0-9]{2})?(?![0-9])")
_ZIP_PLUS_4 = re.compile(r"[0-9]{5}-[0-9]{4}")
# a town, a comma and the state's code, as US addresses write them ("Boston, MA 02110-1301"); a
# code alone ("Hotline DE 06221-5678", "… OR 06221-5678") is a word or a country. A line break
# between may carry a comment's mark: the GPL's header in a "#", "//", " *", "--" or ";" comment
_STATE_BEFORE = re.compile(
    r"[A-Za-z.],[ \t]*([A-Z]{2})[ \t]*,?[ \t]*(?:\r?\n[ \t]*(?:#+|//|/?\*+|--|;+|%+|!|REM|rem|'|\")?[ \t]*)?\Z"
)
# the USPS codes of the states, DC and the territories, with the first three digits of their ZIP
# codes (USPS's prefix ranges): a ZIP+4 code of another state's range after a code is no ZIP
# ("Heidelberg, DE\n# 06221-5678": Delaware's codes start 197-199, a German number stays one)
_ZIP_PREFIXES: dict[str, tuple[tuple[int, int], ...]] = {
    "AL": ((350, 369),), "AK": ((995, 999),), "AZ": ((850, 865),), "AR": ((716, 729), (755, 755)),
    "CA": ((900, 961),), "CO": ((800, 816),), "CT": ((60, 69),), "DE": ((197, 199),),
    "DC": ((200, 205), (569, 569)), "FL": ((320, 349),), "GA": ((300, 319), (398, 399)),
    "HI": ((967, 968),), "ID": ((832, 838),), "IL": ((600, 629),), "IN": ((460, 479),),
    "IA": ((500, 528),), "KS": ((660, 679),), "KY": ((400, 427),), "LA": ((700, 714),),
    "ME": ((39, 49),), "MD": ((206, 219),), "MA": ((10, 27), (55, 55)), "MI": ((480, 499),),
    "MN": ((550, 567),), "MS": ((386, 397),), "MO": ((630, 658),), "MT": ((590, 599),),
    "NE": ((680, 693),), "NV": ((889, 898),), "NH": ((30, 38),), "NJ": ((70, 89),),
    "NM": ((870, 884),), "NY": ((5, 5), (63, 63), (100, 149)), "NC": ((270, 289),),
    "ND": ((580, 588),), "OH": ((430, 459),), "OK": ((730, 749),), "OR": ((970, 979),),
    "PA": ((150, 196),), "RI": ((28, 29),), "SC": ((290, 299),), "SD": ((570, 577),),
    "TN": ((370, 385),), "TX": ((733, 733), (750, 799), (885, 885)), "UT": ((840, 847),),
    "VT": ((50, 59),), "VA": ((201, 201), (220, 246)), "WA": ((980, 994),), "WV": ((247, 268),),
    "WI": ((530, 549),), "WY": ((820, 831),), "PR": ((6, 9),), "GU": ((969, 969),), "VI": ((8, 8),),
    "AS": ((967, 967),), "MP": ((969, 969),),
}  # fmt: skip
_US_STATES = frozenset(_ZIP_PREFIXES)


def _us_state_before(text: str, start: int) -> bool:
    """Whether a town and a US state's code stand right before ``start`` (a blank, a comma or a
    line break between, the next line's comment mark too) and the ZIP code there is of that
    state's range."""
    m = _STATE_BEFORE.search(text, max(0, start - 24), start)
    if m is None or m.group(1) not in _US_STATES:
        return False
    prefix = int(text[start : start + 3]) if text[start : start + 3].isdigit() else -1
    return any(lo <= prefix <= hi for lo, hi in _ZIP_PREFIXES[m.group(1)])


# Regions whose numbers are written in pairs of digits ("01 42 68 53 00"; "0 800 123 456" for
# special numbers): a group of five, seven or nine digits is none of theirs. Two equal groups of
# five joined by a dash are a range ("01001–09999" of postcodes, the dash folded to "-"), which
# the French plan alone would take for "01 00 10 99 99".
_WRITTEN_IN_PAIRS = frozenset({"FR"})
