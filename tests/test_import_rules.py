"""The package dependency directions ARCHITECTURE.md states, checked on every import statement.

Each import in the packages' source (lazy ones inside functions included: they are edges all the
same) is resolved to the module it names and held to what its package may import. A few known
back-edges are listed in ``BACK_EDGES``, each with why it is still there; the list may only
shrink: an edge listed that no longer exists fails too, so it always says what is left.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_codebase import packages

ROOT = Path(__file__).resolve().parent.parent

# What each package may import of ours: itself, and these modules (a name covers its submodules;
# "=name" is that module alone: the gateway uses the engine through the names engine/__init__.py
# exports, never its modules). `formats` is the leaf of text formats (SSE, YAML models) that
# every package may read with.
ALLOWED: dict[str, tuple[str, ...]] = {
    "gateway": ("gateway", "tiers", "audit", "=engine", "formats", "migrations"),  # it runs `db upgrade`
    "tiers": ("tiers", "formats"),
    "audit": ("audit", "formats"),
    "engine": ("engine", "formats"),
    "migrations": ("migrations", "audit"),
    "formats": ("formats",),
}

# (importing file, imported module): why it is still there. Remove a line with its edge. Empty
# since issue 17 removed the last ones (engine/__main__.py ran the gateway CLI's engine commands,
# the gateway imported engine.admission, audit/migrate.py imported migrations); a new one needs
# a line here and a reason the lead accepts, or better, the shared piece moved where it belongs.
BACK_EDGES: dict[tuple[str, str], str] = {}


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name: str, root: Path) -> bool:
    base = root.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def imported_modules(path: Path, root: Path = ROOT, ours: frozenset[str] | None = None) -> set[str]:
    """Every module of ours (``root``'s packages) that ``path`` imports, as a dotted name."""
    ours = frozenset(packages()) if ours is None else ours
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base = ".".join(base_parts[: len(base_parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            # `from pkg import sub` imports the submodule `pkg.sub` when there is one
            found.update(f"{target}.{a.name}" for a in node.names if _is_module(f"{target}.{a.name}", root))
    return {name for name in found if name.split(".")[0] in ours}


def edges() -> set[tuple[str, str]]:
    """(file, module) for every import that crosses out of what its package may import."""
    out: set[tuple[str, str]] = set()
    for pkg in packages():
        allowed = ALLOWED[pkg]
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for name in imported_modules(path):
                if not any(name == a.lstrip("=") or (a[0] != "=" and name.startswith(a + ".")) for a in allowed):
                    out.add((path.relative_to(ROOT).as_posix(), name))
    return out


def test_every_package_has_a_rule() -> None:
    assert set(packages()) == set(ALLOWED), "a package without a rule in ALLOWED (or a rule without a package)"


def test_no_new_back_edges() -> None:
    new = sorted(edges() - set(BACK_EDGES))
    assert not new, "imports against ARCHITECTURE.md's directions:\n" + "\n".join(f"{f} -> {m}" for f, m in new)


def test_listed_back_edges_still_exist() -> None:
    gone = sorted(set(BACK_EDGES) - edges())
    assert not gone, "back-edges removed: delete them from BACK_EDGES:\n" + "\n".join(f"{f} -> {m}" for f, m in gone)


def test_the_checker_sees_relative_and_lazy_imports(tmp_path: Path) -> None:
    """The resolver is itself checked: relative imports, submodules named in ``from pkg import``
    and imports inside a function all count; other projects' modules do not."""
    for name in ("tiers/__init__.py", "tiers/types.py", "tiers/sub/__init__.py", "gateway/__init__.py",
                 "gateway/app.py"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    src = tmp_path / "tiers" / "sub" / "probe.py"
    src.write_text("import re2\nfrom ..types import Tier\nfrom . import x\n\ndef f():\n    from gateway import app\n")
    got = imported_modules(src, tmp_path, frozenset({"tiers", "gateway"}))
    assert got == {"tiers.types", "tiers.sub", "gateway", "gateway.app"}
