"""SSE bodies written the way a server may and a line reader misreads: bare CR line ends, a
comment first, and each event's JSON spread over several ``data:`` lines (one per line of its
indented form; a conforming reader joins them back)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["spread"]


def spread(events: list[tuple[str | None, Any]]) -> bytes:
    """(event name or None, JSON payload or a raw string) per event."""
    out = [": keep-alive\r"]
    for name, payload in events:
        if name is not None:
            out.append(f"event: {name}\r")
        text = payload if isinstance(payload, str) else json.dumps(payload, indent=1)
        out.extend(f"data:{line}\r" for line in text.split("\n"))
        out.append("\r")
    return "".join(out).encode()
