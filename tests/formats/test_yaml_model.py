"""The one YAML loader: a key given twice at any depth is refused on its line; every error names
the file and the line; values never appear in messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict

from formats.yaml_model import YamlModelError, load_model, load_model_file, read_yaml

_keys = st.text("abcdefghij_", min_size=1, max_size=5)
_scalars = st.integers(-1000, 1000) | st.text("xyz -:#", max_size=6)
_trees = st.recursive(
    st.dictionaries(_keys, _scalars, min_size=1, max_size=3),
    lambda inner: st.dictionaries(_keys, inner | st.lists(inner, min_size=1, max_size=3), min_size=1, max_size=3),
    max_leaves=12,
)


def _mappings(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every mapping in the tree."""
    if isinstance(value, dict):
        return [path, *(p for k, v in value.items() for p in _mappings(v, path + (k,)))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _mappings(v, path + (i,))]
    return []


def _emit(value: Any, indent: int, path: tuple[Any, ...], lines: list[str], dup: tuple[tuple[Any, ...], str] | None,
          found: list[int]) -> None:  # fmt: skip
    """Block-style YAML, keys and strings quoted as JSON; with ``dup``, the mapping at that path
    gets one of its keys again at its end (its line recorded in ``found``)."""
    pad = " " * indent
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (dict, list)):
                lines.append(f"{pad}{json.dumps(k)}:")
                _emit(v, indent + 2, path + (k,), lines, dup, found)
            else:
                lines.append(f"{pad}{json.dumps(k)}: {json.dumps(v)}")
        if dup is not None and dup[0] == path:
            lines.append(f"{pad}{json.dumps(dup[1])}: 0")
            found.append(len(lines))
    else:
        for i, item in enumerate(value):
            lines.append(f"{pad}-")
            _emit(item, indent + 2, path + (i,), lines, dup, found)


@settings(max_examples=300, deadline=None)
@given(_trees, st.data())
def test_a_duplicated_key_at_any_depth_is_refused_on_its_line(tree: dict[str, Any], data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(_mappings(tree)))
    node: Any = tree
    for step in target:
        node = node[step]
    key = data.draw(st.sampled_from(sorted(node)))
    lines: list[str] = []
    found: list[int] = []
    _emit(tree, 0, (), lines, (target, key), found)
    with pytest.raises(YamlModelError) as err:
        read_yaml("\n".join(lines) + "\n", source="t.yaml")
    (line,) = found
    assert err.value.line == line
    assert str(err.value).startswith(f"t.yaml:{line}: ") and f"duplicate key {key!r}" in str(err.value)


@settings(max_examples=150, deadline=None)
@given(_trees)
def test_without_duplicates_the_tree_reads_back(tree: dict[str, Any]) -> None:
    lines: list[str] = []
    _emit(tree, 0, (), lines, None, [])
    assert read_yaml("\n".join(lines) + "\n", source="t.yaml").data == tree


class _Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    port: int


class _Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    items: list[_Inner]


def test_validation_errors_name_file_line_and_key_never_the_value() -> None:
    text = "name: x\nitems:\n  - port: 1\n  - port: hunter2-secret\n    colour: red\n"
    with pytest.raises(YamlModelError) as err:
        load_model(_Outer, text, source="c.yaml")
    assert [(p.line, p.where) for p in err.value.problems] == [(4, "items.1.port"), (5, "items.1.colour")]
    assert "hunter2" not in str(err.value) and str(err.value).startswith("c.yaml:4: items.1.port: ")


def test_syntax_errors_and_unreadable_files_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(YamlModelError, match=r"^s.yaml:2: not valid YAML"):
        read_yaml("a: 1\nb: ]\n", source="s.yaml")
    with pytest.raises(YamlModelError, match="cannot read the file"):
        load_model_file(_Outer, tmp_path / "missing.yaml")


def test_merge_keys_may_be_overridden() -> None:
    doc = read_yaml("base: &b {port: 1, name: a}\nother:\n  <<: *b\n  port: 2\n", source="m.yaml")
    assert doc.data["other"] == {"port": 2, "name": "a"}
