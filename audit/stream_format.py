"""The SIEM event stream's line format: one signed, numbered JSON object per line.

    {"mac":"…","n":7,"prev":"<mac of line 6>","record":{…},"seq":123,"stream":"siem","type":"outcome",…}

``mac`` is HMAC-SHA256 under the stream key over the line's canonical JSON without ``mac``
(sorted keys, no spaces, UTF-8), and that JSON holds ``prev``, the previous line's mac: every line
vouches for the one before it. ``n`` counts the stream's lines from 1 without a hole, so a receiver
sees a deleted line (``n`` jumps and ``prev`` no longer matches), an edited one (its mac fails) and
a reordered one. ``seq`` is the audit chain's sequence number of the record, ``chain_hash`` its
hash there: a line can be checked against the log itself (``tiergate audit verify``).

Delivery is at least once: after a crash a line may come again, byte for byte; the verifier
reports such repeats apart from tampering. A syslog receiver's framing in front of the JSON (RFC
5424 header) is skipped.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["StreamReport", "StreamSigner", "canonical", "verify_lines"]

VERSION = 1


def canonical(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _mac(key: bytes, body: dict[str, Any]) -> str:
    return hmac.new(key, canonical(body), hashlib.sha256).hexdigest()


@dataclass
class StreamSigner:
    """Signs the next line of one stream; ``n`` and ``prev`` are where the stream left off."""

    key: bytes
    stream: str
    n: int = 0
    prev: str = ""

    def sign(self, body: dict[str, Any]) -> bytes:
        line = {**body, "v": VERSION, "stream": self.stream, "n": self.n + 1, "prev": self.prev}
        mac = _mac(self.key, line)
        self.n, self.prev = self.n + 1, mac
        return canonical({**line, "mac": mac})


@dataclass
class StreamReport:
    lines: int = 0
    first_n: int | None = None
    last_n: int | None = None
    bad_signature: list[int] = field(default_factory=list)  # line numbers in the file (1-based)
    unreadable: list[int] = field(default_factory=list)
    missing: list[tuple[int, int]] = field(default_factory=list)  # ranges of n that never came
    out_of_order: list[int] = field(default_factory=list)
    broken_link: list[int] = field(default_factory=list)  # prev is not the previous line's mac
    repeated: int = 0  # exact redeliveries (at least once): not a failure
    gaps: list[dict[str, Any]] = field(default_factory=list)  # audit records lost before streaming

    @property
    def ok(self) -> bool:
        return not (self.bad_signature or self.unreadable or self.missing or self.out_of_order or self.broken_link)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "lines": self.lines, "first_n": self.first_n, "last_n": self.last_n,
                "bad_signature": self.bad_signature, "unreadable": self.unreadable,
                "missing": [list(m) for m in self.missing], "out_of_order": self.out_of_order,
                "broken_link": self.broken_link, "repeated": self.repeated, "gaps": self.gaps}  # fmt: skip


def _json_part(raw: str) -> str:
    # A syslog receiver may keep the RFC 5424 header in front; the JSON starts at the first "{".
    start = raw.find("{")
    return raw[start:] if start >= 0 else raw


def verify_lines(lines: Any, key: bytes, *, first_n: int = 1) -> StreamReport:
    """Check a received stream (an iterable of lines, in the order received). ``first_n``: the
    number its first line must have (1: the stream's beginning; a later file of a rotated
    capture starts where the previous one ended), so dropping the head shows too."""
    report = StreamReport()
    last: dict[str, Any] | None = None
    seen: dict[int, str] = {}
    for number, raw in enumerate(lines, start=1):
        raw = raw.strip()
        if not raw:
            continue
        report.lines += 1
        try:
            line = json.loads(_json_part(raw))
            n, mac = line["n"], line.pop("mac")
            if not isinstance(n, int) or not isinstance(mac, str):
                raise ValueError
        except (ValueError, KeyError, TypeError, AttributeError):
            report.unreadable.append(number)
            continue
        if not hmac.compare_digest(_mac(key, line), mac):
            report.bad_signature.append(number)
            continue
        if seen.get(n) == mac:
            report.repeated += 1
            continue
        if line.get("type") == "gap":
            report.gaps.append(line.get("record", {}))
        if report.first_n is None:
            report.first_n = n
            if n > first_n:
                report.missing.append((first_n, n - 1))
            elif n < first_n:
                report.out_of_order.append(number)
            if n == 1 and line.get("prev") != "":
                report.broken_link.append(number)
        elif last is not None:
            if n <= last["n"]:
                report.out_of_order.append(number)
                continue
            if n > last["n"] + 1:
                report.missing.append((last["n"] + 1, n - 1))
            elif line.get("prev") != last["mac"]:
                report.broken_link.append(number)
        seen[n] = mac
        last = {"n": n, "mac": mac}
        report.last_n = n
    return report
