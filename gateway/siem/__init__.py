"""The signed event stream of the audit log for a SIEM (``siem`` settings; docs in
``audit/stream_format.py`` for the line format, ``streamer.py`` for delivery)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from gateway.siem.outbox import OutboxBusy

log = logging.getLogger("tiergate.siem")

__all__ = ["SiemConfigError", "build_streams", "deliver_once", "run_streams", "stream_key"]


class SiemConfigError(Exception):
    """The stream cannot start as configured (the message names the setting)."""


def stream_key(key_env: str | None) -> bytes:
    value = os.environ.get(key_env or "", "")
    if not key_env or len(value) < 16:
        raise SiemConfigError(f"siem.key_env: the variable {key_env!r} must hold the stream key (16+ characters)")
    return value.encode()


def build_streams(settings: Any, store: Any, registry: CollectorRegistry) -> list[Any]:
    """One :class:`~gateway.siem.streamer.SinkStream` per configured sink (not yet running)."""
    from gateway.siem.streamer import SiemMetrics, SinkStream, build_sink

    cfg = settings.siem
    key = stream_key(cfg.key_env)
    folder = Path(cfg.state_dir) if cfg.state_dir is not None else Path(settings.state_dir) / "siem"
    metrics = SiemMetrics(registry)
    streams = []
    for sink in cfg.sinks:
        try:
            streams.append(SinkStream(sink, cfg, store.engine, key, folder, build_sink(sink, os.environ.get), metrics))
        except OutboxBusy:
            log.info("siem sink %s is streamed by another process (its outbox is locked)", sink.name)
    return streams


async def deliver_once(streams: list[Any]) -> int:
    """Sign and deliver everything in the log now; returns the lines still undelivered."""
    left = 0
    for stream in streams:
        while await stream.fill():
            await stream.deliver()
        await stream.deliver()
        left += stream.outbox.count_pending()
        await stream.sink.aclose()
        stream.outbox.close()
    return left


@contextlib.asynccontextmanager
async def run_streams(settings: Any, store: Any, registry: CollectorRegistry) -> AsyncIterator[list[Any]]:
    """Start one stream task per sink for the lifetime of the block; stopped and flushed after."""
    streams = build_streams(settings, store, registry)
    tasks = [asyncio.create_task(s.run(), name=f"siem-{s.cfg.name}") for s in streams]
    try:
        yield streams
    finally:
        for stream in streams:
            stream.stopping.set()
        _, late = await asyncio.wait(tasks, timeout=5.0)
        for task in late:  # a read or a delivery that hangs: cancelled after all
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for stream in streams:
            await stream.aclose()
