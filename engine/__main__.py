"""``python -m engine serve --config engine.yaml``: the engine commands without the gateway.

Same commands as ``tiergate engine …`` (``engine/cli.py``); for engine images (e.g. the official
vLLM image) that install this project with ``--no-deps`` plus the few packages the front needs.
"""

from engine.cli import engine_group

if __name__ == "__main__":
    engine_group(prog_name="python -m engine")
