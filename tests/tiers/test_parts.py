"""A request read in parts (tiers/parts.py) has the findings of one whole scan, span for span and
in the same order, however it is cut.

The texts are generated: prose, code, CSV tables whose header lies pieces back (a company and a
date-of-birth column), key blocks of several lines, ``.netrc`` entries, percent-escaped and
invisible-character-spelled identifiers, blank lines; cut into pieces far smaller than in
production (so that many cuts fall among them, and between a value and its context) with a
window reaching less far, and the head-of-block copy forced by a small ``max_back``.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, Content, Segment
from tiers.parts import merge, part_findings, plan

_PROSE = [
    "The quality review of the process data shows that the team will improve the plan.",
    "Results from each site are compared with last year before the steering group meets.",
    "def handler(event, context):",
    "    user = event.get('user')  # look up the caller",
    "    return {'status': 200, 'items': [1, 2, 3]}",
    "LOG_LEVEL=info",
    "",
]


@st.composite
def _block(draw: Any) -> list[str]:
    n = draw(st.integers(0, 9999))
    kind = draw(st.sampled_from(["prose", "table", "key", "netrc", "ids", "ids", "context", "invisible"]))
    if kind == "invisible":  # a line blank once normalised ends a block for the recognizers
        return [draw(st.sampled_from(["\u200b", "%E2%80%8B", "\u0301\u200d", "\r"])), "id,company,date of birth"]
    if kind == "prose":
        return draw(st.lists(st.sampled_from(_PROSE), min_size=1, max_size=12))
    if kind == "table":
        rows = draw(st.integers(1, 120))
        companies = ["Hartwell Industries", "Keller Brothers", "Acme Rocket Works"]
        return ["id,company,date of birth"] + [
            f"{n + r},{companies[r % 3]},{1 + r % 28:02d}.{1 + r % 12:02d}.19{50 + r % 40}" for r in range(rows)
        ]
    if kind == "key":
        body = [
            ("MIIEpAIBAAKCAQEA7bq" + "abcdEFGH1234+/" * 4)[:64]
            for _ in range(draw(st.integers(1, 5)) * draw(st.sampled_from([1, 1, 20])))
        ]
        return ["-----BEGIN RSA PRIVATE KEY-----", *body, "-----END RSA PRIVATE KEY-----"]
    if kind == "netrc":
        return [f"machine api{n}.corp", "login bob", f"password s3cr3tPw{n}x"]
    if kind == "context":  # a weak pattern's context word on the line before it
        return ["employee SSN", f"{100 + n % 500}-{10 + n % 89}-{1000 + n}"]
    ids = [
        f"contact: jane.doe{n}@example-mail.com",
        f"mail to: jane.doe{n}%40example-mail.com",
        f"call +49 30 {1000000 + n}",
        f"DB_PASSWORD=Zx9!mQ2#vL{n}p",
        "IBAN DE41 2605 0000 1562 8071 31",
        f"Dr. Hans Müller visited site {n}",
        f"host db-{n}.corp.example.com answered",
        f"wallet key jane\u200b.doe{n}@example-mail.com",
    ]
    return draw(st.lists(st.sampled_from(ids), min_size=1, max_size=4))


@st.composite
def _content(draw: Any) -> Content:
    segments: list[Segment] = []
    if draw(st.booleans()):
        segments.append(Segment(("messages", 0, "role"), draw(st.sampled_from(["ssn", "user", "password"]))))
    for m in range(draw(st.integers(1, 2))):
        lines = [line for block in draw(st.lists(_block(), min_size=1, max_size=40)) for line in block]
        segments.append(Segment(("messages", m + 1, "content"), "\n".join(lines) + "\n"))
    if draw(st.booleans()):
        segments.append(Segment(("metadata", "note"), "ask jane.doe@example-mail.com"))
    return Content(tuple(segments))


@settings(
    max_examples=int(os.environ.get("PARTS_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    content=_content(),
    parts=st.integers(2, 4),
    split_at=st.sampled_from([600, 1500, 4000]),
    overlap=st.sampled_from([420, 800]),
    max_back=st.sampled_from([0, 300, 1 << 20]),
)
def test_parts_find_what_the_whole_scan_finds(
    clf: Classifier, content: Content, parts: int, split_at: int, overlap: int, max_back: int
) -> None:
    whole = clf.findings(content)
    cut = {"split_at": split_at, "overlap": overlap, "max_back": max_back}
    shares = [part_findings(clf, content, k, parts, **cut) for k in range(parts)]
    assert merge(shares) == whole
    # and what the gateway makes of it: the decision, and what a shared vendor receives
    decision = clf.classify(content, found=merge(shares))
    assert decision == clf.classify(content)
    if decision.findings:
        assert clf.strip(content, decision) == clf.strip(content, clf.classify(content))


def test_long_segments_are_cut_into_every_part(clf: Classifier) -> None:
    """The property above is not vacuous: a long text is really cut, every share gets a piece,
    the pieces tile the text, and a head-of-block copy is made where the block starts too far back."""
    text = "id,company,date of birth\n" + "".join(f"{r},Keller Brothers,14.03.1962\n" for r in range(400))
    content = Content((Segment(("messages", 0, "content"), text),))
    shares = plan(content, 3, split_at=2000, overlap=500, max_back=100)
    pieces = sorted((u for share in shares for u in share), key=lambda u: u.lo)
    assert all(shares) and len(pieces) == 3
    assert [u.lo for u in pieces][0] == 0 and pieces[-1].hi == len(text)
    assert all(a.hi == b.lo for a, b in zip(pieces, pieces[1:]))
    assert [bool(u.head) for u in pieces] == [False, True, True]
    found = merge([part_findings(clf, content, k, 3, split_at=2000, overlap=500, max_back=100) for k in range(3)])
    assert found == clf.findings(content)
    assert sum(f.recognizer == "CompanyCellRecognizer" for f in found) == 400  # every row, under the far header


def test_a_share_that_fails_is_a_reason_not_an_exception(clf: Classifier) -> None:
    """``Classifier.part_findings`` never raises: a share that cannot be scanned says why (the
    request then fails closed with that reason), naming the failure, never the text."""

    class Broken:
        segments = property(lambda self: (Segment(("m",), 12345),))  # type: ignore[arg-type]  # not a string
        opaque = ()

    why = clf.part_findings(Broken(), 0, 2)  # type: ignore[arg-type]  # deliberately malformed content
    assert isinstance(why, str) and "during analysis" in why
    decision = clf.classify(Content(()), found=why)
    assert decision.failed_closed and int(decision.tier) == 3 and why in decision.reasons[0]


def test_a_line_blank_once_normalised_ends_the_block_of_a_far_window(clf: Classifier) -> None:
    """A line of only a zero-width space is blank to the recognizers (they read normalised text):
    the company table below it has its own header. A window far below read after the first
    table's header instead, and its rows' companies went out unstripped."""
    rows = "".join(f"{r},Keller Brothers,14.03.1962\n" for r in range(400))
    for blank in ("\u200b", "%E2%80%8B"):
        text = f"id,name,notes\n1,x,y\n{blank}\nid,company,date of birth\n" + rows
        content = Content((Segment(("messages", 0, "content"), text),))
        cut: dict[str, Any] = {"split_at": 2000, "overlap": 500, "max_back": 100}
        pieces = [u for share in plan(content, 3, **cut) for u in share]
        assert sum(bool(u.head) for u in pieces) == 2  # the far windows really read after a copy
        found = merge([part_findings(clf, content, k, 3, **cut) for k in range(3)])
        assert found == clf.findings(content)
        assert sum(f.recognizer == "CompanyCellRecognizer" for f in found) == 400


def test_a_key_block_longer_than_the_window_is_found_whole(clf: Classifier) -> None:
    """A key block's body has no length limit: one that runs past the window of the piece it
    starts in was reported up to the window's end, and the rest of the key went out as written."""
    body = "\n".join(("MIIEpAIBAAKCAQEA7bqabcdEFGH1234+/Zq9" * 3)[r % 7 : r % 7 + 64] for r in range(60))
    text = "notes\n" * 40 + f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n" + "tail line\n" * 200
    content = Content((Segment(("messages", 0, "content"), text),))
    cut: dict[str, Any] = {"split_at": 1500, "overlap": 420, "max_back": 1 << 20}
    found = merge([part_findings(clf, content, k, 3, **cut) for k in range(3)])
    assert found == clf.findings(content)
    assert [text[f.start : f.end].endswith("-----END PRIVATE KEY-----") for f in found] == [True]


def test_an_invisible_first_line_after_a_lead_ends_the_block(clf: Classifier) -> None:
    """Read after its key (a lead, which ends in a blank line), a message whose first line is
    empty once normalised starts its table on the next line; a far window read under that line."""
    rows = "".join(f"{r},Keller Brothers,14.03.1962\n" for r in range(60))
    for first in ("", "\u200b"):
        text = f"{first}\nid,company,date of birth\n" + rows
        content = Content((Segment(("messages", 0, "role"), "ssn"), Segment(("messages", 0, "content"), text)))
        cut: dict[str, Any] = {"split_at": 600, "overlap": 420, "max_back": 0}
        found = merge([part_findings(clf, content, k, 2, **cut) for k in range(2)])
        assert found == clf.findings(content)
        assert sum(f.recognizer == "CompanyCellRecognizer" for f in found) == 60


def _dense(lines: int) -> Content:
    """One long segment of identifiers, one per line: every share holds thousands of values."""
    text = "".join(f"write to jane.doe{n}@example-mail.com today\n" for n in range(lines))
    return Content((Segment(("messages", 0, "content"), text),))


def test_every_share_of_dense_values_costs_about_the_same(clf: Classifier) -> None:
    """Each value of a piece once looked at the rest of the piece's window (a slice per value:
    quadratic in a piece, 0.8 s against 0.33 s for the scan of a 1.5 MB share of 6,000 values),
    except in the last piece, which has no further text to read. The shares of an evenly dense
    text hold as many values each and now cost about as much (before: three times as much)."""
    import time

    content = _dense(40_000)

    def cpu(part: int) -> float:
        best = float("inf")
        for _ in range(3):
            t = time.thread_time()
            found = part_findings(clf, content, part, 2)
            best = min(best, time.thread_time() - t)
        assert len(found) > 15_000  # the share really holds its half of the values
        return best

    first, second = cpu(0), cpu(1)
    assert first < 1.6 * second + 0.02 and second < 1.6 * first + 0.02, (first, second)


def test_no_piece_shows_its_head_line_in_a_repr() -> None:
    """A piece carries a copy of its block's first line (prompt text): never in a repr."""
    lines = ["name,email,card", *(f"row {n},jane.doe{n}@example-mail.com,x" for n in range(40_000))]
    content = Content((Segment(("messages", 0, "content"), "\n".join(lines)),))
    pieces = [p for share in plan(content, 2, max_back=0) for p in share]
    assert any(p.head for p in pieces)  # heads were copied
    assert not any("email" in repr(p) or "jane" in repr(p) for p in pieces)
