"""`tiergate scan` on a generated tree: tiers, entity counts and line numbers per file, values
never printed, `.git` and binary files skipped, stripped text on request, three formats, stdin,
exit status by the highest tier."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from gateway.cli import main

PASSWORD = "Zx9!mQ2#vL7p"
_RND = random.Random(3)
TOKEN = "ghp_" + "".join(_RND.choice("abcdefghijkmnopqrstuvwxyzABCDEFGH0123456789") for _ in range(36))


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "src" / "app.py").write_text("def add(a, b):\n    return a + b\n", "utf-8")
    (root / "src" / "settings.env").write_text(
        f"# settings\nDEBUG=1\nPOSTGRES_PASSWORD={PASSWORD}\nAPI_TOKEN={TOKEN}\n", "utf-8"
    )
    (root / "notes.md").write_text("Refund to IBAN DE41 2605 0000 1562 8071 31 please.\n", "utf-8")
    (root / ".git" / "config").write_text(f"token = {TOKEN}\n", "utf-8")
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00" + TOKEN.encode())
    for i in range(30):  # enough files for a progress bar to matter
        (root / "src" / f"mod{i}.py").write_text(f"VALUE_{i} = {i}\n", "utf-8")
    return root


def _invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]  # a test helper; its parameters say enough
    return CliRunner().invoke(main, ["scan", *args], input=input, catch_exceptions=False)


def test_json_report_per_file(tree: Path) -> None:
    """Each text file has its tier, entity counts and line numbers; .git and binaries are not
    read; the exit status is the highest tier; no value appears in the output."""
    result = _invoke(str(tree), "--format", "json", "--no-progress")
    assert result.exit_code == 3, result.output
    assert PASSWORD not in result.output and TOKEN not in result.output
    doc = json.loads(result.stdout)
    files = {Path(f["path"]).relative_to(tree).as_posix(): f for f in doc["files"]}
    assert ".git/config" not in files and "logo.png" not in files
    assert [s["why"] for s in doc["skipped"]] == ["binary"]
    env = files["src/settings.env"]
    assert env["tier"] == 2 and env["shared_vendor"] == "stripped"
    assert env["findings"] == [{"entity": "SECRET", "count": 2, "lines": [3, 4]}]
    assert files["notes.md"]["tier"] == 3 and files["notes.md"]["shared_vendor"] == "refused"
    assert files["src/app.py"] == {**files["src/app.py"], "tier": 1, "findings": [], "shared_vendor": "as is"}
    assert doc["summary"]["files"] == 33 and doc["summary"]["highest_tier"] == 3


def test_show_stripped_text_and_markdown(tree: Path) -> None:
    """``--show-stripped`` prints what a shared vendor would get: placeholders, no values, the
    rest byte for byte; a refused file's text is not printed."""
    env = tree / "src" / "settings.env"
    for fmt in ("text", "markdown"):
        result = _invoke(str(env), str(tree / "notes.md"), "--format", fmt, "--show-stripped", "--no-progress")
        assert result.exit_code == 3
        out = result.stdout
        assert PASSWORD not in out and TOKEN not in out and "DE41" not in out
        assert "POSTGRES_PASSWORD=<SECRET_1>" in out and "API_TOKEN=<SECRET_2>" in out and "DEBUG=1" in out
    assert "| file | tier | shared vendor | findings |" in out
    text = _invoke(str(env), "--no-progress").stdout
    assert "tier 2" in text and "SECRET x2 (lines 3, 4)" in text


def test_stdin_and_exit_status(tree: Path) -> None:
    """``-`` reads stdin; a clean text exits 1, a secret 2."""
    assert _invoke("-", input="nothing to see here\n").exit_code == 1
    result = _invoke("-", "--format", "json", input=f"curl -u deploy:{PASSWORD} https://ci\n")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["files"][0]["findings"] == [{"entity": "SECRET", "count": 1, "lines": [1]}]


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    """A path that does not exist exits 4 (1–3 are tiers), naming the path."""
    result = CliRunner().invoke(main, ["scan", str(tmp_path / "nope")])
    assert result.exit_code == 4 and "nope" in result.output


def test_progress_bar_on_request(tree: Path) -> None:
    """``--progress`` draws the bar on stderr, never on stdout (the report stays parseable)."""
    result = CliRunner().invoke(main, ["scan", str(tree), "--format", "json", "--progress"], catch_exceptions=False)
    json.loads(result.stdout)
    assert "scanning" in result.stderr
