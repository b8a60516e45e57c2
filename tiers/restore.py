"""Putting the original values back into the model's answer, whole or streamed chunk by chunk."""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["Restorer", "StreamRestorer"]


class Restorer:
    """Replaces every placeholder of ``mapping`` found in a text by its original value."""

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self.mapping = dict(mapping)
        # Compiled on the first text that can hold a placeholder: a prompt with thousands of
        # identifiers makes a pattern of thousands of alternatives (tens of milliseconds to
        # compile), and most answers hold no "<" at all.
        self._re: re.Pattern[str] | None = None

    def restore(self, text: str) -> str:
        """``text`` with placeholders replaced; text without placeholders is returned unchanged."""
        if not self.mapping or "<" not in text:
            return text
        if self._re is None:
            keys = sorted(self.mapping, key=len, reverse=True)
            self._re = re.compile("|".join(re.escape(k) for k in keys))
        return self._re.sub(lambda m: self.mapping[m.group(0)], text)


class StreamRestorer:
    """Restores a streamed answer. ``feed`` returns what can be released now; ``flush`` the rest.

    Only a tail that could still grow into a placeholder (a ``<`` followed by a prefix of some
    placeholder) is held back, so at most ``len(longest placeholder) - 1`` characters wait.
    Concatenating every ``feed`` result and ``flush()`` equals ``Restorer.restore`` of the whole.
    """

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self._restorer = Restorer(mapping)
        self._prefixes = {k[:i] for k in mapping for i in range(1, len(k))}
        self._max = max((len(k) for k in mapping), default=0)
        self._buf = ""

    def _held_from(self, buf: str) -> int:
        """Index where the held-back tail starts (``len(buf)`` when nothing must wait)."""
        start = max(0, len(buf) - self._max + 1)
        i = buf.find("<", start)
        while i != -1:
            if buf[i:] in self._prefixes:
                return i
            i = buf.find("<", i + 1)
        return len(buf)

    def feed(self, chunk: str) -> str:
        """Accept the next chunk of the answer; return the restored text that is safe to send."""
        if not self._prefixes:
            return chunk
        buf = self._buf + chunk
        cut = self._held_from(buf)
        self._buf = buf[cut:]
        return self._restorer.restore(buf[:cut])

    def flush(self) -> str:
        """The held-back tail at the end of the stream (it was not a placeholder after all)."""
        buf, self._buf = self._buf, ""
        return self._restorer.restore(buf)
