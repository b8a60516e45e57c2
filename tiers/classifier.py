"""The classifier: normalise -> scan -> findings -> tier, and stripping with the same findings.

``classify`` never raises: any exception, regex timeout or deadline overrun gives Tier 3 with
``failed_closed=True`` and a reason that names the failure, never the text.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from . import _presidio  # noqa: F401  # first: presidio without PyTorch (tiers/_presidio.py)
from presidio_analyzer import EntityRecognizer

from .config import TiersConfig
from .errors import RecognizerError
from .normalize import normalize_text, normalize_with_map
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


# Segments up to this many characters are scanned together (see Classifier._batch_findings), with
# a separator no recognizer's pattern spans in practice.
_BATCH_CHARS = 512
_SEPARATOR = "\n\x00\n"


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
        self._nlp = self._load_nlp(self.config.spacy_model) if self.config.spacy_model else None
        if self._scanner.others and self._nlp is None:
            names = ", ".join(r.name for r in self._scanner.others)
            raise RecognizerError(f"recognizers need an NLP model but none is configured: {names}")

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
            # The key or short text just before a long value is its context ("ssn": "…"): it is
            # scanned in front of it, and hits inside it are the batch's to report.
            lead = self._lead(content, i)
            checkpoint()
            for h in self._scanner.scan(lead + norm, checkpoint):
                if h.end <= len(lead):
                    continue
                hs, he = max(h.start - len(lead), 0), h.end - len(lead)
                s, e = _swallow_invisible(seg.text, *offsets.span(hs, he))
                out.append(Finding(h.entity, i, s, e, h.recognizer, h.score))
        out.extend(self._batch_findings(content, small, checkpoint))
        if self._nlp is not None:
            out.extend(self._nlp_findings(content, checkpoint))
        out.sort(key=lambda f: (f.segment, f.start))
        return out

    def _lead(self, content: Content, i: int) -> str:
        """The short segment before segment ``i`` (its key, or the message before), normalised
        and cut to the context window, with the batch's separator; empty if there is none."""
        if i == 0 or len(content.segments[i - 1].text) > _BATCH_CHARS:
            return ""
        prev = normalize_text(content.segments[i - 1].text)[-self.config.context_window :]
        return prev + _SEPARATOR if prev else ""

    def _batch_findings(
        self, content: Content, indexes: list[int], checkpoint: Callable[[], None]
    ) -> Iterable[Finding]:
        """Short segments (keys, enums, metadata values, short messages) scanned as one text: a
        scan costs ~15 µs however short its text, and a request may carry thousands of them.
        Neighbours also give each other context ("ssn": "…"). A hit that crosses a separator
        is kept in every segment it touches (a value split over two keys still counts)."""
        if not indexes:
            return
        norms = []
        maps = []
        starts = []
        pos = 0
        for i in indexes:
            norm, offsets = normalize_with_map(content.segments[i].text)
            norms.append(norm)
            maps.append(offsets)
            starts.append(pos)
            pos += len(norm) + len(_SEPARATOR)
        joined = _SEPARATOR.join(norms)
        checkpoint()
        for h in self._scanner.scan(joined, checkpoint):
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

    def classify(self, content: Content, tenant: str | None = None, floor: Tier = Tier.GENERAL) -> Decision:
        """The tier of ``content`` under the tenant's policy, never below ``floor``. Never raises."""
        try:
            policy = self.policy_for(tenant)
            floor = Tier(floor)
            limit = self.config.deadline_seconds
            checkpoint: Callable[[], None] = lambda: None
            if limit is not None:
                deadline = self._clock() + limit

                def checkpoint() -> None:
                    if self._clock() > deadline:
                        raise DeadlineExceeded

            found = self.findings(content, checkpoint)
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
        except DeadlineExceeded:
            return self._failed(f"deadline of {self.config.deadline_seconds} s exceeded")
        except TimeoutError:
            return self._failed("regex timeout")
        except Exception as exc:  # noqa: BLE001 -- fail closed on anything; the message may quote the text
            return self._failed(f"{type(exc).__name__} during analysis")

    @staticmethod
    def _failed(why: str) -> Decision:
        return Decision(Tier.RESTRICTED, (), (f"failed closed: {why}",), failed_closed=True)

    def strip(self, content: Content, decision: Decision) -> Stripped:
        """``content`` with every finding of ``decision`` replaced; raises ``StripError``."""
        return strip_content(content, decision)
