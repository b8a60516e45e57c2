"""`tiergate scan PATH… | -`: classify files, folders or stdin offline, before an agent sends them.

Nothing is sent anywhere and no database is opened: the classifier runs in this process with the
``tiers`` settings of ``--config`` (the shipped defaults without one). Per file: the tier, per
entity type the number of findings and their line numbers (never the values) and what a shared
vendor would receive (``--show-stripped`` prints it). ``--format text|json|markdown``.

Exit status: the highest tier found (1, 2 or 3; 0 when no file was scanned); 4 on a usage or
read error. A progress bar goes to stderr on a terminal (``--progress`` / ``--no-progress``).
"""

from __future__ import annotations

import io
import sys
from typing import TYPE_CHECKING

import click

from gateway.commands._common import config_option, load_or_exit
from gateway.commands._scan_files import FileReport, Skipped, iter_files, read_text, scan_text
from gateway.commands._scan_render import render

if TYPE_CHECKING:
    from tiers import Classifier

__all__ = ["scan_command"]

EXIT_ERROR = 4


class ScanError(click.ClickException):
    """A usage or read error; its own status, as 1–3 are tiers."""

    exit_code = EXIT_ERROR


def _classifier(config_path: str | None) -> Classifier:
    from gateway.cache_files import cache_dir_for
    from gateway.prefilter import attach_prefilter
    from gateway.tables import build_classifier
    from tiers import RecognizerError, TiersConfig

    settings = load_or_exit(config_path) if config_path else None
    cfg = settings.tiers if settings is not None else TiersConfig()
    # A whole file is one long prompt; the gateway's per-request deadline is not the point here.
    cfg = cfg.model_copy(update={"deadline_seconds": None})
    try:
        clf = build_classifier(cfg, cache_dir_for(settings))
    except RecognizerError as exc:
        raise ScanError(str(exc)) from None
    # The first pass a gateway of these settings compiled, when its cache holds one: a folder of
    # code is read in about half the time (bench/RESULTS.md); never compiled here.
    if settings is None or settings.limits.prefilter:
        attach_prefilter(clf, cache_dir_for(settings), lambda: None, compile_missing=False)
    return clf


@click.command(name="scan")
@config_option
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="Report format.")  # fmt: skip
@click.option("--show-stripped", is_flag=True, help="Also print what a shared vendor would receive.")
@click.option("--tenant", default=None, help="Judge by this tenant's policy (default: the default policy).")
@click.option("--max-bytes", type=click.IntRange(1), default=20_000_000, show_default=True,
              help="Skip files larger than this.")  # fmt: skip
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: when stderr is a terminal).")  # fmt: skip
def scan_command(
    config_path: str | None,
    paths: tuple[str, ...],
    fmt: str,
    show_stripped: bool,
    tenant: str | None,
    max_bytes: int,
    progress: bool | None,
) -> None:
    """Classify files, folders or stdin (``-``) offline; exit status = the highest tier."""
    clf = _classifier(config_path)
    reports: list[FileReport] = []
    skipped: list[Skipped] = []
    targets: list[tuple[str, bytes | None, object]] = []
    for p in paths:
        if p == "-":
            targets.append(("-", sys.stdin.buffer.read(), None))
            continue
        for item in iter_files([p], max_bytes):
            if isinstance(item, Skipped):
                skipped.append(item)
            else:
                targets.append((item[0], None, item[1]))
    if not targets and any(s.why == "not found" for s in skipped):
        raise ScanError("no such file or folder: " + ", ".join(s.path for s in skipped if s.why == "not found"))
    show = sys.stderr.isatty() if progress is None else progress
    with click.progressbar(
        targets, label="scanning", file=sys.stderr if show else _Null(), item_show_func=lambda t: t[0] if t else ""
    ) as bar:
        for display, data, path in bar:
            if data is None:
                try:
                    data = path.read_bytes()  # type: ignore[attr-defined]  # a target without data has a path
                except OSError as exc:
                    skipped.append(Skipped(display, f"unreadable ({type(exc).__name__})"))
                    continue
            text = read_text(data)
            if text is None:
                skipped.append(Skipped(display, "binary"))
                continue
            reports.append(scan_text(clf, display, text, tenant=tenant, keep_stripped=show_stripped))
    click.echo(render(fmt, reports, skipped, show_stripped), nl=False)
    sys.exit(max((int(r.tier) for r in reports), default=0))


class _Null(io.StringIO):
    """A sink for the progress bar when it is not shown: a text stream that keeps nothing."""

    def write(self, s: str) -> int:
        return len(s)

    def isatty(self) -> bool:
        return False
