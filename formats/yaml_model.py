"""YAML files of pydantic models: the one loader behind the policy, disclosures, the engine
config, recognizer files and the gateway's settings.

- A key given twice in one mapping, at any depth, is refused naming the line of the second one
  (PyYAML alone keeps the last silently: a policy or a config would then say two things and obey
  one). A merge key's (``<<``) entries may be overridden; that is what merging is for.
- Every error names the file and the line: a YAML syntax error where PyYAML stopped, a
  validation error at the key it is about (or the nearest key above it).
- Messages never quote a value (a value may be a secret or a prompt): keys, lines and
  pydantic's message only.

:func:`read_yaml` / :func:`read_yaml_file` give the document (data plus the line of every key)
for a caller that validates in its own way (the settings, merged with the environment);
:meth:`YamlDocument.validate`, :func:`load_model` and :func:`load_model_file` validate a model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

__all__ = [
    "Problem",
    "YamlDocument",
    "YamlModelError",
    "load_model",
    "load_model_file",
    "read_yaml",
    "read_yaml_file",
]

M = TypeVar("M", bound=BaseModel)
_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a document: where (line, dotted key path) and what."""

    line: int | None
    where: str | None
    message: str


class YamlModelError(ValueError):
    """A YAML file that cannot be read as its model; ``str()`` gives one ``file:line: key: what``
    line per problem."""

    def __init__(self, source: str, problems: Sequence[Problem]) -> None:
        self.source = source
        self.problems = tuple(problems)
        super().__init__("\n".join(self._render(p) for p in self.problems))

    @property
    def line(self) -> int | None:
        """The line of the first problem."""
        return self.problems[0].line if self.problems else None

    def _render(self, p: Problem) -> str:
        head = f"{self.source}:{p.line}" if p.line is not None else self.source
        return f"{head}: {p.where}: {p.message}" if p.where else f"{head}: {p.message}"


def _path_text(path: Sequence[Any]) -> str:
    return ".".join(str(p) for p in path) or "(document)"


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key that a mapping already holds."""

    def __init__(self, stream: str | bytes, source: str) -> None:
        super().__init__(stream)
        self.source = source
        self.paths: dict[int, tuple[str, ...]] = {}  # node id -> its key path (for messages)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: PyYAML's own error names it below
                continue
            if first is not None:
                where = _path_text(self.paths.get(id(node), ()))
                raise YamlModelError(self.source, [Problem(line, where if where != "(document)" else None,
                                                           f"duplicate key {key!r} (first on line {first})")])  # fmt: skip
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _walk(node: yaml.Node, path: tuple[str, ...], lines: dict[tuple[str, ...], int],
          paths: dict[int, tuple[str, ...]]) -> None:  # fmt: skip
    paths.setdefault(id(node), path)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
                continue
            key = path + (str(key_node.value),)
            lines.setdefault(key, key_node.start_mark.line + 1)  # a key's errors: the key's own line
            _walk(value_node, key, lines, paths)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            lines.setdefault(path + (str(i),), item.start_mark.line + 1)
            _walk(item, path + (str(i),), lines, paths)


@dataclass(frozen=True)
class YamlDocument:
    """A parsed document: its data, where it came from, and the line of every key and item."""

    data: Any
    source: str
    lines: Mapping[tuple[str, ...], int] = field(default_factory=dict)

    def line_of(self, loc: Sequence[Any], *, root: bool = True) -> int | None:
        """The line of ``loc`` or of the nearest key above it; the document's first line when
        nothing matches (None instead with ``root=False``, or for data that came from no text)."""
        path = tuple(str(p) for p in loc)
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return self.lines.get(()) if root else None

    def problems(self, exc: ValidationError, *, root: bool = True) -> list[Problem]:
        """Each of pydantic's errors with its key path and line (never the input value)."""
        out = []
        for err in exc.errors(include_url=False, include_input=False):
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            msg = str(err["msg"]).removeprefix("Value error, ")
            out.append(Problem(self.line_of(loc, root=root), _path_text(loc), msg))
        return out

    def validate(self, model: type[M], data: Any = ..., *, context: Any = None) -> M:
        """``model`` from the document (or from ``data``, the document's data as the caller
        prepared it, e.g. paths made absolute); :class:`YamlModelError` names file and lines."""
        try:
            return model.model_validate(self.data if data is ... else data, context=context)
        except ValidationError as exc:
            raise YamlModelError(self.source, self.problems(exc)) from None


def read_yaml(text: str | bytes, *, source: str) -> YamlDocument:
    """Parse one YAML document, refusing duplicate keys. An empty document's data is None."""
    loader = _UniqueKeyLoader(text, source)
    try:
        node = loader.get_single_node()
        lines: dict[tuple[str, ...], int] = {}
        if node is not None:
            lines[()] = node.start_mark.line + 1
            _walk(node, (), lines, loader.paths)
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = str(exc.problem or exc.context or type(exc).__name__)
        if "'@'" in problem or "alias" in problem:  # @cf/... or *-patterns written bare
            problem += " (quote a value that starts with @ or *)"
        raise YamlModelError(source, [Problem(mark.line + 1 if mark is not None else None, None,
                                              f"not valid YAML: {problem}")]) from None  # fmt: skip
    except yaml.YAMLError as exc:
        raise YamlModelError(source, [Problem(None, None, f"not valid YAML: {type(exc).__name__}")]) from None
    finally:
        loader.dispose()
    return YamlDocument(data, source, lines)


def read_yaml_file(path: str | os.PathLike[str]) -> YamlDocument:
    """:func:`read_yaml` of a file (UTF-8, or what its byte order mark says), named by its path."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise YamlModelError(source, [Problem(None, None, f"cannot read the file ({exc.strerror or type(exc).__name__})")]) from None  # fmt: skip
    return read_yaml(raw, source=source)


def load_model(model: type[M], text: str | bytes, *, source: str,
               prepare: Callable[[Any], Any] | None = None) -> M:  # fmt: skip
    """``model`` from YAML text; ``prepare`` may rewrite the parsed data before validation."""
    doc = read_yaml(text, source=source)
    return doc.validate(model, prepare(doc.data) if prepare is not None else doc.data)


def load_model_file(model: type[M], path: str | os.PathLike[str],
                    prepare: Callable[[Any], Any] | None = None) -> M:  # fmt: skip
    """``model`` from a YAML file; errors name the file by ``path``."""
    doc = read_yaml_file(path)
    return doc.validate(model, prepare(doc.data) if prepare is not None else doc.data)
