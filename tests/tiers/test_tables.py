"""The recognizers' tables and their snapshot (``tiers/tables.py``): a snapshot read back in a
process of another hash seed gives the very tables a fresh derivation gives, and a snapshot that
is damaged anywhere, of another key or of other tables is refused whole.

Real tables of the installed packages; fresh processes where a process's own state would hide
what is tested (a table this process holds is never replaced)."""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig, tables

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def blob() -> bytes:
    Classifier(TiersConfig())  # every table a classifier reads, read
    return tables.snapshot("k")


# a digest of each table as its content (sorted), the same in every process whatever its hash seed
_DIGESTS = """
def digests(values):
    import hashlib, json
    def canon(v):
        if isinstance(v, (set, frozenset)):
            return sorted(v)
        if isinstance(v, dict):
            return sorted(v.items())
        if isinstance(v, tuple):
            return [canon(x) for x in v]
        raise TypeError(type(v))
    return {n: hashlib.sha256(json.dumps(canon(v)).encode()).hexdigest() for n, v in values.items()}
"""


def _run(code: str, seed: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                         timeout=240, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return result


def test_a_snapshot_read_in_another_process_is_what_deriving_gives(tmp_path: Path) -> None:
    kept = tmp_path / "tables.bin"
    first = _run(
        _DIGESTS
        + f"""
import json
from pathlib import Path
from tiers import Classifier, TiersConfig, tables
Classifier(TiersConfig())
Path({str(kept)!r}).write_bytes(tables.snapshot("key"))
print(json.dumps(digests({{n: e.value for n, e in tables._tables.items()}})))
""",
        seed="1",
    )
    second = _run(
        _DIGESTS
        + f"""
import json
from pathlib import Path
from tiers import Classifier, TiersConfig, tables
loads = []
for name, entry in tables._tables.items():
    entry.load = (lambda real, name: lambda: loads.append(name) or real())(entry.load, name)
tables.preload(Path({str(kept)!r}).read_bytes(), "key")
Classifier(TiersConfig())
held = {{n: e.value for n, e in tables._tables.items()}}
derived = {{n: e.load() for n, e in tables._tables.items()}}
loads_at_build = [n for n in loads if loads.count(n) > 1]
assert all(type(held[n]) is type(derived[n]) for n in held), "a table came back as another type"
print(json.dumps({{"loads": loads_at_build, "held": digests(held), "derived": digests(derived)}}))
""",
        seed="2",
    )
    assert second["loads"] == []  # the build read no table: every one came from the snapshot
    assert second["held"] == second["derived"] == first
    assert set(first) == set(tables.sources())


def test_a_table_this_process_holds_is_never_replaced(blob: bytes) -> None:
    before = {name: entry.value for name, entry in tables._tables.items()}
    tables.preload(blob, "k")
    assert all(tables._tables[name].value is value for name, value in before.items())


def test_another_key_or_other_tables_are_refused(blob: bytes) -> None:
    with pytest.raises(tables.TablesError, match="other code"):
        tables.preload(blob, "another key")
    payload = marshal.dumps({"no-such-table": ("frozenset", ("a",))})
    foreign = marshal.dumps(("k", hashlib.sha256(payload).digest(), payload))
    with pytest.raises(tables.TablesError, match="other tables"):
        tables.preload(foreign, "k")
    payload = marshal.dumps({"surnames": ("list", ["a"])})
    odd = marshal.dumps(("k", hashlib.sha256(payload).digest(), payload))
    with pytest.raises(tables.TablesError):
        tables.preload(odd, "k")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_snapshot_is_refused_whole(blob: bytes, data: st.DataObject) -> None:
    where = data.draw(st.integers(0, len(blob) - 1))
    how = data.draw(st.sampled_from(["cut", "flip", "drop"]))
    if how == "cut":
        damaged = blob[:where]
    elif how == "flip":
        damaged = blob[:where] + bytes([blob[where] ^ data.draw(st.integers(1, 255))]) + blob[where + 1 :]
    else:
        damaged = blob[:where] + blob[where + 1 :]
    try:  # a flip of marshal's reference flag (0x80 of a type byte) reads back the same value
        unchanged = marshal.loads(damaged) == marshal.loads(blob)
    except (ValueError, EOFError, TypeError):
        unchanged = False
    assume(not unchanged)
    with pytest.raises(tables.TablesError):
        tables.preload(damaged, "k")


def test_two_tables_of_one_name_are_refused() -> None:
    with pytest.raises(tables.TablesError, match="two tables"):
        tables.table("surnames", source="names")(lambda: frozenset())
