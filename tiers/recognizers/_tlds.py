"""The top-level domains a mailbox can be under: the root zone's, and the names networks use
inside (``.local``, ``.corp``, ``.internal`` …).

Source: the Public Suffix List (publicsuffix.org, Mozilla Public License 2.0), as the snapshot
``.tld_set_snapshot`` that the ``tldextract`` package on PyPI (5.4.0, BSD-3-Clause, by John
Kurkowski) ships inside its wheel and presidio-analyzer installs. The file is read unmodified at
start-up from where the package is installed, without importing the package (its import costs
≈ 0.1 s and is kept lazy: ``tiers/_presidio.py``); nothing of it is copied into this repository
and nothing is downloaded. Every rule's last label is a top-level domain: ICANN's ("com", "de",
"рф", "bar") and those the private section's rules end in, which are ICANN's too; each also as
the normaliser writes it (:mod:`tiers.normalize` folds confusables: "рф" is read as "pф").

Code writes the mailbox shape with other words after the "@": ``file.zip@member.pkl`` in a
usage string, ``"\\n@triton.jit"`` in generated source, ``logo@2x.png``. Under no top-level
domain of the root zone no mailbox exists, except under the names private networks use, which
real internal addresses have (``jane@acme.local``): those are kept.
"""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

from ..normalize import normalize_text
from ..tables import table

__all__ = ["is_mail_tld"]

# The names private networks give their domains: RFC 6762's "local", ICANN's reserved "internal",
# "home.arpa"'s "home", and the ones directory services are commonly set up with.
_PRIVATE_USE = frozenset(
    {"local", "localdomain", "lan", "corp", "internal", "intranet", "intra", "home", "private", "priv"}
)


@table("top-level-domains", source="tldextract")
def _tlds() -> frozenset[str]:
    # the path finder itself: importlib.util.find_spec would read the spec of the module presidio
    # imported lazily, and so import it
    spec = importlib.machinery.PathFinder.find_spec("tldextract")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("tldextract (a presidio-analyzer dependency) is not installed")
    path = Path(next(iter(spec.submodule_search_locations))) / ".tld_set_snapshot"
    out: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            rule = line.strip()
            if rule and not rule.startswith("//"):
                tld = rule.rsplit(".", 1)[-1].lstrip("*!").lower()
                # the recognizers read normalised text: "рф" reaches them as "pф" (confusables folded)
                out.update((tld, normalize_text(tld).lower()))
    if len(out) < 1000:  # a damaged or emptied file would make every mailbox a non-mailbox
        raise ValueError("the Public Suffix List snapshot lists too few top-level domains")
    return frozenset(out)


def is_mail_tld(label: str) -> bool:
    """Whether ``label`` (lower case) can end a mailbox's domain: a top-level domain of the
    Public Suffix List, an A-label of an internationalised one (``xn--p1ai``), or a name of
    private use."""
    return label in _tlds() or label in _PRIVATE_USE or label.startswith("xn--")
