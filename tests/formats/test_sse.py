"""The one SSE reader: whatever the chunking, line ends, comments and field order, the events
that were written come back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.sse import Event, SSEDecoder, SSELineTooLong, encode_event, iter_events

# Values on one line: no CR or LF (they end a line), no surrogates (not UTF-8).
_line_text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), max_size=12)
_name = _line_text.filter(lambda s: s != "")
_events = st.builds(
    Event,
    data=st.lists(_line_text, min_size=1, max_size=4).map("\n".join),
    event=st.none() | _name,
    id=st.none() | _line_text.filter(lambda s: "\0" not in s),
    retry=st.none() | st.integers(0, 10**9),
)
_ENDS = ("\n", "\r\n", "\r")


@st.composite
def _written(draw: st.DrawFn, events: list[Event]) -> bytes:
    """``events`` as a server might write them: any line ends, comments, ignored fields, spare
    blank lines, the optional space after the colon, fields in any order around the data."""
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append("")  # blank lines before the first event dispatch nothing
    for event in events:
        fields = [("data", part) for part in event.data.split("\n")]
        extras = []
        if event.event is not None:
            extras.append(("event", event.event))
        if event.id is not None:
            extras.append(("id", event.id))
        if event.retry is not None:
            extras.append(("retry", str(event.retry)))
        if draw(st.booleans()):
            extras.append(("x-unknown", draw(_line_text)))
        for extra in extras:  # somewhere among the data lines, which keep their order
            fields.insert(draw(st.integers(0, len(fields))), extra)
        for name, value in fields:
            if draw(st.integers(0, 4)) == 0:
                lines.append(":" + draw(_line_text))
            space = " " if value.startswith(" ") or draw(st.booleans()) else ""
            lines.append(f"{name}:{space}{value}" if value or draw(st.booleans()) else name)
        lines.append("")
        if draw(st.integers(0, 3)) == 0:
            lines.append(":" + draw(_line_text))
            lines.append("")
    out: list[str] = ["\ufeff"] if draw(st.booleans()) else []
    previous = ""
    for line in lines:
        end = draw(st.sampled_from(_ENDS))
        if previous == "\r" and line == "" and end == "\n":
            end = "\r"  # a CR then an empty line ended by LF is one CRLF: the format can't say it
        out.append(line + end)
        previous = end
    return "".join(out).encode("utf-8")


@st.composite
def _stream(draw: st.DrawFn) -> tuple[list[Event], list[bytes]]:
    events = draw(st.lists(_events, max_size=6))
    body = draw(_written(events))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=12)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    return events, chunks


@settings(max_examples=400, deadline=None)
@given(_stream())
def test_events_survive_any_writing_and_chunking(stream: tuple[list[Event], list[bytes]]) -> None:
    events, chunks = stream
    assert iter_events(chunks) == events


@settings(max_examples=200, deadline=None)
@given(st.lists(_events, max_size=6), st.data())
def test_encoded_events_read_back(events: list[Event], data: st.DataObject) -> None:
    body = b"".join(encode_event(e) for e in events)
    size = data.draw(st.integers(1, 7))
    assert iter_events(body[i : i + size] for i in range(0, len(body), size)) == events


def test_a_cut_stream_keeps_its_last_whole_data_line() -> None:
    # No blank line after the last event (the connection closed right after it).
    assert iter_events([b"data: a\n\ndata: [DONE]"]) == [Event("a"), Event("[DONE]")]
    assert iter_events([b"event: x\ndata: b\n"]) == [Event("b", "x")]


def test_an_event_without_data_is_not_dispatched() -> None:
    assert iter_events([b"event: ping\n\n: keep-alive\n\nid: 3\n\n"]) == []
    assert iter_events([b"data\n\n"]) == [Event("")]


def test_a_line_longer_than_allowed_is_refused_before_it_ends() -> None:
    decoder = SSEDecoder(max_line=8)
    decoder.feed(b"data: 12")
    with pytest.raises(SSELineTooLong):
        decoder.feed(b"345")
    with pytest.raises(SSELineTooLong):
        SSEDecoder(max_line=8).feed(b"data: 123456789\n")


def test_an_empty_chunk_between_a_cr_and_its_lf_changes_nothing() -> None:
    # found by the property above: a client's empty read between the two bytes of a CRLF once
    # made the LF a second line end, an empty line that dispatched the event half written
    chunks = [b"data: a\r", b"", b"\ndata: b\r\n\r\n"]
    assert iter_events(chunks) == [Event(data="a\nb", event=None, id=None, retry=None)]
