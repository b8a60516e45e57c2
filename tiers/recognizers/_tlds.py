"""Which top-level domains exist: the Public Suffix List's, as tldextract (a dependency of
presidio-analyzer, so always installed) ships it in its wheel (``.tld_set_snapshot``; the list
is Mozilla's, MPL-2.0). Read from disk once, on first need, without importing tldextract (its
import costs ≈ 0.1 s and nothing here needs its code); nothing is fetched.

Recognizers read normalised text (:mod:`tiers.normalize` folds look-alike letters), so each label
is held as written, as punycode and as normalised. A mailbox under a top-level domain the root
zone does not hold (``aperson@dom.ain``, ``ks_IN@devanagari.UTF-8`` of a locale's name,
``me@my.domain``) reaches nobody. Where the list cannot be read, every domain counts as
existing: the addresses stay reported.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from ..normalize import normalize_text

__all__ = ["tld_exists"]


@lru_cache(maxsize=1)
def _tlds() -> frozenset[str] | None:
    spec = importlib.util.find_spec("tldextract")
    if spec is None or spec.origin is None:
        return None
    try:
        text = (Path(spec.origin).parent / ".tld_set_snapshot").read_text("utf-8")
    except OSError:
        return None
    found: set[str] = set()
    for line in text.splitlines():
        rule = line.strip()
        if not rule or rule.startswith("//"):
            continue
        label = rule.lstrip("!*.").rsplit(".", 1)[-1].lower()
        found.add(label)
        if not label.isascii():
            # recognizers read normalised text, where look-alike letters are folded ("укр" is read
            # as "ykp", "рф" as "pф"): the label as they see it
            found.add(normalize_text(label))
            try:
                found.add(label.encode("idna").decode("ascii"))
            except UnicodeError:
                pass
    # a list too short to be the real one (a truncated file) decides nothing
    return frozenset(found) if len(found) > 1000 else None


def tld_exists(label: str) -> bool:
    """Whether ``label`` (a domain's last label, any case) is a top-level domain of the Public
    Suffix List; True when the list cannot be read."""
    tlds = _tlds()
    return tlds is None or label.lower() in tlds
