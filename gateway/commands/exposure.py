"""`tiergate exposure` commands: query the log, assess a vendor disclosure, list the stored
disclosures, match a document.

The logic lives in ``audit`` (the dashboard calls the same functions); this module parses options
and picks the output stream.
"""

from __future__ import annotations

import contextlib
import json
import sys
from datetime import UTC, datetime
from typing import Any, TextIO

import click

from gateway.commands._common import config_option
from gateway.commands.db import db_url_option, load_audit_settings, run_store

__all__ = ["exposure_group"]

REPORT_FORMATS = ["markdown", "json", "html", "pdf"]  # assess, drill, timeline


class AwareDateTime(click.ParamType):  # type: ignore[type-arg]  # generic in the pinned click, not in every release pyproject allows
    name = "datetime"

    def convert(self, value: Any, param: Any, ctx: Any) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            self.fail(f"{value!r} is not an ISO 8601 time", param, ctx)
        if parsed.tzinfo is None:
            self.fail(f"{value!r} has no time zone (add Z or +HH:MM)", param, ctx)
        return parsed


def _progress_printer(enabled: bool | None, what: str) -> Any:
    show = sys.stderr.isatty() if enabled is None else enabled
    if not show:
        return None
    return lambda n: click.echo(f"{n} {what}…", err=True)


@contextlib.contextmanager
def _output(path: str | None) -> Any:
    if path is None or path == "-":
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8", newline="") as fh:
        yield fh


progress_option = click.option(
    "--progress/--no-progress", default=None,
    help="Report progress on stderr (default: when stderr is a terminal).",
)  # fmt: skip
output_option = click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
                             help="Write to this file instead of stdout.")  # fmt: skip


@click.group(name="exposure")
def exposure_group() -> None:
    """Exposure queries and incident assessments."""


@exposure_group.command("query")
@config_option
@db_url_option
@click.option("--upstream", multiple=True, help="Our upstream name (repeatable; * matches any run).")
@click.option("--provider", multiple=True, help="Vendor / provider name (repeatable; case ignored; * patterns).")
@click.option("--model", multiple=True, help="Provider model name (repeatable; * matches any run).")
@click.option("--client-model", multiple=True, help="Model name the client asked for.")
@click.option("--since", "start", type=AwareDateTime(), help="Window start (inclusive, with zone).")
@click.option("--until", "end", type=AwareDateTime(), help="Window end (inclusive, with zone).")
@click.option("--min-tokens", type=click.IntRange(0), help="Prompt tokens at least.")
@click.option("--max-tokens", type=click.IntRange(0), help="Prompt tokens at most.")
@click.option("--tier", multiple=True, type=click.IntRange(1, 3), help="Tier (repeatable).")
@click.option("--tenant", multiple=True)
@click.option("--key", "key_id", multiple=True, help="Key id (repeatable).")
@click.option("--status", multiple=True,
              help="Outcome status: ok, upstream_error, integrity_error, refused, timeout, "
                   "client_closed, or pending (no outcome recorded).")  # fmt: skip
@click.option("--include-refused", is_flag=True, help="Also list requests refused before forwarding.")
@click.option("--limit", type=click.IntRange(1), default=None)
@click.option("--count", "count_only", is_flag=True, help="Print only the number of matches.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]),
              default="table", show_default=True)  # fmt: skip
@output_option
@progress_option
def query_command(config_path: str | None, db_url: str | None, upstream: tuple[str, ...],
                  provider: tuple[str, ...], model: tuple[str, ...], client_model: tuple[str, ...],
                  start: datetime | None, end: datetime | None, min_tokens: int | None,
                  max_tokens: int | None, tier: tuple[int, ...], tenant: tuple[str, ...],
                  key_id: tuple[str, ...], status: tuple[str, ...], include_refused: bool,
                  limit: int | None, count_only: bool, fmt: str, output: str | None,
                  progress: bool | None) -> None:  # fmt: skip
    """List audit rows matching every filter given, streamed in time order."""
    from audit.queries import ExposureFilter, count_rows, stream_rows
    from audit.report import write_rows

    flt = ExposureFilter(
        start=start, end=end, upstreams=upstream, providers=provider, models=model,
        client_models=client_model, min_prompt_tokens=min_tokens, max_prompt_tokens=max_tokens,
        tiers=tier, tenants=tenant, key_ids=key_id, statuses=status,
        forwarded_only=not include_refused,
    )  # fmt: skip
    settings = load_audit_settings(config_path, db_url)
    tick = _progress_printer(progress, "rows")

    async def work(store: Any) -> int:
        if count_only:
            return await count_rows(store.engine, flt)
        with _output(output) as out:
            return await write_rows(stream_rows(store.engine, flt, limit=limit), fmt, out, tick)

    n = run_store(settings, work)
    if count_only:
        click.echo(n)
    else:
        click.echo(f"{n} matching request(s)", err=True)


@exposure_group.command("assess")
@config_option
@db_url_option
@click.argument("disclosure", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="markdown",
              show_default=True, help="html: printable, one file; pdf: needs --output (or a pipe).")  # fmt: skip
@click.option(
    "--record", is_flag=True, help="A real incident: start the playbook's clock (steps `loaded` and `assessed`)."
)
@click.option("--actor", default=None, help="Who is loading it (required with --record).")
@click.option(
    "--tenant", default=None, help="Assess for this tenant only (its rows, its playbook); default platform-wide."
)
@output_option
def assess_command(config_path: str | None, db_url: str | None, disclosure: str, fmt: str,
                   record: bool, actor: str | None, tenant: str | None, output: str | None) -> None:  # fmt: skip
    """Assess a vendor disclosure (YAML) against the log; store the disclosure.

    With --record the disclosure starts its playbook's clock (``playbooks:`` in the config):
    record the next steps with `tiergate exposure step ID ...`.

    Exit status: 0 nothing matched; 10 matched, Tier 1 only; 20 sensitive data may be exposed
    (Tier 2 or 3 matched); 1 on errors (a bad disclosure file names the line).
    """
    from audit.disclosures import load_disclosure
    from audit.errors import DisclosureError
    from audit.incident import load_and_assess

    if record and not actor:
        raise click.UsageError("--record needs --actor (who loaded the disclosure)")
    if tenant is not None and not tenant.strip():
        raise click.UsageError("--tenant must name a tenant")
    try:
        spec, digest = load_disclosure(disclosure)
    except DisclosureError as exc:
        raise click.ClickException(f"{disclosure}: {exc}") from None
    settings = load_audit_settings(config_path, db_url)
    playbook = settings.playbooks.for_tenant(tenant)
    if record and playbook is None:
        click.echo("warning: no playbook is configured for this disclosure (playbooks: in the "
                   "config): the clock runs, but nobody is named for its steps", err=True)  # fmt: skip

    async def work(store: Any) -> Any:
        return await load_and_assess(store, spec, digest, tenant=tenant, playbook=playbook,
                                     actor=actor if record else None)  # fmt: skip

    result, timeline = run_store(settings, work)
    _write_report(_render(settings, result, timeline, fmt), output)
    sys.exit(result.verdict.exit_code)


def _render(settings: Any, result: Any, timeline: Any, fmt: str) -> str | bytes:
    """The report in ``fmt``: Markdown / JSON / printable HTML as text, PDF as bytes."""
    from audit.report import render_assessment_json, render_assessment_markdown
    from audit.vendors import review_vendors

    vendors = review_vendors(settings.vendors, result.providers, datetime.now(UTC).date(),
                             named=result.disclosure.providers)  # fmt: skip
    if fmt == "html":
        from audit.html_report import render_assessment_html

        return render_assessment_html(result, vendors, timeline)
    if fmt == "pdf":
        from audit.pdf_report import render_assessment_pdf

        return render_assessment_pdf(result, vendors, timeline)
    render = render_assessment_json if fmt == "json" else render_assessment_markdown
    return render(result, vendors, timeline)


def _write_report(report: str | bytes, output: str | None) -> None:
    if isinstance(report, bytes):
        if output is None or output == "-":
            if sys.stdout.isatty():
                raise click.UsageError("a PDF goes to a file: add --output report.pdf")
            sys.stdout.buffer.write(report)
            sys.stdout.flush()
        else:
            with open(output, "wb") as fh:
                fh.write(report)
        return
    with _output(output) as out:
        out.write(report)


@exposure_group.command("step")
@config_option
@db_url_option
@click.argument("disclosure_id", type=click.IntRange(1))
@click.argument("step", type=click.Choice(["assessed", "decided", "notified", "closed"]))
@click.option("--actor", required=True, help="Who did it.")
@click.option(
    "--reportable", type=click.Choice(["yes", "no"]), default=None, help="decided: is the incident reportable?"
)
@click.option("--reason", default=None, help="decided (required), closed: why.")
@click.option(
    "--party",
    type=click.Choice(["customers", "body"]),
    default=None,
    help="notified: the affected customers or the notified body.",
)
@click.option("--to", "to", default=None, help="notified: whom exactly (names, case number).")
def step_command(config_path: str | None, db_url: str | None, disclosure_id: int, step: str, actor: str,
                 reportable: str | None, reason: str | None, party: str | None, to: str | None) -> None:  # fmt: skip
    """Record one playbook step of a disclosure loaded with --record (an audit event with its
    time and actor); prints the timeline's clock."""
    from audit.incident import incident_step
    from audit.timeline_report import clock_line

    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> Any:
        return await incident_step(store, settings.playbooks, disclosure_id, step, actor=actor,
                                   reportable=None if reportable is None else reportable == "yes",
                                   reason=reason, party=party, to=to)  # fmt: skip

    timeline = run_store(settings, work)
    last = timeline.steps[-1]
    click.echo(json.dumps({"disclosure_id": disclosure_id, "step": last.step, "at": last.at.isoformat(),
                           "actor": last.actor, "drill": last.drill, **last.detail}))  # fmt: skip
    click.echo(f"{'DRILL ' if timeline.drill else ''}disclosure {disclosure_id}: {clock_line(timeline)}", err=True)


@exposure_group.command("drill")
@config_option
@db_url_option
@click.option("--actor", required=True, help="Who runs the drill.")
@click.option("--tenant", default=None, help="Rehearse this tenant's playbook on its rows only.")
@click.option(
    "--hours",
    type=click.FloatRange(min=0.01, max=24 * 90),
    default=24.0,
    show_default=True,
    help="The synthetic disclosure's window: the last this many hours of the log.",
)
@click.option(
    "--simulate",
    is_flag=True,
    help="Record every later step at once, as the playbook's owners (rehearses the records, not the people).",
)
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="markdown",
              show_default=True, help="html: printable, one file; pdf: needs --output (or a pipe).")  # fmt: skip
@output_option
def drill_command(config_path: str | None, db_url: str | None, actor: str, tenant: str | None, hours: float,
                  simulate: bool, fmt: str, output: str | None) -> None:  # fmt: skip
    """Rehearse the playbook: a synthetic disclosure (marked DRILL) against the live log.

    Records `loaded` and `assessed` (with the assessment's duration); the playbook's owners then
    record their steps with `tiergate exposure step ID ...` as in a real incident, and the
    timeline shows how long each took. Exit status 0 (a drill never reports a verdict as exit code).
    """
    from audit.drill import run_drill

    if tenant is not None and not tenant.strip():
        raise click.UsageError("--tenant must name a tenant")
    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> Any:
        return await run_drill(store, settings.playbooks, actor=actor, tenant=tenant, hours=hours,
                               simulate=simulate)  # fmt: skip

    result, timeline = run_store(settings, work)
    _write_report(_render(settings, result, timeline, fmt), output)
    did = result.disclosure_id
    if not simulate:
        click.echo(f"DRILL disclosure {did}: now run the playbook, e.g.\n"
                   f"  tiergate exposure step {did} decided --reportable no --reason ... --actor ...\n"
                   f"  tiergate exposure step {did} notified --party customers --to ... --actor ...\n"
                   f"  tiergate exposure timeline {did}", err=True)  # fmt: skip


@exposure_group.command("timeline")
@config_option
@db_url_option
@click.argument("disclosure_id", type=click.IntRange(1))
@click.option("--format", "fmt", type=click.Choice(REPORT_FORMATS), default="markdown",
              show_default=True, help="html: printable, one file; pdf: needs --output (or a pipe).")  # fmt: skip
@output_option
def timeline_command(config_path: str | None, db_url: str | None, disclosure_id: int, fmt: str,
                     output: str | None) -> None:  # fmt: skip
    """The stored disclosure assessed again, with its playbook timeline and clock."""
    from audit.incident import stored_incident

    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> Any:
        return await stored_incident(store, settings.playbooks, disclosure_id)

    result, timeline = run_store(settings, work)
    _write_report(_render(settings, result, timeline, fmt), output)


@exposure_group.command("match")
@config_option
@db_url_option
@click.option("--document", type=click.Path(exists=True, dir_okay=False), required=True,
              help="A text file; requests that carried exactly it (whole or as one message).")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]),
              default="table", show_default=True)  # fmt: skip
@output_option
@progress_option
def match_command(config_path: str | None, db_url: str | None, document: str, fmt: str,
                  output: str | None, progress: bool | None) -> None:  # fmt: skip
    """List requests whose prompt, or one of its messages, was exactly DOCUMENT.

    Matching uses the keyed fingerprint of the normalised text (Unicode NFKC, invisible
    characters dropped, whitespace collapsed); the document itself is never stored.
    """
    from audit import fingerprint, normalize_for_fingerprint
    from audit.matching import match_fingerprint
    from audit.report import write_rows

    try:
        with open(document, encoding="utf-8") as fh:
            text = fh.read()
    except UnicodeDecodeError:
        raise click.ClickException(f"{document}: not UTF-8 text") from None
    normalized = normalize_for_fingerprint(text)
    if not normalized:
        raise click.ClickException(f"{document}: the document is empty")
    settings = load_audit_settings(config_path, db_url)
    key = settings.secrets.fingerprint_key.get_secret_value().encode()  # type: ignore[union-attr]  # required by Settings
    fp = fingerprint(key, normalized)
    tick = _progress_printer(progress, "rows")

    async def work(store: Any) -> int:
        matched_on: dict[int, str] = {}

        async def rows() -> Any:
            async for m in match_fingerprint(store.engine, fp):
                matched_on[m.row.seq] = m.matched_on
                yield m.row

        out: TextIO
        with _output(output) as out:
            return await write_rows(rows(), fmt, out, tick,
                                    extra=lambda r: {"matched_on": matched_on.get(r.seq)})  # fmt: skip

    n = run_store(settings, work)
    click.echo(f"{n} request(s) carried this document", err=True)


@exposure_group.command("disclosures")
@config_option
@db_url_option
@click.option(
    "--tenant", default=None, help="Only what this tenant's admins see: its own disclosures and platform-wide ones."
)
@click.option("--limit", type=click.IntRange(1), default=None, help="The newest N only.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "markdown"]),
              default="table", show_default=True)  # fmt: skip
@output_option
def disclosures_command(config_path: str | None, db_url: str | None, tenant: str | None,
                        limit: int | None, fmt: str, output: str | None) -> None:  # fmt: skip
    """List the stored disclosures, newest first (an empty tenant: platform-wide).

    `tiergate exposure assess` and the dashboard store every disclosure they assess; the id is the
    one the dashboard shows at /admin/exposure/ID.
    """
    from audit.disclosure_report import write_disclosures
    from audit.disclosures import list_disclosures

    if tenant is not None and not tenant.strip():
        raise click.UsageError("--tenant must name a tenant")
    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> list[Any]:
        return await list_disclosures(store.engine, visible_to=tenant, limit=limit)

    items = run_store(settings, work)
    with _output(output) as out:
        n = write_disclosures(items, fmt, out)
    click.echo(f"{n} disclosure(s)", err=True)
