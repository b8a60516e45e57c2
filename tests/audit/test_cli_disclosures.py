"""`tiergate exposure disclosures`: the stored disclosures in every output format, over a real database."""

from __future__ import annotations

import asyncio
import csv
import io
import json

from click.testing import CliRunner

from audit.disclosure_report import DISCLOSURE_FIELDS
from audit.disclosures import parse_disclosure, save_disclosure
from gateway.cli import main
from tests.audit.conftest import make_settings, open_store, write_cli_config

DISCLOSURE = """title: {title}
reference: {reference}
upstreams: [openai-shared]
window:
  start: 2026-08-27T00:00:00Z
  end: 2026-09-09T23:59:59Z
"""


def _setup(db_url, tmp_path) -> str:
    """A migrated database holding acme's disclosure A-1 and a platform-wide one with an awkward
    title; returns the config file's path."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            for ref, title, tenant in [("A-1", "acme only", "acme"),
                                       ("P-1", '"bell\\a and | pipe"', None)]:  # fmt: skip
                spec = parse_disclosure(DISCLOSURE.format(reference=ref, title=title))
                await save_disclosure(store.engine, spec, "ab" * 32, tenant=tenant)
        finally:
            await store.close()

    asyncio.run(body())
    return write_cli_config(tmp_path, db_url)


def _list(cfg: str, *args: str):
    res = CliRunner().invoke(main, ["exposure", "disclosures", "--config", cfg, *args])
    assert res.exit_code == 0, res.output
    return res


def test_disclosures_in_every_format(db_url, tmp_path):
    """JSON, CSV, Markdown and the table list the same disclosures, newest first, tenant included."""
    cfg = _setup(db_url, tmp_path)
    disclosure = tmp_path / "vendor.yaml"
    disclosure.write_text(DISCLOSURE.format(reference="CLI-1", title="from the cli"))
    assessed = CliRunner().invoke(main, ["exposure", "assess", str(disclosure), "--config", cfg])
    assert assessed.exit_code == 0, assessed.output  # nothing matched: exit 0, and it is stored

    res = _list(cfg, "--format", "json")
    rows = json.loads(res.stdout)
    assert [(r["reference"], r["tenant"]) for r in rows] == [("CLI-1", None), ("P-1", None), ("A-1", "acme")]
    assert list(rows[0]) == list(DISCLOSURE_FIELDS)
    assert rows[2]["window_start"] == "2026-08-27T00:00:00+00:00" and rows[2]["source_sha256"] == "ab" * 32
    assert rows[1]["title"] == "bell\a and | pipe"
    assert res.stderr.strip() == "3 disclosure(s)"

    table = list(csv.reader(io.StringIO(_list(cfg, "--format", "csv").stdout)))
    assert table[0] == list(DISCLOSURE_FIELDS)
    assert [(r[3], r[2]) for r in table[1:]] == [("CLI-1", ""), ("P-1", ""), ("A-1", "acme")]

    md = _list(cfg, "--format", "markdown").stdout.splitlines()
    assert md[0] == "| " + " | ".join(DISCLOSURE_FIELDS) + " |" and md[1].startswith("|---|")
    assert len(md) == 5 and "bell? and \\| pipe" in md[3] and "\a" not in md[3]

    text = _list(cfg).stdout.splitlines()  # the default: a table
    assert text[0].split() == ["id", "loaded_at", "tenant", "reference", "title", "window_start", "window_end"]
    assert [line.split()[0] for line in text[1:]] == [str(r["id"]) for r in rows]
    assert "acme" in text[3] and "A-1" in text[3] and "\a" not in "".join(text)


def test_disclosures_for_one_tenant(db_url, tmp_path):
    """--tenant shows what that tenant's admins see; --limit and --output work; '' is refused."""
    cfg = _setup(db_url, tmp_path)
    globex = json.loads(_list(cfg, "--tenant", "globex", "--format", "json").stdout)
    assert [r["reference"] for r in globex] == ["P-1"]
    acme = json.loads(_list(cfg, "--tenant", "acme", "--format", "json").stdout)
    assert [r["reference"] for r in acme] == ["P-1", "A-1"]
    out = tmp_path / "newest.json"
    res = _list(cfg, "--limit", "1", "--format", "json", "--output", str(out))
    assert res.stdout == "" and [r["reference"] for r in json.loads(out.read_text())] == ["P-1"]
    bad = CliRunner().invoke(main, ["exposure", "disclosures", "--config", cfg, "--tenant", " "])
    assert bad.exit_code == 2 and "--tenant" in bad.output


def test_no_disclosures_yet(sqlite_db, tmp_path):
    """An empty table still prints its header (CSV) or an empty list (JSON)."""

    async def migrate() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        await store.close()

    asyncio.run(migrate())
    args = ["exposure", "disclosures", "--db-url", sqlite_db]
    env = {"TIERGATE_STATE_DIR": str(tmp_path / "state")}
    res = CliRunner().invoke(main, [*args, "--format", "json"], env=env)
    assert res.exit_code == 0 and json.loads(res.stdout) == [], res.output
    res = CliRunner().invoke(main, [*args, "--format", "csv"], env=env)
    assert res.stdout.strip() == ",".join(DISCLOSURE_FIELDS)
