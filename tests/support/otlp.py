"""A real OTLP/HTTP trace receiver on 127.0.0.1: what a collector's ``/v1/traces`` does, decoded.

    with OtlpReceiver() as otlp:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.url)
        ...
        otlp.spans()        # every span received, as ReceivedSpan (name, kind, attributes, ids)

Bodies are ``ExportTraceServiceRequest`` protobufs (opentelemetry-proto's classes), as the SDK's
OTLP/HTTP exporter sends them; ``raw`` keeps every byte received, for "this text is nowhere" checks.
"""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

__all__ = ["OtlpReceiver", "ReceivedSpan"]


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    kind: int  # opentelemetry.proto.trace.v1.Span.SpanKind
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    status_code: int  # 0 unset, 1 ok, 2 error
    resource: dict[str, Any]


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    if which == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, which) if which else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


class OtlpReceiver:
    def __init__(self) -> None:
        self.requests: list[ExportTraceServiceRequest] = []
        self.raw: list[bytes] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest.FromString(body)
                with receiver._lock:
                    receiver.raw.append(body)
                    receiver.requests.append(request)
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def spans(self) -> list[ReceivedSpan]:
        out = []
        with self._lock:
            requests = list(self.requests)
        for request in requests:
            for rs in request.resource_spans:
                resource = _attrs(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        out.append(ReceivedSpan(s.name, s.kind, s.trace_id.hex(), s.span_id.hex(),
                                                s.parent_span_id.hex(), _attrs(s.attributes), s.status.code,
                                                resource))  # fmt: skip
        return out
