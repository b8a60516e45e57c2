"""presidio, imported without the stacks it does not need here.

Tiergate uses presidio's recognizer classes (``Pattern``, ``PatternRecognizer``, the predefined
recognizers, the registry and its YAML loader) and runs them with its own scanner; presidio's NLP
engines are used only when ``TiersConfig.spacy_model`` is set. Yet ``import presidio_analyzer``
loads all of them, and with them spaCy, thinc and, where installed (as beside the vLLM engine),
``transformers`` and ``torch``: seconds of every start-up and hundreds of MiB for code a default
start never calls. While presidio is first imported, three things are different:

* ``torch`` and ``transformers`` look absent (``import torch`` raises ImportError), so presidio and
  thinc take their "not installed" branches. Afterwards they import normally for whoever else wants
  them; a process that imported either before keeps it as it was. Consequence: spaCy pipelines
  that need PyTorch (``*_trf``) cannot be configured as ``spacy_model``.
* ``presidio_analyzer.nlp_engine`` is a stand-in whose names (``SpacyNlpEngine``, ``NlpArtifacts``
  …) are :class:`_Deferred` placeholders: presidio's other modules import them at module level but
  use them only when an NLP engine is asked for. On first real use (a call, an attribute, an
  ``isinstance``) a placeholder imports the real package, spaCy with it (torch still hidden), and
  forwards. ``import presidio_analyzer.nlp_engine`` after this module is the real package.
* presidio's ``Pattern`` compiles every regex with the backtracking ``regex`` module when it is
  made, only to check it. presidio's own patterns (made at its import) and the ones defined in
  ``tiers`` skip that check: :mod:`tiers.scanner` compiles every pattern it runs (RE2, or ``regex``
  where RE2 cannot) and refuses one that does not compile, naming it. A pattern from a user's
  recognizer file, made by presidio's loader, is still checked there (its error names the file
  and line). Together ≈ 1 s of CPU per start.
* ``tldextract`` (with requests, urllib3 and filelock: ≈ 0.1 s), imported by presidio's
  EmailRecognizer for its own ``validate_result``, is bound lazily: it loads on first attribute
  use, which a default start never makes.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__: list[str] = []

_HIDDEN = ("torch", "transformers")
_NLP = "presidio_analyzer.nlp_engine"
_PATTERN = "presidio_analyzer.pattern"
_LAZY = "tldextract"  # for presidio's EmailRecognizer alone, which tiers does not run (recognizers/contact.py)
_lock = threading.Lock()
_first_import = False  # True while presidio's own modules are being imported


@contextlib.contextmanager
def _torch_hidden() -> Iterator[None]:
    hidden = [name for name in _HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # "import torch" raises ImportError
    try:
        yield
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def _real_nlp() -> types.ModuleType:
    """The real ``presidio_analyzer.nlp_engine`` (and spaCy), imported on first need."""
    with _lock:
        return importlib.import_module(_NLP)  # torch hidden by _Hooks


class _Deferred:
    """A name of presidio's NLP package that loads the package when it is first really used."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def _target(self) -> Any:
        return getattr(_real_nlp(), self._name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)  # copy, pickle and typing probe dunders: not a use
        return getattr(self._target(), attr)

    def __instancecheck__(self, obj: object) -> bool:
        # An object of an NLP class exists only once the real package is loaded: nothing else is
        # an instance, and the check itself need not load it.
        module = sys.modules.get(_NLP)
        if module is None or getattr(module, "_tiers_stand_in", False):
            return False
        return isinstance(obj, getattr(module, self._name))

    def __subclasscheck__(self, cls: type) -> bool:
        return issubclass(cls, self._target())

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[Any, ...]:
        return (self._target(),)

    def __repr__(self) -> str:
        return f"<deferred {_NLP}.{self._name}>"


class _StandIn(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        def deferred(name: str) -> Any:
            if name.startswith("_"):
                raise AttributeError(name)
            return _Deferred(name)

        module.__getattr__ = deferred  # type: ignore[method-assign]  # PEP 562: "from m import X" asks it
        module._tiers_stand_in = True  # type: ignore[attr-defined]  # marks it for _real_nlp


def _checked_unless_ours(check: Callable[[str], None]) -> Callable[[str], None]:
    def validate(pattern: str) -> None:
        # frame 0: this, 1: Pattern.__init__, 2: whoever made the Pattern (a subclass's
        # __init__ or a module, class body or comprehension of tiers; presidio's loader else)
        maker = sys._getframe(2).f_globals.get("__name__", "")
        if _first_import or maker == "tiers" or maker.startswith("tiers."):
            return
        check(pattern)

    return validate


def _wrap_exec(spec: importlib.machinery.ModuleSpec, around: Callable[[types.ModuleType], None]) -> None:
    loader = spec.loader
    assert loader is not None
    loader.exec_module = around  # type: ignore[method-assign, assignment]  # this spec's loader instance only


class _Hooks(importlib.abc.MetaPathFinder):
    """During presidio's first import: the NLP stand-in, lazy tldextract and the Pattern check.
    Afterwards (it stays installed, for this one name): the real NLP package is imported with
    torch hidden, however it is asked for (a deferred name, or ``import`` by anyone)."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: types.ModuleType | None = None,
                  ) -> importlib.machinery.ModuleSpec | None:  # fmt: skip
        if name not in (_NLP, _PATTERN, _LAZY):
            return None
        if name == _NLP and _first_import:
            return importlib.util.spec_from_loader(name, _StandIn())
        if name != _NLP and not _first_import:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        if name == _LAZY:
            spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec
        run = spec.loader.exec_module

        if name == _NLP:

            def exec_nlp(module: types.ModuleType) -> None:
                with _torch_hidden():
                    run(module)

            _wrap_exec(spec, exec_nlp)
            return spec

        def exec_pattern(module: types.ModuleType) -> None:
            run(module)
            cls = module.Pattern
            cls._Pattern__validate_regex = staticmethod(_checked_unless_ours(cls._Pattern__validate_regex))

        _wrap_exec(spec, exec_pattern)
        return spec


def _import() -> None:
    global _first_import
    if "presidio_analyzer" in sys.modules:
        return
    sys.meta_path.insert(0, _Hooks())
    _first_import = True
    try:
        with _torch_hidden():
            import presidio_analyzer  # noqa: F401 -- imported here for its side of the hooks above
    finally:
        _first_import = False
        stand_in = sys.modules.get(_NLP)
        if stand_in is not None and getattr(stand_in, "_tiers_stand_in", False):
            del sys.modules[_NLP]
            package = sys.modules.get("presidio_analyzer")
            if getattr(package, "nlp_engine", None) is stand_in:
                delattr(package, "nlp_engine")


_import()
