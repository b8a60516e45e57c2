"""The codebase checks itself: lint, types, formatting and suppressions are failing tests.

The README's test command and ``.ci/run`` run the suite, so these checks fail CI like any other
test. Rules and options live in ``pyproject.toml`` (``[tool.ruff]``, ``[tool.mypy]``); the tools
come pinned with the ``dev`` extra, which the ``test`` extra pulls in.

What is not clean yet is written down in ``tests/codebase_allowance.txt``: a count of findings per
tool and file. A file may not pass its count, and a count that is no longer reached fails too, so
the allowance only ever shrinks and always says what is left (``python -m tests.test_codebase``
lowers the counts that went down and prints the file). ``tiers/`` and ``audit/`` get no allowance.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWANCE = ROOT / "tests" / "codebase_allowance.txt"
# Packages that must be clean of every finding, with no allowance.
STRICT = ("tiers", "audit")
# `ruff format` is enforced on every directory of Python code; hand-aligned tables keep their
# layout with a `fmt: skip` marker.
FORMATTED = ("gateway", "tiers", "audit", "engine", "migrations", "formats", "tests", "bench")
TOOLS = ("ruff", "mypy", "reason")

# A suppression names its error code and then says why: "type: ignore[code]  # why" or
# "noqa" + ": CODE -- why". One that stops after the code is a finding of the tool "reason".
_SUPPRESSION = re.compile(r"#\s*(?:type:\s*ignore\[[^\]]*\]|noqa:\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)(.*)$")
_MYPY_LINE = re.compile(r"^(?P<path>[^:\s]+\.py):\d+(?::\d+)?: error: .*\[(?P<code>[a-z0-9-]+)\]$")


def packages() -> list[str]:
    """The project's top-level packages, as the build declares them."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        include = tomllib.load(f)["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted({p.rstrip("*").rstrip(".") for p in include if (ROOT / p.rstrip("*").rstrip(".")).is_dir()})


def _lint_roots() -> list[str]:
    return [*packages(), "tests", "bench"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def ruff_findings() -> tuple[Counter[str], str]:
    proc = _run("ruff", "check", "--output-format", "json", "--no-fix", *_lint_roots())
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ruff failed to run:\n{proc.stderr}")
    found = json.loads(proc.stdout or "[]")
    counts = Counter(Path(f["filename"]).resolve().relative_to(ROOT).as_posix() for f in found)
    text = "\n".join(
        f"{Path(f['filename']).resolve().relative_to(ROOT).as_posix()}:{f['location']['row']}: {f['code']} {f['message']}"
        for f in found
    )
    return counts, text


def mypy_findings() -> tuple[Counter[str], str]:
    proc = _run("mypy", "--no-pretty", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache"), *packages())
    if proc.returncode not in (0, 1) or "error: " in proc.stderr:
        raise RuntimeError(f"mypy failed to run:\n{proc.stdout}\n{proc.stderr}")
    lines = [m for m in map(_MYPY_LINE.match, proc.stdout.splitlines()) if m]
    counts = Counter(m["path"] for m in lines)
    return counts, "\n".join(m.group(0) for m in lines)


def reason_findings() -> tuple[Counter[str], str]:
    """Suppressions (`type: ignore[...]`, `noqa: ...`) with nothing after the code to say why."""
    counts: Counter[str] = Counter()
    out = []
    for root in _lint_roots():
        for path in sorted((ROOT / root).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for m in _SUPPRESSION.finditer(line):
                    if not m.group(1).strip(" #-:—"):
                        counts[rel] += 1
                        out.append(f"{rel}:{no}: {line.strip()}")
    return counts, "\n".join(out)


def read_allowance() -> dict[tuple[str, str], int]:
    allowed: dict[tuple[str, str], int] = {}
    for no, line in enumerate(ALLOWANCE.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        tool, path, count = line.split()
        assert tool in TOOLS, f"{ALLOWANCE.name}:{no}: unknown tool {tool!r}"
        assert (tool, path) not in allowed, f"{ALLOWANCE.name}:{no}: {tool} {path} listed twice"
        allowed[(tool, path)] = int(count)
    return allowed


def _compare(tool: str, counts: Counter[str], text: str) -> list[str]:
    allowed = {p: n for (t, p), n in read_allowance().items() if t == tool}
    problems = []
    for path in sorted(set(counts) | set(allowed)):
        have, may = counts.get(path, 0), allowed.get(path, 0)
        if have > may:
            detail = "\n".join(line for line in text.splitlines() if line.startswith(path + ":"))
            problems.append(f"{path}: {have} {tool} finding(s), {may} allowed:\n{detail}")
        elif have < may:
            problems.append(f"{path}: {tool} allowance {may} but {have} left: lower it in {ALLOWANCE.name}")
    return problems


def test_allowance_spares_no_strict_package() -> None:
    strict = [f"{t} {p}" for t, p in read_allowance() if p.split("/", 1)[0] in STRICT]
    assert not strict, f"tiers/ and audit/ have no allowance: {strict}"


def test_ruff_check() -> None:
    problems = _compare("ruff", *ruff_findings())
    assert not problems, "\n\n".join(problems)


@pytest.mark.timeout(900)  # a cold cache (every CI run) checks ~200 modules: about 2 minutes here
def test_mypy() -> None:
    problems = _compare("mypy", *mypy_findings())
    assert not problems, "\n\n".join(problems)


def test_every_suppression_says_why() -> None:
    problems = _compare("reason", *reason_findings())
    assert not problems, "\n\n".join(problems)


def test_ruff_format() -> None:
    proc = _run("ruff", "format", "--check", "--diff", *FORMATTED)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("line", "explained"),
    [
        ("x = f()  # type: ignore[arg-type]", False),
        ("x = f()  # type: ignore[arg-type]  # the stub says str; bytes work", True),
        ("import a  # noqa: F401", False),
        ("import a  # noqa: F401, E402 -- re-exported", True),
        ("except Exception:  # noqa: BLE001 — a probe must not stop the server", True),
    ],
)
def test_reason_pattern(line: str, explained: bool) -> None:
    m = _SUPPRESSION.search(line)
    assert m is not None
    assert bool(m.group(1).strip(" #-:—")) is explained


def lower_allowance() -> str:
    """Rewrite the allowance with every count that went down lowered (none raised)."""
    found = {"ruff": ruff_findings()[0], "mypy": mypy_findings()[0], "reason": reason_findings()[0]}
    out = []
    for line in ALLOWANCE.read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if len(fields) == 3:
            tool, path, count = fields
            have = found[tool].get(path, 0)
            if have == 0:
                continue
            if have < int(count):
                line = line.replace(f"{tool} {path} {count}", f"{tool} {path} {have}", 1)
        out.append(line)
    ALLOWANCE.write_text("\n".join(out) + "\n", encoding="utf-8")
    return ALLOWANCE.read_text(encoding="utf-8")


if __name__ == "__main__":
    print(lower_allowance())
