"""The engine runs without the gateway: engine images install it alone (``python -m engine``)."""

from __future__ import annotations

import subprocess
import sys

_NO_GATEWAY = "import sys; sys.modules['gateway'] = None  # any import of it now fails\n"


def test_engine_commands_and_front_import_without_the_gateway() -> None:
    code = _NO_GATEWAY + (
        "import runpy, engine, engine.admission, engine.config, engine.counting, engine.front\n"
        "sys.argv = ['python -m engine', '--help']\n"
        "runpy.run_module('engine', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert all(name in done.stdout for name in ("serve", "preflight", "check"))


def test_gateway_cli_runs_the_engine_commands() -> None:
    from click.testing import CliRunner

    from gateway.cli import main

    result = CliRunner().invoke(main, ["engine", "--help"])
    assert result.exit_code == 0 and "preflight" in result.output
