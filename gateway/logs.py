"""How `tiergate serve` writes its logs: one line per record, whatever a message holds.

Log lines are read by people and parsed by collectors, and some values in them (an upstream's
error class, a path uvicorn complains about) pass near client input. The formatter escapes every
control and line-separator character after formatting, so no record can start a forged line,
move a terminal's cursor or split itself in two; records are also capped in length.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["OneLineFormatter", "uvicorn_log_config"]

MAX_RECORD_CHARS = 4000
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_ESCAPES = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]}
_ESCAPES.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


class OneLineFormatter(logging.Formatter):
    def __init__(self, fmt: str = FORMAT, datefmt: str | None = None) -> None:
        super().__init__(fmt, datefmt)

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record).translate(_ESCAPES)
        if len(text) > MAX_RECORD_CHARS:
            text = text[:MAX_RECORD_CHARS] + f"... [{len(text) - MAX_RECORD_CHARS} more chars]"
        return text


def uvicorn_log_config(level: str) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` for uvicorn and the gateway's own ``tiergate.*`` loggers."""
    level = level.upper()
    handler = {"class": "logging.StreamHandler", "formatter": "one_line", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"one_line": {"()": OneLineFormatter}},
        "handlers": {"stderr": handler},
        "loggers": {
            "tiergate": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }
