"""presidio as ``tiers/_presidio.py`` imports it: its NLP package deferred, yet whole on demand.

Each check runs in a fresh interpreter, since what matters is what the first import of presidio
leaves behind (a test process has usually imported it long before).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tiers import TiersConfig
from tiers.errors import RecognizerError
from tiers.recognizers import build_registry

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=240, cwd=ROOT)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip()


def test_the_nlp_package_loads_when_it_is_used_and_is_presidios_own() -> None:
    out = _run("""
        import sys
        import tiers.classifier
        from presidio_analyzer.recognizer_registry import recognizer_registry as rr
        assert "spacy" not in sys.modules
        # an isinstance check against a deferred name needs no NLP package: nothing is one yet
        assert not isinstance(object(), rr.SpacyNlpEngine) and "spacy" not in sys.modules
        from presidio_analyzer.nlp_engine import NoOpNlpEngine, SpacyNlpEngine
        assert SpacyNlpEngine.__module__ == "presidio_analyzer.nlp_engine.spacy_nlp_engine"
        assert "spacy" in sys.modules and "torch" not in sys.modules
        # the deferred names presidio's modules hold now answer as the real classes
        engine = NoOpNlpEngine.__new__(NoOpNlpEngine)
        assert isinstance(engine, rr.NoOpNlpEngine) and not isinstance(engine, rr.SpacyNlpEngine)
        print(rr.SpacyNlpEngine(models=[{"lang_code": "en", "model_name": "x"}]).__class__.__name__)
    """)
    assert out == "SpacyNlpEngine"


def test_a_deferred_name_used_first_loads_the_package_itself() -> None:
    out = _run("""
        import sys
        import tiers.classifier
        from presidio_analyzer.recognizer_registry import recognizer_registry as rr
        engine = rr.NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "none"}])
        assert "spacy" in sys.modules and "torch" not in sys.modules
        print(type(engine).__module__, isinstance(engine, rr.NoOpNlpEngine))
    """)
    assert out == "presidio_analyzer.nlp_engine.no_op_nlp_engine True"


def test_presidio_still_checks_patterns_made_outside_tiers() -> None:
    out = _run("""
        import tiers.classifier
        from presidio_analyzer import Pattern
        try:
            Pattern("broken", "(unclosed", 0.5)
        except ValueError as exc:
            print("refused:", exc)
    """)
    assert out.startswith("refused: Invalid regex pattern")


def test_a_broken_pattern_in_a_recognizer_file_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    path.write_text("recognizers:\n  - name: ok\n    supported_entity: X\n    patterns:\n"
                    "      - {name: p, regex: 'A[0-9]+', score: 0.9}\n"
                    "  - name: broken\n    supported_entity: Y\n    patterns:\n"
                    "      - {name: p, regex: '(unclosed', score: 0.9}\n")  # fmt: skip
    try:
        build_registry(TiersConfig(recognizer_files=[path]))
    except RecognizerError as exc:
        message = str(exc)
    else:
        raise AssertionError("a pattern that does not compile was accepted")
    assert f"{path}:6: recognizers[1]" in message and "Invalid regex pattern" in message
