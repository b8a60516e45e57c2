"""Server-sent events, read the way the HTML standard's "interpreting an event stream" says.

One incremental decoder for every stream this project reads (the gateway's relays, the probes, the
engine front): bytes go in as the network cut them, whole events come out.

- A line ends with CRLF, LF or CR; a CR that ends one chunk may be the first half of a CRLF, so
  an LF starting the next chunk is not a second, empty line.
- ``:`` starts a comment; ``field: value`` loses one space after the colon; a line without a
  colon is a field with an empty value; unknown fields are ignored.
- The ``data`` lines of one event are joined with LF; a blank line dispatches the event, and
  only an event that had a ``data`` line is dispatched.
- A byte order mark opening the stream is dropped; lines are UTF-8 (undecodable bytes replaced).

One deliberate difference from the standard, which discards an event the stream did not finish:
:meth:`SSEDecoder.close` hands out the event whose ``data`` arrived but whose blank line (or last
line end) did not. Every reader here waits for an explicit end event (``[DONE]``,
``message_stop``, ``response.completed``), so a stream cut early is still incomplete to it; a
stream cut just after its end event is not.

:func:`encode_event` writes an event back (LF line ends), so that a relay that checks events
sends exactly the events it checked.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass

__all__ = ["Event", "SSEDecoder", "SSELineTooLong", "aiter_events", "encode_event", "iter_events"]

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Event:
    """One dispatched event. ``event`` is None for an unnamed one (the standard's "message")."""

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None


class SSELineTooLong(ValueError):
    """A line ran past the decoder's ``max_line`` bytes (a stream that never ends its line)."""


class SSEDecoder:
    """Feed it chunks as they arrive; each call returns the events those bytes completed."""

    __slots__ = ("_after_cr", "_data", "_event", "_first", "_id", "_max_line", "_pending", "_retry", "_size")

    def __init__(self, *, max_line: int | None = None) -> None:
        self._max_line = max_line
        self._pending: list[bytes] = []  # the unfinished line, in pieces (joined once it ends)
        self._size = 0
        self._after_cr = False
        self._first = True
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[Event]:
        if not chunk:
            return []  # (before the CR check: an empty chunk between a CR and its LF changes nothing)
        if self._after_cr:
            self._after_cr = False
            if chunk[:1] == b"\n":  # the LF of a CRLF cut between two chunks
                chunk = chunk[1:]
                if not chunk:
                    return []
        if b"\r" in chunk:
            self._after_cr = chunk[-1:] == b"\r"
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *lines, tail = chunk.split(b"\n")
        if not lines:
            self._hold(tail)
            return []
        if self._pending:
            lines[0] = b"".join(self._pending) + lines[0]
            self._pending, self._size = [], 0
        if tail:
            self._hold(tail)
        out: list[Event] = []
        for raw in lines:
            if self._max_line is not None and len(raw) > self._max_line:
                raise SSELineTooLong(f"a line of the event stream is over {self._max_line} bytes")
            event = self._line(raw.decode("utf-8", "replace"))
            if event is not None:
                out.append(event)
        return out

    def close(self) -> list[Event]:
        """The end of the stream: the unfinished last line and event, if they carried data."""
        out: list[Event] = []
        if self._pending:
            tail = b"".join(self._pending)
            self._pending, self._size = [], 0
            event = self._line(tail.decode("utf-8", "replace"))
            if event is not None:
                out.append(event)
        event = self._line("")
        if event is not None:
            out.append(event)
        return out

    def _hold(self, piece: bytes) -> None:
        self._pending.append(piece)
        self._size += len(piece)
        if self._max_line is not None and self._size > self._max_line:
            raise SSELineTooLong(f"a line of the event stream is over {self._max_line} bytes")

    def _line(self, line: str) -> Event | None:
        if self._first:
            self._first = False
            if line.startswith(_BOM):
                line = line[1:]
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        colon = line.find(":")
        if colon < 0:
            field, value = line, ""
        else:
            field, value = line[:colon], line[colon + 1 :]
            if value[:1] == " ":
                value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id":
            if "\0" not in value:
                self._id = value
        elif field == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)
        return None

    def _dispatch(self) -> Event | None:
        event = None
        if self._data:
            event = Event("\n".join(self._data), self._event or None, self._id, self._retry)
        self._data = []
        self._event = self._id = None
        self._retry = None
        return event


def iter_events(chunks: Iterable[bytes], *, max_line: int | None = None) -> list[Event]:
    """Every event of a whole body given as chunks."""
    decoder = SSEDecoder(max_line=max_line)
    out: list[Event] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    out.extend(decoder.close())
    return out


async def aiter_events(chunks: AsyncIterable[bytes], *, max_line: int | None = None) -> AsyncIterator[Event]:
    """Events as the chunks that complete them arrive."""
    decoder = SSEDecoder(max_line=max_line)
    async for chunk in chunks:
        for event in decoder.feed(chunk):
            yield event
    for event in decoder.close():
        yield event


def encode_event(event: Event) -> bytes:
    """The event as SSE bytes (LF line ends, one ``data`` line per line of its data)."""
    parts: list[str] = []
    if event.event is not None:
        parts.append(f"event: {event.event}\n")
    if event.id is not None:
        parts.append(f"id: {event.id}\n")
    if event.retry is not None:
        parts.append(f"retry: {event.retry}\n")
    for line in event.data.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        parts.append(f"data: {line}\n")
    parts.append("\n")
    return "".join(parts).encode("utf-8")
