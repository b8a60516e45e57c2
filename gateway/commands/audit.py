"""`tiergate audit` commands: verify the hash chain, write a checkpoint, purge old rows."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from gateway.commands._common import config_option
from gateway.commands.db import db_url_option, load_audit_settings, run_store

__all__ = ["audit_group"]

VERIFY_FAILED_EXIT = 3


@click.group(name="audit")
def audit_group() -> None:
    """Audit log maintenance: verify, checkpoint, purge."""


@audit_group.command("verify")
@config_option
@db_url_option
@click.option(
    "--checkpoint-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Signed checkpoints to check against (default: audit.checkpoint_dir).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--progress/--no-progress", default=None, help="Report progress on stderr (default: when stderr is a terminal)."
)
def verify_command(config_path: str | None, db_url: str | None, checkpoint_dir: str | None,
                   fmt: str, progress: bool | None) -> None:  # fmt: skip
    """Recompute the hash chain and report the first bad record.

    Exit status: 0 the log verifies; 3 tampering or loss was found.
    """
    settings = load_audit_settings(config_path, db_url)
    show = sys.stderr.isatty() if progress is None else progress

    def tick(n: int) -> None:
        click.echo(f"verified {n} records…", err=True)

    async def work(store: Any) -> Any:
        return await store.verify(checkpoint_dir, progress=tick if show else None)

    report = run_store(settings, work)
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(f"records: {report.records} (seq {report.first_seq}..{report.last_seq}, "
                   f"head {report.head_seq}); checkpoints matched: {report.checkpoints_checked}")  # fmt: skip
        if report.purged_through is not None:
            click.echo(f"purged through seq {report.purged_through} (anchored)")
        if report.unfinished_purge is not None:
            first, last = report.unfinished_purge
            click.echo(f"unfinished purge: records {first}..{last} were due for deletion and are "
                       "still present (an interrupted purge); the next `tiergate audit purge` "
                       "finishes it")  # fmt: skip
        if report.ok:
            click.echo("OK: the audit chain verifies")
        else:
            bad = report.first_bad
            click.echo(f"FAILED: first bad record: seq {bad.seq} ({bad.kind}): {bad.message}")
            for p in report.problems[1:]:
                click.echo(f"  also: seq {p.seq} ({p.kind}): {p.message}")
    if not report.ok:
        sys.exit(VERIFY_FAILED_EXIT)


@audit_group.command("checkpoint")
@config_option
@db_url_option
@click.option("--prune", is_flag=True,
              help="Then delete old checkpoint files beyond audit.checkpoint_keep that verify no "
                   "longer needs (the server does this after each checkpoint).")  # fmt: skip
def checkpoint_command(config_path: str | None, db_url: str | None, prune: bool) -> None:
    """Write a signed checkpoint of the chain head now."""
    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> Any:
        cp = await store.write_checkpoint()
        return cp, (await store.prune_checkpoints() if prune else None)

    cp, pruned = run_store(settings, work)
    click.echo(f"checkpoint at seq {cp.seq} ({cp.head_hash[:16]}…) in {settings.audit.checkpoint_dir}")
    if pruned is not None:
        click.echo(f"pruned {len(pruned.deleted)} old checkpoint(s); {pruned.kept} kept")
        if pruned.evidence:
            click.echo(f"{len(pruned.evidence)} old checkpoint(s) disagree with the log and were kept "
                       f"(first at seq {pruned.evidence[0]}): run `tiergate audit verify`", err=True)  # fmt: skip


@audit_group.command("purge")
@config_option
@db_url_option
@click.option("--batch-size", default=10_000, show_default=True, type=click.IntRange(1))
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Report each committed batch on stderr (default: when stderr is a terminal).",
)
def purge_command(config_path: str | None, db_url: str | None, batch_size: int,
                  progress: bool | None) -> None:  # fmt: skip
    """Delete audit rows older than audit.retention_days (never below 90 without a reason).

    Safe to interrupt: every batch commits on its own, the log verifies in between, and running
    the command again finishes the job.
    """
    settings = load_audit_settings(config_path, db_url)
    show = sys.stderr.isatty() if progress is None else progress

    def tick(done: int, through: int) -> None:
        click.echo(f"deleted through seq {done} of {through}…", err=True)

    async def work(store: Any) -> Any:
        return await store.purge(batch_size=batch_size, on_batch=tick if show else None)

    result = run_store(settings, work)
    if result.through_seq is None:
        click.echo(f"nothing older than {result.cutoff.isoformat()} to purge")
    else:
        click.echo(f"purged {result.total} records (seq {result.from_seq}..{result.through_seq}, "
                   f"older than {result.cutoff.isoformat()}); recorded as event {result.event_seq}")  # fmt: skip


@audit_group.command("verify-stream")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option(
    "--key-env",
    default="TIERGATE_SIEM_KEY",
    show_default=True,
    help="Environment variable holding the stream's HMAC key (siem.key_env).",
)
@click.option(
    "--first-n",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Number the file's first line must have (a rotated capture's later file: where the last ended + 1).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def verify_stream_command(path: str, key_env: str, first_n: int, fmt: str) -> None:
    """Check a received SIEM event stream (one line per record, syslog headers allowed): every
    signature, every line number without a hole, each line chained to the one before.

    Exit status: 0 the stream verifies; 3 an edited, missing, reordered or unreadable line.
    """
    import os

    from audit.stream_format import verify_lines

    key = os.environ.get(key_env, "")
    if not key:
        raise click.UsageError(f"the variable {key_env} holding the stream key is not set")
    with click.open_file(path, encoding="utf-8", errors="replace") as fh:
        report = verify_lines(fh, key.encode(), first_n=first_n)
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(f"lines: {report.lines} (n {report.first_n}..{report.last_n}); "
                   f"repeated deliveries: {report.repeated}")  # fmt: skip
        for label, items in (("bad signature on line", report.bad_signature), ("unreadable line", report.unreadable),
                             ("out of order: line", report.out_of_order),
                             ("not chained to the line before: line", report.broken_link)):  # fmt: skip
            for item in items:
                click.echo(f"{label} {item}")
        for first, last in report.missing:
            click.echo(f"missing: n {first}..{last}")
        for gap in report.gaps:
            click.echo(f"audit records {gap.get('from_seq')}..{gap.get('to_seq')} never streamed ({gap.get('reason')})")
        click.echo("stream verifies" if report.ok else "STREAM DOES NOT VERIFY")
    if not report.ok:
        sys.exit(VERIFY_FAILED_EXIT)


@audit_group.command("stream")
@config_option
@db_url_option
@click.option("--once", is_flag=True, help="Deliver what the log holds now, then exit.")
def stream_command(config_path: str | None, db_url: str | None, once: bool) -> None:
    """Run the SIEM event stream (``siem.sinks``) outside the gateway, until interrupted: with
    several replicas, here once (and ``siem.in_server: false``) rather than in every server.

    Exit status with --once: 0 everything was delivered; 1 lines are left in the outbox (the
    next run delivers them).
    """
    import asyncio

    from prometheus_client import CollectorRegistry

    from gateway.siem import SiemConfigError, build_streams, deliver_once, run_streams

    settings = load_audit_settings(config_path, db_url)
    if not settings.siem.sinks:
        raise click.UsageError("no siem.sinks configured")

    async def work(store: Any) -> int:
        if once:
            return await deliver_once(build_streams(settings, store, CollectorRegistry()))
        async with run_streams(settings, store, CollectorRegistry()):
            await asyncio.Event().wait()
        return 0

    try:
        left = run_store(settings, work)
    except SiemConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if once:
        click.echo(f"undelivered lines: {left}")
        if left:
            sys.exit(1)
