"""The audit fingerprint's normal form + HMAC: this tree against the previous implementation.

    .venv/bin/python bench/fingerprint.py

Same process, same texts (the last message of ``bench/overhead.py``'s generated chats, in English,
with identifiers, with German words, and as code), the two alternating; the best of N runs each.
The previous implementation is the oracle of ``tests/audit/test_fingerprint_normal_form.py``.

A second table times a whole request's fingerprints (every message's, and the whole's) the way
``gateway/classify.py`` took them before ``Fingerprints``: each message's normal form built
whole, hashed, then all of them joined and hashed again; against ``Fingerprints``, which hashes
long texts in pieces into both at once. Median of N runs each, alternating twice.
"""

from __future__ import annotations

import hmac
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from overhead import MB, chat_body  # noqa: E402 -- after the sys.path line: run as a script from the checkout

from audit.fingerprint import Fingerprints, fingerprint_bytes, normalized_utf8  # noqa: E402 -- after the sys.path line: run as a script from the checkout
from tests.audit.test_fingerprint_normal_form import oracle  # noqa: E402 -- after the sys.path line: run as a script from the checkout

KEY = os.urandom(32)


def last_message(size: int, identifiers: bool) -> str:
    prefix, suffix = chat_body(size, seed=size, identifiers=identifiers)
    return str(json.loads(prefix + "1" + suffix)["messages"][-1]["content"])


def best(fn: Callable[[], object], runs: int) -> float:
    out = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t0)
    return out * 1000


def main() -> None:
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}")
    print("| text | size | before ms | now ms | ratio |")
    print("|---|---:|---:|---:|---:|")
    for size in (1024, 100 * 1024, MB, 3 * MB):
        plain = last_message(size, False)
        variants = {
            "English chat": plain,
            "with identifiers": last_message(size, True),
            "German words": plain.replace("the ", "für ").replace("review", "Überprüfung"),
            "code (indented)": plain.replace(". ", ".\n        "),
        }
        runs = 300 if size <= 1024 else (30 if size < MB else 7)
        for name, text in variants.items():
            assert normalized_utf8(text) == oracle(text).encode()

            def before(text: str = text) -> str:
                return hmac.digest(KEY, oracle(text).encode("utf-8"), "sha256").hex()

            def now(text: str = text) -> str:
                return fingerprint_bytes(KEY, normalized_utf8(text))

            a, b = best(before, runs), best(now, runs)
            a, b = min(a, best(before, runs)), min(b, best(now, runs))  # alternate: drift falls on both
            label = f"{size // MB} MB" if size >= MB else f"{size // 1024} KB"
            print(f"| {name} | {label} | {a:.3f} | {b:.3f} | {a / b:.1f}x |", flush=True)


def _joined_then_hashed(texts: list[str]) -> tuple[str | None, tuple[str, ...]]:
    """The request's fingerprints as ``gateway/classify.py`` took them before ``Fingerprints``
    (and ``hmac.digest`` per text, before one keyed HMAC was copied)."""
    forms = [n for n in (normalized_utf8(t) for t in texts) if n]
    each = tuple(dict.fromkeys(hmac.digest(KEY, n, "sha256").hex() for n in forms))
    if not forms:
        return None, each
    return (each[0] if len(forms) == 1 else hmac.digest(KEY, b" ".join(forms), "sha256").hex()), each


def _in_one_pass(texts: list[str]) -> tuple[str | None, tuple[str, ...]]:
    prints = Fingerprints(KEY)
    for text in texts:
        prints.add(text)
    return prints.whole, prints.each


def median(fn: Callable[[], object], runs: int) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return sorted(out)[len(out) // 2] * 1000


def requests() -> None:
    print("\n| request (every message) | size | joined, then hashed ms | one pass ms | ratio |")
    print("|---|---:|---:|---:|---:|")
    for size in (1024, 100 * 1024, MB, 3 * MB):
        for ids in (False, True):
            prefix, suffix = chat_body(size, seed=size, identifiers=ids)
            chat = [str(m["content"]) for m in json.loads(prefix + "1" + suffix)["messages"]]
            for name, texts in (("chat" + (" + ids" if ids else ""), chat),
                                ("code" + (" + ids" if ids else ""), [t.replace(". ", ".\n        ") for t in chat])):  # fmt: skip
                assert _joined_then_hashed(texts) == _in_one_pass(texts)
                runs = 300 if size <= 1024 else (30 if size < MB else 9)
                a, b = (
                    median(lambda t=texts: _joined_then_hashed(t), runs),
                    median(lambda t=texts: _in_one_pass(t), runs),
                )
                a, b = (
                    min(a, median(lambda t=texts: _joined_then_hashed(t), runs)),
                    min(b, median(lambda t=texts: _in_one_pass(t), runs)),
                )
                label = f"{size // MB} MB" if size >= MB else f"{size // 1024} KB"
                print(f"| {name} | {label} | {a:.3f} | {b:.3f} | {a / b:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
    requests()
