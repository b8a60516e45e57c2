"""The classifier: normalise -> scan -> findings -> tier, and stripping with the same findings.

``classify`` never raises: any exception, regex timeout or deadline overrun gives Tier 3 with
``failed_closed=True`` and a reason that names the failure, never the text.
"""

from __future__ import annotations

import re
import threading
import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from . import _presidio  # noqa: F401  # first: presidio without PyTorch (tiers/_presidio.py)
from presidio_analyzer import EntityRecognizer, PatternRecognizer

from .config import TiersConfig
from .errors import RecognizerError
from . import parts as _parts
from .normalize import OffsetMap, normalize_text, normalize_with_map
from .parts import sort_key
from .policy import Policy, load_policy
from .recognizers import build_registry
from .scanner import Scanner
from .stripping import strip_content
from .types import UNREADABLE, Content, Decision, Finding, Stripped, Tier

if TYPE_CHECKING:
    from presidio_analyzer.nlp_engine import SpacyNlpEngine

__all__ = ["Classifier", "DeadlineExceeded"]


def _swallow_invisible(text: str, s: int, e: int) -> tuple[int, int]:
    """Widen a span over the invisible characters right around it, so that stripping does not
    leave, say, a right-to-left override behind to garble the rest of the text."""
    while s > 0 and not text[s - 1].isascii() and normalize_text(text[s - 1]) == "":
        s -= 1
    while e < len(text) and not text[e].isascii() and normalize_text(text[e]) == "":
        e += 1
    return s, e


# Entities whose recognizers also read the text with percent-escapes as written. A credential's
# value is its spelling in most syntaxes (dotenv, YAML, JSON, shell, source code), and only some
# carriers (query strings, form bodies) decode it: read decoded only, ``DB_PASSWORD="ab%22cd"``
# ends at the decoded quote and ``aAAAABC%42`` reads as ``aAAAABCB``, too plain to be a token.
# The decoded reading stays, since some credentials are visible only decoded (an encoded query
# string inside a URL parameter: ``password%3Dhunter2``); the findings of both count, one value
# once (``_with_literal``). Backslash escapes are decoded only where they spell letters beyond
# ASCII (tiers/normalize.py), which end no value and make no token plainer: there the decoded
# reading serves secrets too, and a text with escapes but no "%" is read once.
_LITERAL_ENTITIES = frozenset({"SECRET"})

# Segments up to this many characters are scanned together (see Classifier._batch_findings), with
# a separator no recognizer's pattern spans in practice.
_BATCH_CHARS = 512
_SEPARATOR = "\n\x00\n"


_ESCAPED = re.compile(r"%[0-9A-Fa-f]{2}")
# Lines read literally before and after a line with an escape: a credential's value and what it
# is judged by (its key, a ``.netrc`` entry's ``machine`` / ``login`` lines) lie within these.
_LINES_BEFORE = 6
_LINES_AFTER = 1


def _escape_windows(text: str) -> list[tuple[int, int]]:
    """The line ranges of a long segment that the literal reading scans: those around an escape.
    Elsewhere both readings are the same text, and the decoded one has been scanned already; a
    long document with one ``%20`` in a URL is not scanned twice whole. Linear in the text: no
    line is searched more than once each way, however many escapes it holds."""
    out: list[tuple[int, int]] = []
    line_end = 0  # the end of the line of the last escape placed in a window
    for m in _ESCAPED.finditer(text):
        if m.start() < line_end:
            continue  # that line's window is made
        floor = out[-1][1] if out else 0
        if m.start() >= floor:
            lo = m.start()
            for _ in range(_LINES_BEFORE + 1):
                lo = text.rfind("\n", floor, lo)
                if lo < 0:
                    lo = floor - 1
                    break
            if not out or lo + 1 > floor:  # else it joins the window before
                out.append((lo + 1, m.end()))
        line_end = hi = _line_end(text, m.end())
        for _ in range(_LINES_AFTER):
            hi = _line_end(text, hi)
        out[-1] = (out[-1][0], max(out[-1][1], hi))
    return out


def _line_end(text: str, pos: int) -> int:
    """The offset after the line break that ends the line at ``pos`` (the text's end if none)."""
    k = text.find("\n", pos)
    return len(text) if k < 0 else k + 1


def _with_literal(found: list[Finding], literal: Iterable[Finding]) -> list[Finding]:
    """``found`` (of the decoded reading) with the findings of the literal one, each value
    counted once: a finding inside one of the same type and segment from the other reading gives
    way to it (the same span: the decoded one stays). One sweep in start order, so a long text
    full of secrets costs no more than sorting its findings."""
    tagged = sorted(
        [(f, 0) for f in found] + [(f, 1) for f in literal],
        key=lambda p: (p[0].segment, p[0].entity_type, p[0].start, -p[0].end, p[1]),
    )
    out: list[Finding] = []
    place: tuple[int, str] | None = None
    reach = [-1, -1]  # per reading, the furthest end of a finding kept at this place so far
    for f, tag in tagged:
        if (f.segment, f.entity_type) != place:
            place, reach = (f.segment, f.entity_type), [-1, -1]
        if reach[1 - tag] >= f.end:
            continue  # the other reading has a finding from at or before f.start to past f.end
        reach[tag] = max(reach[tag], f.end)
        out.append(f)
    return out


class DeadlineExceeded(Exception):
    """Analysis of one request took longer than ``TiersConfig.deadline_seconds``."""


class Classifier:
    """Built once at start-up (compiles every recognizer); ``classify`` and ``strip`` are
    thread-safe and keep no state between requests.

    ``clock`` is the only source of time (a seam for tests); ``extra_recognizers`` are added to
    the registry after the configured ones.
    """

    def __init__(
        self,
        config: TiersConfig | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        extra_recognizers: Iterable[EntityRecognizer] = (),
    ) -> None:
        self.config = config or TiersConfig()
        self._clock = clock
        self._policy = load_policy(self.config.policy)
        self._tenant_policies = {tenant: load_policy(path) for tenant, path in self.config.tenant_policies.items()}
        self.registry = build_registry(self.config)
        for rec in extra_recognizers:
            self.registry.add_recognizer(rec)
        self._scanner = Scanner(
            self.registry.recognizers,
            min_score=self.config.min_score,
            context_window=self.config.context_window,
            regex_timeout=self.config.regex_timeout_seconds,
        )
        # The secret recognizers once more, for the reading with escapes as written: compiled on
        # the first text whose escapes decode (a tenth of a second of CPU, most of a start's
        # second scanner), not at start-up. Their patterns are the main scanner's, which has
        # compiled (and so checked) every one of them already.
        self._literal_recognizers = [
            r
            for r in self.registry.recognizers
            if isinstance(r, PatternRecognizer) and _LITERAL_ENTITIES.intersection(r.supported_entities)
        ]
        self._literal: Scanner | None = None
        self._literal_lock = threading.Lock()
        self._nlp = self._load_nlp(self.config.spacy_model) if self.config.spacy_model else None
        if self._scanner.others and self._nlp is None:
            names = ", ".join(r.name for r in self._scanner.others)
            raise RecognizerError(f"recognizers need an NLP model but none is configured: {names}")

    # -- the first pass compiled ahead (tiers/prefilter.py) ----------------------------------------

    @property
    def prefilter_members(self) -> tuple[str, ...]:
        """The patterns a prefilter database is compiled from (``tiers.prefilter.compile_members``)."""
        return self._scanner.prefilter_members

    @property
    def prefilter_key(self) -> str:
        """The key a prefilter database of this classifier is compiled under."""
        return self._scanner.prefilter_key

    @property
    def prefiltered(self) -> bool:
        return self._scanner.prefiltered

    def attach_prefilter(self, key: str, blob: bytes) -> None:
        """Scan with the compiled first pass ``blob`` from now on; raises ``PrefilterError`` (and
        keeps the RE2 sets) when it was compiled from other patterns or cannot load here. The
        escaped-text scanner keeps its RE2 sets: it reads few texts, short ones."""
        self._scanner.attach_prefilter(key, blob)

    @property
    def _literal_scanner(self) -> Scanner:
        scanner = self._literal
        if scanner is None:
            with self._literal_lock:
                if self._literal is None:
                    self._literal = Scanner(
                        self._literal_recognizers,
                        min_score=self.config.min_score,
                        context_window=self.config.context_window,
                        regex_timeout=self.config.regex_timeout_seconds,
                    )
                scanner = self._literal
        return scanner

    @_literal_scanner.setter
    def _literal_scanner(self, scanner: Scanner) -> None:
        self._literal = scanner  # bench/secret_recall.py swaps it to measure what it adds

    # -- policy ---------------------------------------------------------------------------------

    def policy_for(self, tenant: str | None) -> Policy:
        """The tenant's own policy if one is configured, else the default policy."""
        if tenant is not None and tenant in self._tenant_policies:
            return self._tenant_policies[tenant]
        return self._policy

    # -- analysis -------------------------------------------------------------------------------

    def _load_nlp(self, name: str) -> SpacyNlpEngine:
        """The operator-installed spaCy model, or an error. Never downloads anything."""
        try:
            import spacy.util
        except ImportError:
            raise RecognizerError("spacy_model is set but spaCy is not installed") from None
        if not spacy.util.is_package(name):
            raise RecognizerError(f"spaCy model {name!r} is not installed (it is never downloaded)")
        from presidio_analyzer.nlp_engine import SpacyNlpEngine
        from presidio_analyzer.predefined_recognizers import SpacyRecognizer

        engine = SpacyNlpEngine(models=[{"lang_code": "en", "model_name": name}])
        engine.load()
        recognizer = SpacyRecognizer(supported_language="en")
        self.registry.add_recognizer(recognizer)
        self._scanner.others.append(recognizer)
        return engine

    def findings(self, content: Content, checkpoint: Callable[[], None] = lambda: None) -> list[Finding]:
        """Every identifier in ``content``, offsets in the original segment texts. May raise."""
        out: list[Finding] = []
        small: list[int] = []
        for i, seg in enumerate(content.segments):
            if not isinstance(seg.text, str):
                raise TypeError("segment text is not a string")
            if len(seg.text) <= _BATCH_CHARS:
                small.append(i)
                continue
            norm, offsets = normalize_with_map(seg.text)
            found = list(self._long_findings(self._scanner, content, i, norm, offsets, True, checkpoint))
            if "%" in seg.text:
                literal, literal_map = normalize_with_map(seg.text, percent=False)
                if literal != norm:
                    more = [
                        f
                        for lo, hi in _escape_windows(literal)
                        for f in self._long_findings(
                            self._literal_scanner, content, i, literal, literal_map, False, checkpoint, lo, hi
                        )
                    ]
                    found = _with_literal(found, more)
            out.extend(found)
        out.extend(self._batch_findings(content, small, checkpoint))
        if self._nlp is not None:
            out.extend(self._nlp_findings(content, checkpoint))
        # A total order: the same findings come out in the same order however they were found
        # (whole, or in parts: tiers/parts.py), so stripping labels a tie the same way.
        out.sort(key=sort_key)
        return out

    def _long_findings(
        self,
        scanner: Scanner,
        content: Content,
        i: int,
        norm: str,
        offsets: OffsetMap,
        percent: bool,
        checkpoint: Callable[[], None],
        lo: int = 0,
        hi: int | None = None,
    ) -> Iterable[Finding]:
        """Findings of ``scanner`` in segment ``i``, normalised to ``norm`` (with or without
        ``percent``-decoding), or in its lines ``norm[lo:hi]``."""
        text = content.segments[i].text
        # The key or short text just before a long value is its context ("ssn": "…"): it is
        # scanned in front of it, and hits inside it are the batch's to report.
        lead = self._lead(content, i, percent) if lo == 0 else ""
        checkpoint()
        for h in scanner.scan(lead + norm[lo:hi], checkpoint):
            if h.end <= len(lead):
                continue
            hs, he = max(h.start - len(lead), 0) + lo, h.end - len(lead) + lo
            s, e = _swallow_invisible(text, *offsets.span(hs, he))
            yield Finding(h.entity, i, s, e, h.recognizer, h.score)

    def _lead(self, content: Content, i: int, percent: bool = True) -> str:
        """The short segment before segment ``i`` (its key, or the message before), normalised
        and cut to the context window, with the batch's separator and a blank line; empty if
        there is none. The blank line ends the lead's block: a table at the top of segment ``i``
        keeps its own first line as its header row (else every cell below looked up the
        lead's line, and a CSV sent after a system prompt lost its company and birth columns)."""
        if i == 0 or len(content.segments[i - 1].text) > _BATCH_CHARS:
            return ""
        prev = normalize_with_map(content.segments[i - 1].text, percent=percent)[0][-self.config.context_window :]
        return prev + _SEPARATOR + "\n" if prev else ""

    def _batch_findings(self, content: Content, indexes: list[int], checkpoint: Callable[[], None]) -> list[Finding]:
        """Short segments (keys, enums, metadata values, short messages) scanned as one text: a
        scan costs ~15 µs however short its text, and a request may carry thousands of them.
        Neighbours also give each other context ("ssn": "…"). A hit that crosses a separator
        is kept in every segment it touches (a value split over two keys still counts)."""
        if not indexes:
            return []
        texts = [content.segments[i].text for i in indexes]
        decoded = [normalize_with_map(t) for t in texts]
        found = list(self._joined_findings(self._scanner, content, indexes, decoded, checkpoint))
        literal = [normalize_with_map(t, percent=False) if "%" in t else d for t, d in zip(texts, decoded)]
        if any(lit[0] != dec[0] for lit, dec in zip(literal, decoded)):
            more = self._joined_findings(self._literal_scanner, content, indexes, literal, checkpoint)
            found = _with_literal(found, more)
        return found

    def _joined_findings(
        self,
        scanner: Scanner,
        content: Content,
        indexes: list[int],
        normalised: list[tuple[str, OffsetMap]],
        checkpoint: Callable[[], None],
    ) -> Iterable[Finding]:
        """Findings of ``scanner`` in the segments ``indexes``, normalised to ``normalised``,
        scanned joined by the separator."""
        norms = [norm for norm, _ in normalised]
        maps = [offsets for _, offsets in normalised]
        starts = []
        pos = 0
        for norm in norms:
            starts.append(pos)
            pos += len(norm) + len(_SEPARATOR)
        joined = _SEPARATOR.join(norms)
        checkpoint()
        for h in scanner.scan(joined, checkpoint):
            k = max(0, bisect_right(starts, h.start) - 1)
            while k < len(indexes) and starts[k] < h.end:
                lo = max(h.start, starts[k]) - starts[k]
                hi = min(h.end, starts[k] + len(norms[k])) - starts[k]
                if hi > lo:
                    seg = content.segments[indexes[k]]
                    s, e = _swallow_invisible(seg.text, *maps[k].span(lo, hi))
                    yield Finding(h.entity, indexes[k], s, e, h.recognizer, h.score)
                k += 1

    def _nlp_findings(self, content: Content, checkpoint: Callable[[], None]) -> Iterable[Finding]:
        assert self._nlp is not None
        for i, seg in enumerate(content.segments):
            norm, offsets = normalize_with_map(seg.text)
            if not norm:
                continue
            artifacts = self._nlp.process_text(norm, "en")
            for rec in self._scanner.others:
                for r in rec.analyze(norm, rec.supported_entities, artifacts) or ():
                    if r.score >= self.config.min_score and r.end > r.start:
                        s, e = offsets.span(r.start, r.end)
                        yield Finding(r.entity_type, i, s, e, rec.name, r.score)
            checkpoint()

    def classify(
        self,
        content: Content,
        tenant: str | None = None,
        floor: Tier = Tier.GENERAL,
        *,
        found: Sequence[Finding] | str | None = None,
    ) -> Decision:
        """The tier of ``content`` under the tenant's policy, never below ``floor``. Never raises.

        ``found``: the findings made already (the merged parts of ``part_findings``), or why
        making one of them failed (the request then fails closed); None: made here."""
        if found is None:
            found = self._guarded(lambda checkpoint: self.findings(content, checkpoint))
        if isinstance(found, str):
            return self._failed(found)
        try:
            return self._decide(content, found, tenant, floor)
        except Exception as exc:  # noqa: BLE001 -- fail closed on anything; the message may quote the text
            return self._failed(f"{type(exc).__name__} during analysis")

    @property
    def splittable(self) -> bool:
        """Whether ``part_findings`` may stand in for ``findings`` (not with an NLP model, whose
        entities depend on the whole text)."""
        return self._nlp is None

    def part_findings(
        self,
        content: Content,
        part: int,
        parts: int,
        *,
        split_at: int = _parts.SPLIT_AT,
        overlap: int = _parts.OVERLAP,
    ) -> list[Finding] | str:
        """Share ``part`` of ``parts`` of the findings of ``content`` (tiers/parts.py), under the
        deadline as a whole classification is, or why it failed. Never raises."""
        return self._guarded(
            lambda checkpoint: _parts.part_findings(
                self, content, part, parts, checkpoint, split_at=split_at, overlap=overlap
            )
        )

    def _guarded(self, run: Callable[[Callable[[], None]], list[Finding]]) -> list[Finding] | str:
        """``run(checkpoint)``, or the reason it failed: the deadline (on ``clock``, from now), a
        regex timeout or any error. The reason names the failure, never the text."""
        try:
            limit = self.config.deadline_seconds
            checkpoint: Callable[[], None] = lambda: None
            if limit is not None:
                deadline = self._clock() + limit

                def checkpoint() -> None:
                    if self._clock() > deadline:
                        raise DeadlineExceeded

            return run(checkpoint)
        except DeadlineExceeded:
            return f"deadline of {self.config.deadline_seconds} s exceeded"
        except TimeoutError:
            return "regex timeout"
        except Exception as exc:  # noqa: BLE001 -- fail closed on anything; the message may quote the text
            return f"{type(exc).__name__} during analysis"

    def _decide(self, content: Content, found: Sequence[Finding], tenant: str | None, floor: Tier) -> Decision:
        policy = self.policy_for(tenant)
        floor = Tier(floor)
        if len(found) > self.config.max_findings:
            return self._failed(f"more than {self.config.max_findings} findings")
        tier = floor
        reasons: list[str] = []
        counts = Counter(f.entity_type for f in found)
        unreadable = len(content.opaque)
        if unreadable:
            counts[UNREADABLE] = unreadable
        for entity in sorted(counts):
            entity_floor = policy.floor(entity)
            tier = max(tier, entity_floor)
            reasons.append(f"{entity} x{counts[entity]}: tier {int(entity_floor)}")
        if unreadable:
            kinds = ", ".join(sorted({o.what for o in content.opaque}))
            reasons.append(f"could not read: {kinds}")
        if floor > Tier.GENERAL:
            reasons.append(f"client floor: tier {int(floor)}")
        return Decision(Tier(tier), tuple(found), tuple(reasons), unreadable=unreadable)

    @staticmethod
    def _failed(why: str) -> Decision:
        return Decision(Tier.RESTRICTED, (), (f"failed closed: {why}",), failed_closed=True)

    def strip(self, content: Content, decision: Decision) -> Stripped:
        """``content`` with every finding of ``decision`` replaced; raises ``StripError``."""
        return strip_content(content, decision)
