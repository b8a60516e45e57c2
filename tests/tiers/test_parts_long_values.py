"""Parts against the whole scan on values that reach far: key blocks longer than a window, a
Kubernetes secret, JWTs and URLs on one long line, people and birth-date tables, lines blank only
once normalised (zero-width, soft hyphen, filler, their %-escapes), CRLF and U+2028 line ends,
a context word two lines before its value (tiers/parts.py; the companion of test_parts.py)."""

from __future__ import annotations

import os
from typing import Any
from hypothesis import HealthCheck, given, settings, strategies as st
from tiers import Classifier, Content, Segment
from tiers.parts import merge, part_findings

B64 = "MIIEpAIBAAKCAQEA7bqabcdEFGH1234+/Zq9"


@st.composite
def _block(draw: Any) -> list[str]:
    n = draw(st.integers(0, 9999))
    kind = draw(
        st.sampled_from(["pem", "k8s", "addr", "people", "jwt", "url", "prose", "blankish", "ctx", "csvp", "cert"])
    )
    if kind == "pem":
        k = draw(st.integers(5, 60))
        return [
            "-----BEGIN PRIVATE KEY-----",
            *[(B64 * 3)[i % 7 : i % 7 + 64] for i in range(k)],
            "-----END PRIVATE KEY-----",
        ]
    if kind == "cert":
        k = draw(st.integers(5, 30))
        return [
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            *[("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ" + str(i) * 22)[:70] for i in range(k)],
            "-----END OPENSSH PRIVATE KEY-----",
        ]
    if kind == "k8s":
        return [
            "apiVersion: v1",
            "kind: Secret",
            "metadata:",
            "  name: db",
            "data:",
            f"  password: {'c3VwZXJzZWNyZXRQYXNzd29yZDEyMw' * draw(st.integers(1, 40))}==",
        ]
    if kind == "addr":
        return ["Hans Müller", f"Hauptstraße {1 + n % 200}", f"{10000 + n % 89999} Berlin", "Germany"]
    if kind == "people":
        return ["name;email;phone"] + [
            f"Anna Lehmann;anna{n + r}@mailbox.de;+49 30 {1000000 + n + r}" for r in range(draw(st.integers(1, 40)))
        ]
    if kind == "csvp":
        return ["Vorname,Nachname,Geburtsdatum"] + [
            f"Anna,Lehmann,{1 + r % 28:02d}.03.1962" for r in range(draw(st.integers(1, 60)))
        ]
    if kind == "jwt":
        return [
            f"token: eyJhbGciOiJIUzI1NiJ9.{'eyJzdWIiOiIxMjM0NTY3ODkwIn0' * draw(st.integers(1, 50))}.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
        ]
    if kind == "url":
        return [
            f"see https://user:pa55w0rd{n}@files.corp.example.com/"
            + "a/" * draw(st.integers(1, 400))
            + f"?email=jane{n}%40mailbox.de"
        ]
    if kind == "blankish":
        return [draw(st.sampled_from(["", "\u200b", " ", "\t", "%E2%80%8B", "\u00ad", "\u3164", "\r"]))]
    if kind == "ctx":
        return ["social security number:", "", f"{100 + n % 500}-{10 + n % 89}-{1000 + n}"]
    return ["The quality review of the process data shows that the team will improve the plan."] * draw(
        st.integers(1, 20)
    )


@st.composite
def _content(draw: Any) -> Content:
    segs: list[Segment] = []
    if draw(st.booleans()):
        segs.append(
            Segment(
                ("messages", 0, "content"), draw(st.sampled_from(["password", "ssn", "Vorname,Nachname,Geburtsdatum"]))
            )
        )
    sep = draw(st.sampled_from(["\n", "\r\n", "\n", "\u2028"]))
    for m in range(draw(st.integers(1, 2))):
        lines = [line for b in draw(st.lists(_block(), min_size=1, max_size=30)) for line in b]
        segs.append(Segment(("messages", m + 1, "content"), sep.join(lines) + "\n"))
    return Content(tuple(segs))


@settings(
    max_examples=int(os.environ.get("PARTS_EXAMPLES", "40")), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(
    content=_content(),
    parts=st.integers(2, 5),
    split_at=st.sampled_from([600, 1500, 4000]),
    overlap=st.sampled_from([420, 800, 3000]),
    max_back=st.sampled_from([0, 300, 1 << 20]),
)
def test_parts_find_far_reaching_values_as_the_whole_scan(
    clf: Classifier, content: Content, parts: int, split_at: int, overlap: int, max_back: int
) -> None:
    whole = clf.findings(content)
    cut: dict[str, Any] = {"split_at": split_at, "overlap": overlap, "max_back": max_back}
    m = merge([part_findings(clf, content, k, parts, **cut) for k in range(parts)])
    assert m == whole
    assert clf.classify(content, found=m) == clf.classify(content)
