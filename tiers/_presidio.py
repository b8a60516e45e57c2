"""presidio, imported without the PyTorch stack it does not need here.

presidio-analyzer's package import reaches for ``transformers`` (its Hugging Face NLP engine) and
``torch`` (device detection, and thinc's PyTorch shims under spaCy) whenever they are installed,
as they are beside the vLLM engine: seconds of start-up and ~300 MiB of memory for code that
Tiergate never calls (its NLP path is a spaCy pipeline, ``TiersConfig.spacy_model``). While
presidio is first imported, both are made to look absent; afterwards they import normally for
whoever else wants them. A process that imported either before keeps it as it was.

Consequence: spaCy pipelines that need PyTorch (``*_trf``) cannot be configured as
``spacy_model``; the pattern recognizers and spaCy's CPU pipelines are unaffected.
"""

from __future__ import annotations

import sys

_HIDDEN = ("torch", "transformers")


def _import() -> None:
    if "presidio_analyzer" in sys.modules:
        return
    hidden = [name for name in _HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # "import torch" raises ImportError
    try:
        import presidio_analyzer  # noqa: F401 -- imported while torch is hidden, for that alone
    finally:
        for name in hidden:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


_import()
