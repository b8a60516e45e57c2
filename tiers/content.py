"""The total content model: every piece of a request body the upstream will receive, and how to
put a stripped version back.

``extract_content`` turns a decoded request body into a :class:`Content`: every string value at
every path, every object key, every number of six or more digits where the API does not define a
number, the decoded text of token-id prompts and of inline text files — each one a
:class:`Segment` the classifier reads — plus the parts it *cannot* read (images, audio, binary
files, token ids without the upstream's tokenizer), each an :class:`Opaque` entry that the policy
treats as the ``UNREADABLE`` entity. Nothing is skipped by key name: the only pieces left out are
at exact schema paths of the protocol (a message's ``role``, a content part's ``type`` …), and
even there only when the value has the shape of a protocol keyword.

Only decoded strings are analysed, never the raw JSON: escapes such as ``\\u0040`` are already
resolved by the JSON parser, so an identifier cannot hide behind JSON syntax.

The schema of each endpoint is a small tree of *specs* (functions that read one value at one path);
``_FREE`` is the spec of everything the schema does not name, and reads all of it.
"""

from __future__ import annotations

import base64
import binascii
import copy
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote_to_bytes

from .errors import ContentError, FileHeaderError, VendorStateError
from .types import Content, Opaque, Segment

__all__ = ["MAX_DEPTH", "MAX_SEGMENTS", "TokenDecoder", "apply_content", "extract_content"]

Path = tuple[str | int, ...]
# Decodes a prompt given as token ids with the upstream's tokenizer; None when an id is unknown.
TokenDecoder = Callable[[Sequence[int]], "str | None"]

# Nesting deeper than this is refused rather than walked (and no real request comes close).
MAX_DEPTH = 64
# More pieces than this in one request is refused: each one costs the classifier, and no client
# sends that many (a request of 700k tiny strings once froze the gateway).
MAX_SEGMENTS = 100_000
# Numbers with this many digits can be identifiers (cards, accounts, national ids).
_ID_DIGITS = 6
# Protocol keywords: the enum values the APIs define for the exact schema paths marked `keyword`
# (roles, part and item types, details, formats, tiers, efforts …), across every protocol. A closed
# set, not a shape: a lowercase word such as a listed customer's name or "confidential" in a
# `role` is read like any other string. Anything else found
# there (digits, spaces, capitals, '@') is read like any other string.
_KEYWORDS = frozenset(
    """
    system user assistant tool function developer model
    text input_text output_text refusal image_url input_image input_audio file input_file image
    document tool_use tool_result thinking redacted_thinking server_tool_use web_search_tool_result
    search_result container_upload mcp_tool_use mcp_tool_result citations_delta custom
    message function_call function_call_output custom_tool_call custom_tool_call_output reasoning
    computer_call computer_call_output web_search_call file_search_call local_shell_call
    local_shell_call_output item_reference compaction summary_text reasoning_text output_audio
    web_search web_search_preview file_search code_interpreter computer_use_preview mcp local_shell
    image_generation bash text_editor
    auto low high original minimal medium none xhigh concise detailed disabled enabled
    wav mp3 flac opus pcm16 aac
    default flex scale priority standard_only
    float base64 url content
    required any json_object json_schema
    audio ephemeral 5m 1h
    in_progress completed incomplete failed
    reasoning.encrypted_content file_search_call.results message.output_text.logprobs
    web_search_call.action.sources code_interpreter_call.outputs computer_call_output.output.image_url
    message.input_image.image_url
""".split()
)
_DATA_URI = re.compile(r"data:([^,;]*)((?:;[^,;]*)*),", re.IGNORECASE)


# A header that is only a media type and the parameters the payload's decoding needs carries
# nothing of the client's: anything else in it (a file name, made-up parameters, a "type" that is
# an address) reaches the vendor as written, so it is read as a segment of its own.
_PLAIN_HEADER = re.compile(
    r"data:(?:[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*)?(?:;(?:base64|charset=[a-z0-9._:-]+))*,",
    re.IGNORECASE,
)
DATA_URI_HEADER = "data-uri header"  # the last element of a header segment's path


def _as_data_uri(value: str) -> str | None:
    """``value`` as a data URI the way a URL parser reads it (scheme in any case, tabs and line
    breaks removed, surrounding spaces and controls trimmed), or None."""
    head = value[:64].lstrip(_URL_TRIM).replace("\t", "").replace("\n", "").replace("\r", "")
    if head[:5].lower() != "data:":
        return None
    clean = value.strip(_URL_TRIM).replace("\t", "").replace("\n", "").replace("\r", "")
    return clean if _DATA_URI.match(clean) else None


_URL_TRIM = "".join(chr(c) for c in range(0x21))  # C0 controls and space


_TOP_LEVEL_TYPES = frozenset("application audio example font haptics image message model multipart text video".split())


def _top_level(mime: str) -> str:
    """The registered top-level type of a client's media type, for a reason the audit log keeps:
    the client's own words (``data:jane.doe@example.com/x,``) never land there."""
    top = mime.split("/")[0]
    return top if top in _TOP_LEVEL_TYPES else "binary"


def _fail(what: str, path: Path) -> ContentError:
    return ContentError(f"cannot read {what} at {'/'.join(map(str, path)) or '<body>'}")


# -- the walk -----------------------------------------------------------------------------------


@dataclass
class _Walk:
    decode_tokens: TokenDecoder | None
    max_segments: int
    segments: list[Segment] = field(default_factory=list)
    opaque: list[Opaque] = field(default_factory=list)

    def add(self, seg: Segment) -> None:
        if len(self.segments) >= self.max_segments:
            raise ContentError(f"the request carries more than {self.max_segments} strings")
        self.segments.append(seg)

    def text(self, value: str, path: Path, prompt: bool) -> None:
        uri = _as_data_uri(value)
        if uri is not None:
            self.data_uri(uri, path, prompt)
        elif value:
            self.add(Segment(path, value, prompt))

    def opaque_part(self, path: Path, what: str) -> None:
        self.opaque.append(Opaque(path, what))

    def data_uri(self, value: str, path: Path, prompt: bool) -> None:
        m = _DATA_URI.match(value)
        assert m is not None
        mime, params = m.group(1).strip().lower() or "text/plain", m.group(2).lower()
        header, payload = value[: m.end()], value[m.end() :]
        if not _PLAIN_HEADER.fullmatch(header):
            self.add(Segment((*path, DATA_URI_HEADER), header[5:-1], prompt, kind="header"))
        if ";base64" in params:
            raw = _b64(payload)
        else:
            raw = unquote_to_bytes(payload)
        self.file(raw, path, prompt, mime=mime, via=header, charset=_charset(params))

    def file(
        self,
        raw: bytes | None,
        path: Path,
        prompt: bool,
        *,
        mime: str | None,
        via: str,
        charset: str | None = None,
    ) -> None:
        """Inline file bytes: text is decoded and read; PDF text is read (and cannot be rewritten);
        anything else is opaque."""
        if raw is None:
            self.opaque_part(path, "undecodable file data")
            return
        if mime == "application/pdf" or b"%PDF" in raw[:1024]:
            # A vendor renders a PDF's pages: images, annotations, form fields and drawn glyphs
            # are all content no text extraction sees, and extraction itself can be made to run
            # for minutes. A PDF is therefore opaque, like an image.
            self.opaque_part(path, "PDF")
            return
        if mime is not None and not _text_like(mime):
            self.opaque_part(path, f"{_top_level(mime)} content")
            return
        name = (charset or "utf-8").lower().replace("_", "-")
        if name not in _CHARSETS:  # a vendor may read the bytes as UTF-8 whatever the label says
            self.opaque_part(path, "file in an unusual charset")
            return
        try:
            text = raw.decode(_CHARSETS[name])
        except (UnicodeError, LookupError):
            self.opaque_part(path, "binary file")
            return
        if mime is None and not _looks_like_text(text):
            self.opaque_part(path, "binary file")
            return
        self.add(Segment(path, text, prompt, kind="file", via=via))

    def tokens(self, ids: Sequence[int], path: Path) -> None:
        if not ids:
            return
        text = self.decode_tokens(ids) if self.decode_tokens is not None else None
        if text is None:
            self.opaque_part(path, "token ids" + ("" if self.decode_tokens else " without a tokenizer"))
        else:
            self.add(Segment(path, text, True, kind="tokens"))


Spec = Callable[[_Walk, Any, Path], None]


def _free(w: _Walk, value: Any, path: Path) -> None:
    """Everything the schema does not name: every key, string and long number below ``path``."""
    stack: list[tuple[Path, Any]] = [(path, value)]  # depth-first, in document order
    while stack:
        p, v = stack.pop()
        if len(p) > MAX_DEPTH:
            raise ContentError(f"the request nests deeper than {MAX_DEPTH} levels")
        if isinstance(v, str):
            w.text(v, p, False)
        elif isinstance(v, Mapping):
            children: list[tuple[Path, Any]] = []
            for key, item in v.items():
                if not isinstance(key, str):
                    raise _fail("object key", p)
                if key:
                    w.add(Segment((*p, key), key, False, kind="key"))
                children.append(((*p, key), item))
            stack.extend(reversed(children))
        elif isinstance(v, list):
            stack.extend(reversed([((*p, i), item) for i, item in enumerate(v)]))
        elif isinstance(v, bool) or v is None:
            continue
        elif isinstance(v, int | float):
            _number(w, v, p)


def _free_values(w: _Walk, value: Any, path: Path) -> None:
    """A free-form object the schema names (``metadata``, ``logit_bias``): its own name is
    protocol, all of its keys and values are read."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            _free(w, {key: item}, path)
    else:
        _free(w, value, path)


def _number(w: _Walk, value: float, path: Path) -> None:
    text = _number_text(value)
    if sum(ch.isdigit() for ch in text) >= _ID_DIGITS:
        w.add(Segment(path, text, False, kind="number"))


def _number_text(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def obj(**fields: Spec) -> Spec:
    """An object of the protocol: its named fields by their specs, every other key and its value
    read freely (an unknown field reaches the upstream all the same)."""
    table = dict(fields)

    def read(w: _Walk, value: Any, path: Path) -> None:
        if not isinstance(value, Mapping):
            _free(w, value, path)
            return
        if len(path) > MAX_DEPTH:
            raise ContentError(f"the request nests deeper than {MAX_DEPTH} levels")
        for key, item in value.items():
            spec = table.get(key) if isinstance(key, str) else None
            if spec is None:
                _free(w, {key: item}, path)
            else:
                spec(w, item, (*path, key))

    return read


def listof(item: Spec, *, required: str | None = None) -> Spec:
    def read(w: _Walk, value: Any, path: Path) -> None:
        if isinstance(value, list):
            for i, v in enumerate(value):
                item(w, v, (*path, i))
        elif required is not None:
            raise _fail(required, path)
        else:
            _free(w, value, path)

    return read


def prose(prompt: bool = True, *, what: str | None = None) -> Spec:
    """A string the model reads; ``what`` names it when any other type must be refused."""

    def read(w: _Walk, value: Any, path: Path) -> None:
        if isinstance(value, str):
            w.text(value, path, prompt)
        elif value is None:
            return
        elif what is not None:
            raise _fail(what, path)
        else:
            _free(w, value, path)

    return read


def keyword(w: _Walk, value: Any, path: Path) -> None:
    """An enum of the protocol (``role``, ``type`` …): left as it is when it is one of the
    protocols' keywords, read otherwise."""
    if isinstance(value, str) and value in _KEYWORDS:
        return
    _free(w, value, path)


def number(w: _Walk, value: Any, path: Path) -> None:
    """A field the API types as a number (``seed``, ``max_tokens`` …), or a flag. A number
    reaches the vendor all the same: one long enough to be an identifier (a card in ``seed``) is
    read like any other."""
    if isinstance(value, bool) or value is None:
        return
    _free(w, value, path)


def replaced(w: _Walk, value: Any, path: Path) -> None:
    """A field the gateway overwrites or drops before forwarding (``model``): never sent."""


# -- files, media and token ids -----------------------------------------------------------------


def _file_data(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        # Seen in the wild: the data split into chunks. The file is their concatenation (a value
        # split across two chunks is one value), and it is written back whole, as one string.
        w.file(_b64(value), path, False, mime=None, via="")
        return
    if isinstance(value, str):
        # Files are not the prompt proper: vendors count their tokens their own way (a PDF may
        # become images), so they widen the accepted usage, not its floor.
        uri = _as_data_uri(value)
        if uri is not None:
            w.data_uri(uri, path, False)
        else:
            w.file(_b64(value), path, False, mime=None, via="")
    else:
        _free(w, value, path)


def _media_url(w: _Walk, value: Any, path: Path) -> None:
    """An image (or other media) URL: a link is read as text, inline data by its MIME type."""
    if isinstance(value, str):
        w.text(value, path, False)
    else:
        _free(w, value, path)


def _audio(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, str) and value:
        w.opaque_part(path, "audio")
    else:
        _free(w, value, path)


def _token_list(value: Any) -> bool:
    return (
        isinstance(value, list) and bool(value) and all(isinstance(t, int) and not isinstance(t, bool) for t in value)
    )


def _prompt_input(field_name: str) -> Spec:
    """``prompt`` / ``input``: a string, strings, token ids, or lists of token ids."""

    def read(w: _Walk, value: Any, path: Path) -> None:
        if isinstance(value, str):
            w.text(value, path, True)
        elif _token_list(value):
            w.tokens(value, path)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, str):
                    w.text(item, (*path, i), True)
                elif _token_list(item):
                    w.tokens(item, (*path, i))
                elif item == []:
                    continue
                else:
                    raise _fail(f"{field_name} item", (*path, i))
        elif value is None and field_name == "prompt":
            return
        else:
            raise _fail(field_name, path)

    return read


def _b64(payload: str | list[str]) -> bytes | None:
    """Strict base64 (standard or URL-safe alphabet, padding only at the end), or None. A list of
    chunks is the concatenation of its chunks decoded one by one; it must agree with decoding
    their join, or nobody can say which bytes a vendor reads."""
    if isinstance(payload, list):
        parts = [_b64(p) for p in payload]
        if any(p is None for p in parts):
            return None
        whole = b"".join(p for p in parts if p is not None)
        joined = _b64("".join(payload))
        return whole if joined is None or joined == whole else None
    compact = "".join(payload.split())
    if "-" in compact or "_" in compact:
        compact = compact.replace("-", "+").replace("_", "/")
    if "=" in compact.rstrip("="):
        return None
    compact += "=" * (-len(compact) % 4)
    try:
        return binascii.a2b_base64(compact, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def _charset(params: str) -> str | None:
    for p in params.split(";"):
        name, _, val = p.partition("=")
        if name.strip() == "charset" and val.strip():
            return val.strip().strip('"')
    return None


# Charsets read as labelled; any other label is opaque (UTF-16 of a card number looks like CJK
# text to us and like the card to a vendor that reads UTF-8).
_CHARSETS = {
    "utf-8": "utf-8",
    "utf8": "utf-8",
    "us-ascii": "ascii",
    "ascii": "ascii",
    "iso-8859-1": "latin-1",
    "latin-1": "latin-1",
    "latin1": "latin-1",
}

_TEXT_MIME = re.compile(
    r"(text/.*|application/(json|xml|csv|ld\+json|x-ndjson|ndjson|yaml|x-yaml|toml|javascript|"
    r"ecmascript|x-sh|sql|graphql|x-www-form-urlencoded|x-tex|rtf|.*\+json|.*\+xml))\Z"
)


def _text_like(mime: str) -> bool:
    return bool(_TEXT_MIME.match(mime))


def _looks_like_text(text: str) -> bool:
    """Raw base64 without a MIME type: text if nearly every character is printable."""
    if not text:
        return True
    sample = text[:4096]
    bad = sum(1 for ch in sample if not (ch.isprintable() or ch in "\t\n\r\f"))
    return bad <= len(sample) // 100


# -- the schemas ---------------------------------------------------------------------------------

_TEXT_PART = obj(type=keyword, text=prose(what="text part"), cache_control=keyword)
_PARTS: dict[str, Spec] = {
    "text": _TEXT_PART,
    "input_text": _TEXT_PART,
    "output_text": _TEXT_PART,
    "refusal": obj(type=keyword, refusal=prose(what="refusal part")),
    "image_url": obj(type=keyword, image_url=obj(url=_media_url, detail=keyword)),
    "input_image": obj(type=keyword, image_url=_media_url, detail=keyword),
    "input_audio": obj(type=keyword, input_audio=obj(data=_audio, format=keyword)),
    "file": obj(type=keyword, file=obj(file_data=_file_data, file_id=prose(False), filename=prose(False))),
    "input_file": obj(
        type=keyword, file_data=_file_data, file_id=prose(False), filename=prose(False), file_url=_media_url
    ),
}


def _content_part(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, str):
        w.text(value, path, True)
        return
    if not isinstance(value, Mapping):
        raise _fail("content part", path)
    ptype = value.get("type")
    if ptype is not None and not isinstance(ptype, str):
        raise _fail("content part type", path)
    spec = _PARTS.get(ptype or "")
    if spec is None:
        # A part type we do not know: its text is prompt text, all else read freely.
        spec = obj(type=keyword, text=prose(what="text part"))
    spec(w, value, path)


def _content(w: _Walk, value: Any, path: Path) -> None:
    if value is None:
        return
    if isinstance(value, str):
        w.text(value, path, True)
    elif isinstance(value, list):
        for i, part in enumerate(value):
            _content_part(w, part, (*path, i))
    else:
        raise _fail("message content", path)


def _arguments(w: _Walk, value: Any, path: Path) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise _fail("tool call arguments", path)
    w.text(value, path, True)


_FUNCTION_CALL = obj(name=prose(False), arguments=_arguments)


def _tool_call(w: _Walk, value: Any, path: Path) -> None:
    if not isinstance(value, Mapping) or not isinstance(value.get("function"), Mapping):
        raise _fail("tool call", (*path, "function"))
    obj(id=prose(False), type=keyword, function=_FUNCTION_CALL)(w, value, path)


_MESSAGE = obj(
    role=keyword,
    content=_content,
    name=prose(True),  # names reach the model and are often a person's name or login
    refusal=prose(True),
    tool_calls=listof(_tool_call, required="tool_calls"),
    tool_call_id=prose(False),
    function_call=_FUNCTION_CALL,
)


def _message(w: _Walk, value: Any, path: Path) -> None:
    if not isinstance(value, Mapping):
        raise _fail("message", path)
    _MESSAGE(w, value, path)


_TOOL = obj(type=keyword, function=obj(name=prose(False), description=prose(False), parameters=_free, strict=number))
_SAMPLING = {
    name: number
    for name in (
        "stream",
        "temperature",
        "top_p",
        "n",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "logprobs",
        "top_logprobs",
        "parallel_tool_calls",
        "store",
        "best_of",
        "echo",
        "dimensions",
    )
}


def _stop(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            prose(False)(w, item, (*path, i))
    else:
        prose(False)(w, value, path)


_COMMON: dict[str, Spec] = {
    "model": replaced,
    "user": prose(False),
    "metadata": _free_values,
    "stop": _stop,
    "logit_bias": _free_values,
    "stream_options": obj(include_usage=number),
    "service_tier": keyword,
    "reasoning_effort": keyword,
    "encoding_format": keyword,
    "tool_choice": obj(type=keyword, function=obj(name=prose(False))),
    "response_format": obj(type=keyword, json_schema=_free),
    "modalities": listof(keyword),
    **_SAMPLING,
}
_CHAT = obj(
    **_COMMON,
    messages=listof(_message, required="messages"),
    tools=listof(_TOOL, required="tools"),
    functions=listof(_free, required="functions"),
)
_COMPLETIONS = obj(**_COMMON, prompt=_prompt_input("prompt"), suffix=prose(True))
_EMBEDDINGS = obj(**_COMMON, input=_prompt_input("input"))


# -- vendor state -------------------------------------------------------------------------------
# Thinking blocks, their signatures, redacted thinking and encrypted reasoning items are state a
# vendor produced and checks on its return: edited by one byte, the vendor answers 400. They are
# *read* like everything else (kind "state": a client could otherwise smuggle an IBAN to a shared
# vendor inside a "signature"), so their findings raise the tier; but they are never rewritten
# (writing one back raises StripError) and, being text, never count as UNREADABLE.
# The gateway does not restore placeholders inside thinking it relays, so the thinking a client
# resends holds the vendor's own placeholders, which are no findings. Which upstream they may go
# back to is routing's concern (gateway/protocols: vendor state never crosses to another vendor).


def _state(w: _Walk, value: Any, path: Path) -> None:
    """Vendor state: read, never rewritten, not the prompt proper."""
    if isinstance(value, str):
        if value:
            w.add(Segment(path, value, False, kind="state"))
    elif value is not None:
        _free(w, value, path)


def ordered(first: tuple[str, ...], **fields: Spec) -> Spec:
    """Like :func:`obj`, but the fields in ``first`` are read before all others, whatever the
    client's key order: placeholders are numbered in reading order, and the parts that stay the
    same on every turn of a conversation (``system``, ``tools``, ``instructions``) must be numbered
    before the history that grows, or a new turn would renumber them."""
    inner = obj(**fields)

    def read(w: _Walk, value: Any, path: Path) -> None:
        if not isinstance(value, Mapping) or not any(k in value for k in first):
            inner(w, value, path)
            return
        head = {k: value[k] for k in first if k in value}
        rest = {k: v for k, v in value.items() if k not in head}
        inner(w, head, path)
        inner(w, rest, path)

    return read


def _mime(w: _Walk, value: Any, path: Path) -> None:
    """A media type of an image or document source: protocol when it is one the APIs accept."""
    if isinstance(value, str) and value.lower() in _MEDIA_TYPES:
        return
    _free(w, value, path)


_MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/plain"})

# -- Anthropic Messages --------------------------------------------------------------------------

_SOURCE_TYPES = frozenset({"base64", "text", "content", "url", "file"})


def _source_type(w: _Walk, value: Any, path: Path) -> None:
    if value not in _SOURCE_TYPES:
        keyword(w, value, path)


_CACHE = obj(type=keyword, ttl=keyword)
_SOURCE_META = obj(type=_source_type, media_type=_mime)


def _a_source(w: _Walk, value: Any, path: Path) -> None:
    """An image or document ``source``: base64 data by its media type, plain text, nested
    content blocks, or a URL / file id."""
    if not isinstance(value, Mapping):
        _free(w, value, path)
        return
    stype = value.get("type")
    if stype == "base64" and isinstance(value.get("data"), str):
        _SOURCE_META(w, {k: v for k, v in value.items() if k != "data"}, path)
        mime = value.get("media_type")
        w.file(
            _b64(value["data"]), (*path, "data"), False, mime=mime.lower() if isinstance(mime, str) else None, via=""
        )
    elif stype == "text":
        obj(type=_source_type, media_type=_mime, data=prose(True))(w, value, path)
    elif stype == "content":
        obj(type=_source_type, content=_a_content)(w, value, path)
    else:  # url, file: links and ids are read as text
        obj(type=_source_type, media_type=_mime, url=_media_url, file_id=prose(False))(w, value, path)


_A_TEXT = obj(type=keyword, text=prose(what="text block"), cache_control=_CACHE, citations=_free)
_A_BLOCKS: dict[str, Spec] = {
    "text": _A_TEXT,
    "image": obj(type=keyword, source=_a_source, cache_control=_CACHE),
    "document": obj(
        type=keyword, source=_a_source, title=prose(True), context=prose(True), cache_control=_CACHE, citations=_free
    ),
    "tool_use": obj(type=keyword, id=prose(False), name=prose(False), input=_free, cache_control=_CACHE),
    "server_tool_use": obj(type=keyword, id=prose(False), name=prose(False), input=_free, cache_control=_CACHE),
    "thinking": obj(type=keyword, thinking=_state, signature=_state),
    "redacted_thinking": obj(type=keyword, data=_state),
}


def _a_block(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, str):
        w.text(value, path, True)
        return
    if not isinstance(value, Mapping):
        raise _fail("content block", path)
    btype = value.get("type")
    if btype is not None and not isinstance(btype, str):
        raise _fail("content block type", path)
    if btype == "tool_result":
        obj(type=keyword, tool_use_id=prose(False), content=_a_content, is_error=number, cache_control=_CACHE)(
            w, value, path
        )
        return
    # A block type we do not know (search results, web search results …): its text is the
    # prompt, all the rest read freely.
    (_A_BLOCKS.get(btype or "") or obj(type=keyword, text=prose(what="text block")))(w, value, path)


def _a_content(w: _Walk, value: Any, path: Path) -> None:
    if value is None:
        return
    if isinstance(value, str):
        w.text(value, path, True)
    elif isinstance(value, list):
        for i, block in enumerate(value):
            _a_block(w, block, (*path, i))
    else:
        raise _fail("message content", path)


_A_MESSAGE = obj(role=keyword, content=_a_content)


def _a_message(w: _Walk, value: Any, path: Path) -> None:
    if not isinstance(value, Mapping):
        raise _fail("message", path)
    _A_MESSAGE(w, value, path)


def _a_system(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, list):
        for i, block in enumerate(value):
            _a_block(w, block, (*path, i))
    else:
        prose(True, what="system")(w, value, path)


_A_TOOL = obj(type=keyword, name=prose(False), description=prose(False), input_schema=_free, cache_control=_CACHE)
_A_FIELDS: dict[str, Spec] = {
    "model": replaced,
    "system": _a_system,
    "tools": listof(_A_TOOL, required="tools"),
    "messages": listof(_a_message, required="messages"),
    "tool_choice": obj(type=keyword, name=prose(False), disable_parallel_tool_use=number),
    "thinking": obj(type=keyword, budget_tokens=number),
    "metadata": _free_values,
    "stop_sequences": _stop,
    "service_tier": keyword,
    **{name: number for name in ("max_tokens", "stream", "temperature", "top_k", "top_p")},
}
_MESSAGES = ordered(("system", "tools"), **_A_FIELDS)

# -- OpenAI Responses ----------------------------------------------------------------------------


def _r_item(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, str):
        w.text(value, path, True)
        return
    if not isinstance(value, Mapping):
        raise _fail("input item", path)
    itype = value.get("type")
    if itype is not None and not isinstance(itype, str):
        raise _fail("input item type", path)
    (_R_ITEMS.get(itype or "message") or obj(type=keyword, encrypted_content=_state))(w, value, path)


def _r_output(w: _Walk, value: Any, path: Path) -> None:
    """A tool's output: a string, or content parts."""
    if isinstance(value, list):
        for i, part in enumerate(value):
            _content_part(w, part, (*path, i))
    else:
        prose(True)(w, value, path)


_R_SUMMARY = listof(obj(type=keyword, text=prose(False)))
_R_ITEMS: dict[str, Spec] = {
    "message": obj(type=keyword, role=keyword, content=_content, id=prose(False), status=keyword),
    "function_call": obj(
        type=keyword, id=prose(False), call_id=prose(False), name=prose(False), arguments=_arguments, status=keyword
    ),
    "function_call_output": obj(type=keyword, id=prose(False), call_id=prose(False), output=_r_output, status=keyword),
    "custom_tool_call_output": obj(type=keyword, id=prose(False), call_id=prose(False), output=_r_output),
    "reasoning": obj(
        type=keyword, id=prose(False), summary=_R_SUMMARY, content=_R_SUMMARY, encrypted_content=_state, status=keyword
    ),
}


def _r_input(w: _Walk, value: Any, path: Path) -> None:
    if isinstance(value, str):
        w.text(value, path, True)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _r_item(w, item, (*path, i))
    else:
        raise _fail("input", path)


_R_TOOL = obj(type=keyword, name=prose(False), description=prose(False), parameters=_free, strict=number)
_R_FIELDS: dict[str, Spec] = {
    **_COMMON,
    "instructions": prose(True),
    "input": _r_input,
    "tools": listof(_R_TOOL, required="tools"),
    "tool_choice": obj(type=keyword, name=prose(False)),
    "reasoning": obj(effort=keyword, summary=keyword, generate_summary=keyword),
    "text": obj(format=obj(type=keyword, name=prose(False), schema=_free, strict=number), verbosity=keyword),
    "include": listof(keyword),
    "previous_response_id": prose(False),
    "truncation": keyword,
    "max_output_tokens": number,
    "max_tool_calls": number,
    "prompt_cache_key": prose(False),
}
_RESPONSES = ordered(("instructions", "tools"), **_R_FIELDS)

_SCHEMAS: dict[str, tuple[Spec, str | None]] = {
    "chat": (_CHAT, "messages"),
    "completions": (_COMPLETIONS, None),
    "embeddings": (_EMBEDDINGS, "input"),
    "messages": (_MESSAGES, "messages"),
    "count_tokens": (_MESSAGES, "messages"),
    "responses": (_RESPONSES, None),
}


def extract_content(
    endpoint: str,
    body: Mapping[str, Any],
    *,
    decode_tokens: TokenDecoder | None = None,
    max_segments: int = MAX_SEGMENTS,
) -> Content:
    """Everything of ``body`` the upstream receives, with its JSON path, in document order.

    ``endpoint`` is the content schema: ``"chat"``, ``"completions"``, ``"embeddings"``,
    ``"responses"`` (OpenAI), ``"messages"`` or ``"count_tokens"`` (Anthropic); ``decode_tokens`` reads a
    prompt given as token ids (without it, token ids are opaque). Raises :class:`ContentError` on
    a shape that cannot be read (fail closed: an unreadable body is never forwarded).
    """
    schema = _SCHEMAS.get(endpoint)
    if schema is None:
        raise ContentError(f"unknown endpoint kind {endpoint!r}")
    if not isinstance(body, Mapping):
        raise _fail("request body", ())
    spec, required = schema
    if required is not None and required not in body:
        raise _fail(required, (required,))
    w = _Walk(decode_tokens, max_segments)
    try:
        spec(w, body, ())
    except RecursionError:
        raise ContentError(f"the request nests deeper than {MAX_DEPTH} levels") from None
    return Content(tuple(w.segments), tuple(w.opaque))


# -- writing back --------------------------------------------------------------------------------


def _encode_file(seg: Segment) -> str:
    """The file's text in the encoding it came in: ``via`` is its data-URI header, or empty for
    bare base64."""
    m = _DATA_URI.match(seg.via)
    params = m.group(2).lower() if m else ";base64"
    data = seg.text.encode(_charset(params) or "utf-8")
    if ";base64" in params:
        return seg.via + base64.b64encode(data).decode("ascii")
    return seg.via + quote(data, safe="")


def _written(seg: Segment) -> Any:
    if seg.kind == "state":
        raise VendorStateError(
            "vendor state (thinking, signatures, encrypted reasoning) holds identifiers and "
            "cannot be rewritten: the vendor would refuse it"
        )
    if seg.kind == "file":
        return _encode_file(seg)
    return seg.text  # text, tokens (sent as their decoded text), numbers (as a string)


def _parent(root: Any, path: Path) -> Any:
    parent = root
    for key in path[:-1]:
        parent = parent[key]
    return parent


def apply_content(body: Mapping[str, Any], content: Content, original: Content | None = None) -> dict[str, Any]:
    """A deep copy of ``body`` with ``content`` written back at its paths.

    With ``original`` (the content as extracted), only segments whose text changed are written;
    a prompt of token ids that changed is sent as its text, together with its sibling token
    lists (an API takes all strings or all token lists, never a mix), and a changed object key
    renames that key in place. Without it, every text segment is written.
    """
    new = copy.deepcopy(dict(body))
    if original is not None and len(original.segments) != len(content.segments):
        raise ContentError("stripped content does not match the request")
    changed = [
        seg for i, seg in enumerate(content.segments) if original is None or seg.text != original.segments[i].text
    ]
    token_parents = {seg.path[:-1] for seg in changed if seg.kind == "tokens"}
    if token_parents:
        changed_ids = {id(s) for s in changed}
        changed += [
            seg
            for seg in content.segments
            if seg.kind == "tokens" and id(seg) not in changed_ids and seg.path[:-1] in token_parents
        ]
    keys = sorted((s for s in changed if s.kind == "key"), key=lambda s: -len(s.path))
    for seg in changed:
        if seg.kind == "key":
            continue
        if seg.kind == "header":
            raise FileHeaderError(
                "an inline file's data-URI header holds an identifier and is not rewritten: "
                "send the file without its name or other parameters"
            )
        if not seg.path:
            raise ContentError("segment without a path")
        try:
            parent = _parent(new, seg.path)
            current = parent[seg.path[-1]]
            if seg.kind == "text" and not isinstance(current, str):
                raise TypeError
            parent[seg.path[-1]] = _written(seg)
        except (KeyError, IndexError, TypeError) as exc:
            raise _fail("segment path", seg.path) from exc
    for seg in keys:  # deepest first, so that the paths of the others still hold
        try:
            parent = _parent(new, seg.path)
            old = seg.path[-1]
            if not isinstance(parent, dict) or old not in parent:
                raise KeyError(old)
            if seg.text != old and seg.text in parent:
                raise ContentError("a stripped key collides with another key")
            renamed = {(seg.text if k == old else k): v for k, v in parent.items()}
            parent.clear()
            parent.update(renamed)
        except (KeyError, IndexError, TypeError) as exc:
            raise _fail("key path", seg.path) from exc
    return new
