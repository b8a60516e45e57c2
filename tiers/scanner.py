"""The fast path: runs every recognizer of the registry over one normalised text.

Presidio's ``AnalyzerEngine`` runs each pattern with Python's backtracking ``regex`` module
(≈ 0.2–0.5 MB/s here, and a pattern that times out is skipped with a warning: failing open).
The scanner instead runs each pattern with RE2 (linear time, no timeouts to skip), hands each
candidate to the recognizer's own presidio ``validate_result`` / ``invalidate_result``, and
matches term lists with Aho-Corasick. Patterns RE2 cannot run (look-arounds, back-references)
are located by a loosened RE2 pattern and confirmed with the original, under a timeout, only in
small windows; a timeout raises, and the classifier fails closed.

Weak patterns (score below ``min_score``) count only with a context word of their recognizer
within ``context_window`` characters; when no context word occurs anywhere in the text, they are
not run at all.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, compress
from typing import Any

import ahocorasick
import numpy as np
import re2
import regex
from presidio_analyzer import EntityRecognizer, PatternRecognizer

from ._context import ContextIndex, keyed_as_quantity, phrase_key, power_of_two
from ._re2_raw import NO_MATCH, SpanMatcher, spans_of
from ._relax import relax
from .errors import RecognizerError
from .normalize import normalize_text
from .prefilter import FirstPass, FirstPassChoice, Prefilter, PrefilterError, key_of
from .recognizers._base import TermRecognizer

__all__ = ["Hit", "Scanner", "find_terms"]

_WORD = re.compile(r"[a-z0-9]+")
_CONTEXT_BOOST = 0.35  # presidio's LemmaContextAwareEnhancer defaults
_CONTEXT_MIN = 0.4
_WINDOW = 96  # characters around a loose match searched by the original pattern
_WEAK_MARGIN = 64  # characters beyond the context window scanned for a weak pattern's candidates
_SET_SIZE = 32  # patterns per RE2 set (see Scanner.__init__)
_RE2_OPTIONS = re2.Options()
_RE2_OPTIONS.max_mem = 64 << 20
_RE2_OPTIONS.log_errors = False


@dataclass(frozen=True, slots=True)
class Hit:
    """One accepted match, in offsets of the normalised text."""

    entity: str
    start: int
    end: int
    recognizer: str
    score: float


def _inline_flags(flags: int | None) -> str:
    if not flags:
        return ""
    out = ""
    if flags & re.IGNORECASE:
        out += "i"
    if flags & re.MULTILINE:
        out += "m"
    if flags & re.DOTALL:
        out += "s"
    return f"(?{out})" if out else ""


@dataclass(slots=True)
class _Compiled:
    rec: PatternRecognizer
    entity: str
    name: str
    score: float
    fast: Any  # re2 regexp (re2 publishes no types)
    loose: Any  # re2 regexp used as prefilter for `slow`
    slow: regex.Pattern[str] | None
    value_group: int | None


def _middle(subject: bytes, size: int) -> bytes:
    """About ``size`` bytes of the middle of ``subject`` (UTF-8), cut at whole characters:
    Vectorscan's UTF-8 mode leaves the scan of a cut one undefined."""
    start = max((len(subject) - size) // 2, 0)
    end = min(start + size, len(subject))
    while end < len(subject) and subject[end] & 0xC0 == 0x80:
        end += 1
    while start < end and subject[start] & 0xC0 == 0x80:
        start += 1
    return subject[start:end]


def _halves(piece: bytes) -> tuple[bytes, bytes]:
    """``piece`` (whole UTF-8 characters) cut near its middle between two characters."""
    cut = len(piece) // 2
    while cut < len(piece) and piece[cut] & 0xC0 == 0x80:
        cut += 1
    return piece[:cut], piece[cut:]


class _TermMatcher:
    """One Aho-Corasick automaton over a term recognizer's terms. Terms match whole words,
    case-insensitively, with any run of white space (line breaks included) where the term has
    one space: a name wrapped across lines or spaced out is still the name."""

    def __init__(self, rec: TermRecognizer) -> None:
        self.rec = rec
        self.automaton = ahocorasick.Automaton()
        self.multiword = False
        for entity, terms in rec.terms.items():
            for term in terms:
                key = " ".join(normalize_text(term).lower().split())
                if key:
                    self.automaton.add_word(key, (entity, len(key)))
                    self.multiword = self.multiword or " " in key
        self.empty = len(self.automaton) == 0
        if not self.empty:
            self.automaton.make_automaton()

    def find(self, lowered: str) -> Iterator[tuple[str, int, int]]:
        if self.empty:
            return
        # Only a term of several words needs the text's white-space runs made single spaces.
        squeezed = _WHITE_RUN.sub(" ", lowered) if self.multiword else lowered
        n = len(squeezed)
        marks: list[int] | None = None
        shifts: list[int] = []
        for end_idx, (entity, length) in self.automaton.iter(squeezed):
            start, end = end_idx - length + 1, end_idx + 1
            # whole words only: the neighbours must not be letters, digits or underscores
            if start > 0 and (squeezed[start - 1].isalnum() or squeezed[start - 1] == "_"):
                continue
            if end < n and (squeezed[end].isalnum() or squeezed[end] == "_"):
                continue
            if squeezed is not lowered:
                if marks is None:
                    marks, shifts = _squeezed_runs(lowered)
                start, end = _unsqueeze(start, marks, shifts), _unsqueeze(end - 1, marks, shifts) + 1
            yield entity, start, end


# white space that is not one plain space: a run of two or more, or a tab, line break …
_WHITE_RUN = re.compile(r"\s{2,}|[^\S ]")


def _squeezed_runs(text: str) -> tuple[list[int], list[int]]:
    """Where ``_WHITE_RUN.sub(" ", text)`` put each single space (``marks``), and how far the
    original is ahead after each (``shifts``)."""
    marks: list[int] = []
    shifts: list[int] = []
    shift = 0
    for m in _WHITE_RUN.finditer(text):
        a, b = m.span()
        marks.append(a - shift)
        shift += b - a - 1
        shifts.append(shift)
    return marks, shifts


def _unsqueeze(pos: int, marks: list[int], shifts: list[int]) -> int:
    """The original offset of ``pos`` (never one of the squeezed spaces) in the squeezed text."""
    k = bisect_left(marks, pos) - 1
    return pos + (shifts[k] if k >= 0 else 0)


_term_cache: dict[int, _TermMatcher] = {}


def _lower_same_length(text: str) -> str:
    low = text.lower()
    if len(low) == len(text):
        return low
    # A few characters lower-case to two (e.g. U+0130); keep offsets aligned by leaving them.
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def find_terms(rec: TermRecognizer, text: str) -> list[tuple[str, int, int]]:
    """Whole-word, case-insensitive occurrences of ``rec``'s terms in (normalised) ``text``."""
    matcher = _term_cache.get(id(rec))
    if matcher is None or matcher.rec is not rec:
        matcher = _term_cache[id(rec)] = _TermMatcher(rec)
    return list(matcher.find(_lower_same_length(text)))


class Scanner:
    """Compiled form of a recognizer registry. Immutable after construction; thread-safe."""

    def __init__(
        self,
        recognizers: Iterable[EntityRecognizer],
        *,
        min_score: float,
        context_window: int,
        regex_timeout: float = 1.0,
    ) -> None:
        self.min_score = min_score
        self.regex_timeout = regex_timeout
        self.context_window = context_window
        self._patterns: list[_Compiled] = []
        self._terms: list[_TermMatcher] = []
        self._context: dict[int, set[str]] = {}
        self.others: list[EntityRecognizer] = []
        for rec in recognizers:
            if isinstance(rec, TermRecognizer):
                self._terms.append(_TermMatcher(rec))
            elif isinstance(rec, PatternRecognizer):
                self._add_pattern_recognizer(rec)
            else:
                self.others.append(rec)
        # the patterns another pattern of their recognizer and entity runs after (see scan's covers)
        followed: set[int] = set()
        later: set[tuple[int, str]] = set()
        for c in reversed(self._patterns):
            if (id(c.rec), c.entity) in later:
                followed.add(id(c))
            later.add((id(c.rec), c.entity))
        self._followed = frozenset(followed)
        weak = {id(c.rec) for c in self._patterns if c.score < min_score}
        owners: dict[str, list[int]] = {}
        phrases: set[str] = set()
        for key, words in self._context.items():
            if key in weak:
                for phrase in words:
                    keys = owners.setdefault(phrase_key(phrase), [])
                    if key not in keys:
                        keys.append(key)
                    phrases.add(phrase)
        self._contexts = ContextIndex(owners, phrases, _RE2_OPTIONS)
        # Weak patterns stay out of the combined set: they only run near context words anyway,
        # and their counted digit runs (\d{8,17}) blow up the set's DFA on digit-heavy text.
        # Several small sets rather than one: one set of all (hundreds of) patterns outgrows its
        # DFA memory on real code and falls back to a pass many times slower than running every
        # pattern (8 s against 1.3 s on 3 MB with 350 patterns).
        fast = [c for c in self._patterns if c.fast is not None and c.score >= min_score]
        place = {id(c): i for i, c in enumerate(self._patterns)}
        # Which patterns a scan runs, one byte each in ``_patterns`` order (1: run it), and a
        # spare last byte that the sets' sentinels set (``compress`` stops before it). Set members
        # start at 0 and a set's pass turns on the few that matched: a 1 KB prompt then costs a
        # step per match rather than a Python step per pattern (hundreds: most of its scan).
        spare = len(self._patterns)
        self._base_mask = bytearray(b"\x01") * (spare + 1)
        # (re2 Set, each of its answers' place in ``_patterns`` (the sentinel's: spare), sentinel)
        self._sets: list[tuple[Any, tuple[int, ...], int]] = []
        # A recognizer whose patterns may start at nearly every word of code (``OWN_SET``: a key
        # before "=") gets sets of its own. Sharing a set, their DFA states multiplied with the
        # others': the 32 patterns holding the assignment patterns took 270-390 ms on 3 MB of
        # code, as two sets 20-170 ms, at 1 KB the same (bench/scan_sets.py, bench/RESULTS.md).
        shared = [c for c in fast if not getattr(c.rec, "OWN_SET", False)]
        own: dict[int, list[_Compiled]] = {}
        for c in fast:
            if getattr(c.rec, "OWN_SET", False):
                own.setdefault(id(c.rec), []).append(c)
        # Patterns every match of which holds one of a few strings (``LITERALS``: provider tokens'
        # prefixes) go into sets of their own, and a set of theirs runs only where one of its
        # members' strings occurs: one pass over all those strings (a DFA of literals) says which.
        # Prose holds none of them, and most code few: most of those sets' passes (ten of the
        # fifteen sets when this was written) are not run at all.
        literals_of: dict[int, tuple[str, ...]] = {
            id(c): getattr(c.rec, "LITERALS", {}).get(c.name, ()) for c in shared
        }
        gated = sorted((c for c in shared if literals_of[id(c)]), key=lambda c: -min(map(len, literals_of[id(c)])))
        shared = [c for c in shared if not literals_of[id(c)]]
        groups = [shared[start : start + _SET_SIZE] for start in range(0, len(shared), _SET_SIZE)]
        groups += [mine[start : start + _SET_SIZE] for mine in own.values() for start in range(0, len(mine), _SET_SIZE)]
        ungated = len(groups)
        groups += [gated[start : start + _SET_SIZE] for start in range(0, len(gated), _SET_SIZE)]
        # One gate pass before the sets, over the strings that turn gated sets on and the words
        # that ``REQUIRES`` asks for (below): one DFA of literals and words, a pass less than two.
        gate = re2.Set.SearchSet(_RE2_OPTIONS)
        turns_on: dict[str, set[int]] = {}  # literal -> the gated sets (numbered from 0) it turns on
        for k, members in enumerate(groups[ungated:]):
            for c in members:
                for lit in literals_of[id(c)]:
                    turns_on.setdefault(lit, set()).add(k)
        # member of the gate -> the gated sets it turns on
        self._turns_on: dict[int, tuple[int, ...]] = {
            gate.Add(re2.escape(lit)): tuple(ks) for lit, ks in turns_on.items()
        }
        self._ungated = ungated
        for members in groups:
            one = re2.Set.SearchSet(_RE2_OPTIONS)
            for c in members:
                one.Add(c.fast.pattern)
                self._base_mask[place[id(c)]] = 0
            # A pattern that matches only at the very end of the text: RE2's Set reports an empty
            # list both for "nothing matched" and for "gave up" (DFA out of memory). Without the
            # sentinel in the answer the pass did not reach the end, and its members all run.
            sentinel = one.Add(r"\z")
            one.Compile()
            self._sets.append((one, (*(place[id(c)] for c in members), spare), sentinel))
        # Weak patterns by recognizer, as bits over the byte table (bit k: byte k, little-endian).
        self._weak_bits_of: dict[int, int] = {}
        for i, c in enumerate(self._patterns):
            if c.score < min_score:
                self._weak_bits_of[id(c.rec)] = self._weak_bits_of.get(id(c.rec), 0) | (1 << (8 * i))
        self._weak_bits = 0
        for bits in self._weak_bits_of.values():
            self._weak_bits |= bits
        # Patterns that count only where the text holds some word anywhere (a recognizer's
        # ``REQUIRES``: pattern name -> RE2 regex, e.g. a date in a table cell needs a birth word
        # in a header or cell): in the gate pass, and a pattern whose word is absent does not run.
        needs = [(i, src) for i, c in enumerate(self._patterns) if (src := getattr(c.rec, "REQUIRES", {}).get(c.name))]
        self._required = [(place, gate.Add(src)) for place, src in needs]  # (place in ``_patterns``, member)
        self._gate: tuple[Any, int] | None = None  # (re2 Set, sentinel)
        if self._turns_on or self._required:
            sentinel = gate.Add(r"\z")
            gate.Compile()
            self._gate = (gate, sentinel)
        # The same first pass compiled ahead by Vectorscan, once attached (tiers/prefilter.py): every
        # set member (gated ones too: it needs no gate) and, as an RE2 set, the REQUIRES words alone.
        self._members = tuple(c.fast.pattern for c in fast)
        self._member_places = tuple(place[id(c)] for c in fast)
        self._prefilter: Prefilter | None = None
        self._prefilter_key: str | None = None
        self._choice = FirstPassChoice()
        self._required_gate: tuple[Any, int] | None = None
        self._required_alone: list[tuple[int, int]] = []  # (place in ``_patterns``, member)
        if needs:
            words = re2.Set.SearchSet(_RE2_OPTIONS)
            self._required_alone = [(place, words.Add(src)) for place, src in needs]
            sentinel = words.Add(r"\z")
            words.Compile()
            self._required_gate = (words, sentinel)

    def _add_pattern_recognizer(self, rec: PatternRecognizer) -> None:
        entity = rec.supported_entities[0]
        flags = _inline_flags(getattr(rec, "global_regex_flags", None))
        # Context words match as whole words ("check" must not fire on "checksum"); one RE2
        # pass per scan over all recognizers' words lists where they occur, and a candidate
        # looks them up by bisection.
        # Normalised like the text ("persönliche" -> "personliche", "sécurité" -> "securite").
        context = {" ".join(words) for w in (rec.context or []) if (words := _WORD.findall(normalize_text(w).lower()))}
        if context:
            self._context[id(rec)] = context
        patterns = list(rec.patterns)
        if getattr(rec, "deny_list", None):
            # Presidio turns a deny list into a look-behind regex; run it as a term list instead.
            patterns = [p for p in patterns if p.name != "deny_list"]
            terms = TermRecognizer({entity: rec.deny_list}, name=rec.name, score=rec.deny_list_score)
            self._terms.append(_TermMatcher(terms))
        for pat in patterns:
            if pat.score < self.min_score and not context:
                continue  # can never reach the threshold
            source = flags + pat.regex
            try:
                fast = re2.compile(source, _RE2_OPTIONS)
            except re2.error:
                fast = None
            if fast is not None:
                group = fast.groupindex.get("value")
                self._patterns.append(_Compiled(rec, entity, pat.name, pat.score, fast, None, None, group))
                continue
            try:
                slow = regex.compile(pat.regex, rec.global_regex_flags or 0)
            except regex.error as exc:
                raise RecognizerError(f"{rec.name}: pattern {pat.name!r} does not compile: {exc}") from None
            try:
                loose = re2.compile(flags + relax(pat.regex), _RE2_OPTIONS)
            except re2.error:
                loose = None  # run the original over the whole text (still under a timeout)
            group = slow.groupindex.get("value")
            self._patterns.append(_Compiled(rec, entity, pat.name, pat.score, None, loose, slow, group))

    # -- the first pass compiled ahead ------------------------------------------------------------

    @property
    def prefilter_members(self) -> tuple[str, ...]:
        """The patterns a prefilter database must be compiled from (``prefilter.compile_members``),
        in order."""
        return self._members

    @property
    def prefilter_key(self) -> str:
        if self._prefilter_key is None:  # a few milliseconds: not at every build of a scanner
            self._prefilter_key = key_of(self._members)
        return self._prefilter_key

    @property
    def prefiltered(self) -> bool:
        """Whether scans take their first pass from an attached prefilter."""
        return self._prefilter is not None

    def attach_prefilter(self, key: str, blob: bytes) -> None:
        """Take the first pass from ``blob`` (``compile_members(self.prefilter_members)``, compiled
        under ``key``) from now on; raises ``PrefilterError`` and changes nothing if it does not fit."""
        if key != self.prefilter_key:
            raise PrefilterError("the prefilter database was compiled from other patterns")
        self._choice = FirstPassChoice()
        self._prefilter = Prefilter(blob, len(self._members), key)

    @property
    def slow_patterns(self) -> tuple[str, ...]:
        """``recognizer.pattern`` names of the patterns RE2 cannot run (backtracking fallback)."""
        return tuple(f"{c.rec.name}.{c.name}" for c in self._patterns if c.fast is None)

    # -- scanning -------------------------------------------------------------------------------

    def scan(self, text: str, checkpoint: Callable[[], None]) -> list[Hit]:
        """All accepted hits in ``text`` (normalised), deduplicated per recognizer and span."""
        if not text:
            return []
        subject = text.encode("utf-8")
        to_char = _identity if len(subject) == len(text) else _CharIndex(subject)
        run = None
        if self._prefilter is not None:
            plan = self._choice.choose(len(subject))
            if plan.prefilter or len(subject) >= FirstPassChoice.LONG:  # a short text teaches nothing
                run = self._first_pass(subject, plan)
        if run is None:
            run = self._set_passes(subject)
        places: dict[int, tuple[list[int], list[tuple[int, int]]]] | None = None
        if self._weak_bits:
            # Weak patterns count only near their recognizer's context words: those of every
            # recognizer whose words are absent go off at once (one AND over the byte table)
            # instead of one Python step each (a 1 KB chat names few such words).
            places = self._context_places(subject, to_char)
            off = self._weak_bits
            for key, (positions, _) in places.items():
                if positions:
                    off &= ~self._weak_bits_of.get(key, 0)
            if off:
                run = bytearray((int.from_bytes(run, "little") & ~off).to_bytes(len(run), "little"))
        best: dict[tuple[str, str, int, int], Hit] = {}
        # A recognizer's verdict on a span, whichever of its patterns found it: several patterns
        # of one recognizer often find the same candidate (presidio's SSN patterns, weak and
        # strong), and its checks look only at the text, so each span is judged once.
        verdicts: dict[tuple[int, int, int], _Verdict] = {}
        by_value: dict[tuple[int, str], _Judged] = {}
        # What a recognizer's earlier patterns accepted: a candidate inside one of those spans
        # of the same entity adds nothing (the span is stripped whole) but a finding counted
        # twice and a look around that reads its line ("+1 (415) 555-0123" is also NANP's
        # "1 (415) 555-0123"), so it is not judged again.
        covers: dict[tuple[int, str], _Cover] = {}
        for comp in compress(self._patterns, run):
            ctx_places: list[int] | None = None
            windows: list[tuple[int, int]] | None = None
            if comp.score < self.min_score:
                if places is None:
                    places = self._context_places(subject, to_char)
                ctx_places, windows = places.get(id(comp.rec), ([], []))
                if not ctx_places:
                    continue  # a weak pattern without any context word in the text cannot count
            if comp.fast is not None:
                spans = _re2_spans(comp.fast, subject, comp.value_group or 0, to_char, windows)
            else:
                spans = self._slow_spans(comp, text, subject, to_char, windows)
            cover_key = (id(comp.rec), comp.entity)
            cover = covers.get(cover_key)
            accepted: list[tuple[int, int]] = []
            for n, (s, e) in enumerate(spans):
                if n & 1023 == 1023:
                    checkpoint()
                if cover is not None and cover.inside(s, e):
                    continue
                hit = self._accept(comp, text, s, e, ctx_places, verdicts, by_value)
                if hit is not None:
                    k = (hit.entity, hit.recognizer, s, e)
                    if k not in best or best[k].score < hit.score:
                        best[k] = hit
                    accepted.append((hit.start, hit.end))
            if accepted and id(comp) in self._followed:
                covers[cover_key] = _Cover(accepted if cover is None else cover.spans + accepted)
            checkpoint()
        if self._terms:
            lowered = _lower_same_length(text)
            for tm in self._terms:
                for entity, s, e in tm.find(lowered):
                    best[(entity, tm.rec.name, s, e)] = Hit(entity, s, e, tm.rec.name, tm.rec.score)
            checkpoint()
        return sorted(best.values(), key=lambda h: (h.start, -h.end, h.entity))

    def _first_pass(self, subject: bytes, plan: FirstPass) -> bytearray | None:
        """The patterns to run by the pass ``plan`` takes, timed for the choice (and the other
        pass timed on a sample of the middle, its answer unused), or None when the prefilter's
        scan failed."""
        started = time.thread_time()
        run = self._prefiltered(subject) if plan.prefilter else self._set_passes(subject)
        if run is None:
            return None
        self._choice.record(len(subject), plan.prefilter, time.thread_time() - started)
        if plan.sample:
            if plan.prefilter:
                # RE2 builds its DFA's states as it reads, and a whole text spreads that cost over
                # all of its bytes; timed cold, a sixteenth of templated prose read 60 – 100 ns a
                # byte against the 9 of the whole text, and the sets were never taken for it. So
                # the sets read the bytes before the sample first, untimed: text that keeps
                # needing new states (new code) stays dear, text whose states are built reads at
                # what a whole text would cost.
                warm, sample = _halves(_middle(subject, 2 * plan.sample))
                self._set_passes(warm)
                started = time.thread_time()
                self._set_passes(sample)
                self._choice.record(len(sample), False, time.thread_time() - started)
                return run
            sample = _middle(subject, plan.sample)
            started = time.thread_time()
            if self._prefiltered(sample) is not None:
                self._choice.record(len(sample), True, time.thread_time() - started)
        return run

    def _prefiltered(self, subject: bytes) -> bytearray | None:
        """The patterns to run by the attached prefilter, or None when its scan failed (the sets'
        passes then answer)."""
        assert self._prefilter is not None
        try:
            members = self._prefilter.matching(subject)
        except PrefilterError:
            return None
        run = bytearray(self._base_mask)
        places = self._member_places
        for member in members:
            run[places[member]] = 1
        for member in self._prefilter.always:
            run[places[member]] = 1
        if self._required_gate is not None:
            words, sentinel = self._required_gate
            present = set(words.Match(subject) or ())
            if sentinel in present:  # else the pass gave up, and the patterns stay on
                _absent_off(run, self._required_alone, present)
        return run

    def _set_passes(self, subject: bytes) -> bytearray:
        """The patterns to run by the RE2 sets' passes."""
        # A pass per set says which patterns match at all; it pays for itself at every size
        # measured (1 KB to 3 MB), most on text where few patterns match.
        run = bytearray(self._base_mask)
        live: set[int] | None = None  # the gated sets to run (None: all)
        present: set[int] | None = None  # the gate's members found (None: the pass gave up)
        if self._gate is not None:
            gate, sentinel = self._gate
            present = set(gate.Match(subject) or ())
            if sentinel in present:
                live = {k for i in present for k in self._turns_on.get(i, ())}
            else:  # without the sentinel the pass gave up: every gated set and pattern runs
                present = None
        for number, (one, places_of, sentinel) in enumerate(self._sets):
            if live is not None and number >= self._ungated and number - self._ungated not in live:
                continue  # none of its members' strings occurs: none of them can match
            matched = one.Match(subject) or ()
            if sentinel in matched:
                for i in matched:
                    run[places_of[i]] = 1  # the sentinel's place is the spare last byte
            else:  # the pass gave up: every member runs
                for p in places_of:
                    run[p] = 1
        if present is not None:
            _absent_off(run, self._required, present)
        return run

    def _context_places(
        self, subject: bytes, to_char: Callable[[int], int]
    ) -> dict[int, tuple[list[int], list[tuple[int, int]]]]:
        """Per recognizer with weak patterns: where its context words occur (character offsets)
        and the byte windows around them in which those patterns can still count."""
        raw = self._contexts.find(subject)
        # in bytes: a character is at most 4 (1 in ASCII text, the common case)
        reach = (self.context_window + _WEAK_MARGIN) * (1 if to_char is _identity else 4)
        n = len(subject)
        return {
            key: (positions if to_char is _identity else [to_char(p) for p in positions], _around(positions, reach, n))
            for key, positions in raw.items()
        }

    def _slow_spans(
        self,
        comp: _Compiled,
        text: str,
        subject: bytes,
        to_char: Callable[[int], int],
        near: list[tuple[int, int]] | None,
    ) -> Iterator[tuple[int, int]]:
        """Matches of a pattern RE2 cannot run, searched only in windows around its loose
        pattern's matches and, for a weak pattern, only near its context words (``near``, byte
        windows): backtracking over the whole text is what can take super-linear time."""
        assert comp.slow is not None
        group = comp.value_group or 0
        n = len(text)
        windows: Iterable[tuple[int, int]]
        if comp.loose is not None:
            windows = _merge(
                (max(0, s - _WINDOW), min(n, e + _WINDOW)) for s, e in _re2_spans(comp.loose, subject, 0, to_char, near)
            )
        elif near is not None:
            windows = [(to_char(lo), to_char(hi)) for lo, hi in near]
        else:
            windows = [(0, n)]
        for ws, we in windows:
            for m in comp.slow.finditer(text, ws, we, timeout=self.regex_timeout):
                s, e = m.span(group)
                # a match cut by an artificial window edge is not a real match
                if (s == ws and ws > 0) or (e == we and we < n) or not 0 <= s < e:
                    continue
                yield s, e

    def _accept(
        self,
        comp: _Compiled,
        text: str,
        s: int,
        e: int,
        ctx_places: list[int] | None,
        verdicts: dict[tuple[int, int, int], _Verdict],
        by_value: dict[tuple[int, str], _Judged],
    ) -> Hit | None:
        score = comp.score
        if ctx_places is not None:
            w = self.context_window
            k = bisect_left(ctx_places, s - w)
            if k == len(ctx_places) or ctx_places[k] > e + w:
                return None
            score = max(score + _CONTEXT_BOOST, _CONTEXT_MIN)
            if score < self.min_score:
                return None
        key = (id(comp.rec), s, e)
        verdict = verdicts.get(key, _UNJUDGED)
        if verdict is _UNJUDGED:
            verdict = verdicts[key] = _judge(comp.rec, text, s, e, by_value)
        if verdict is None or (ctx_places is not None and keyed_as_quantity(text, s)):
            return None  # (a weak hit whose own key names a quantity: see keyed_as_quantity)
        vs, ve, validated = verdict
        if ctx_places is not None and power_of_two(text[vs:ve]):
            return None  # a weak hit that is a size or a mask (see power_of_two)
        return Hit(comp.entity, vs, ve, comp.rec.name, 1.0 if validated else score)


class _Cover:
    """Accepted spans, asked whether a candidate lies inside one of them and is none of them."""

    __slots__ = ("ends", "exact", "spans", "starts")

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self.spans = sorted(spans)
        self.starts = [s for s, _ in self.spans]
        self.ends = list(accumulate((e for _, e in self.spans), max))  # the furthest end so far
        self.exact = set(self.spans)

    def inside(self, s: int, e: int) -> bool:
        i = bisect_right(self.starts, s) - 1
        # an equal span is judged again: another pattern may give it a higher score
        return i >= 0 and self.ends[i] >= e and (s, e) not in self.exact


def _absent_off(run: bytearray, required: list[tuple[int, int]], present: set[int]) -> None:
    """Turn off the patterns (``required``: place, gate member) whose required word is absent."""
    for place, member in required:
        if member not in present:
            run[place] = 0


# (start, end, validated) of an accepted span, None for a refused one
_Verdict = tuple[int, int, bool] | None
_UNJUDGED: _Verdict = (-1, -1, False)


def _judge(rec: PatternRecognizer, text: str, s: int, e: int, by_value: dict[tuple[int, str], _Judged]) -> _Verdict:
    """A recognizer's checks of a candidate span: its own narrowing (``refine_span``), presidio's
    ``validate_result`` / ``invalidate_result`` and the look around it (``reject_first`` before
    validation, ``reject_at`` after).

    The checks of the value alone are made once per value and recognizer in a scan (``by_value``):
    a table repeats its cells, and a column of 300,000 of them judged each anew cost 40 times
    plain prose (tests/tiers/test_linear_time.py)."""
    # A look around that costs less than validation and refuses whole pages of candidates
    # (``reject_first``: six pairs of a run of hex pairs are no MAC) runs before it.
    first = getattr(rec, "reject_first", None)
    refines = getattr(rec, "refine_span", None) is not None
    if first is not None and not refines and first(text, s, e):
        return None
    key = (id(rec), text[s:e])
    judged = by_value.get(key)
    if judged is None:
        judged = by_value[key] = _judge_value(rec, key[1])
    if judged is _REFUSED:
        return None
    (a, b), validated = judged
    s, e = s + a, s + b
    if (first is not None and refines and first(text, s, e)) or _rejected_at(rec, text, s, e):
        return None  # (a narrowed span is looked around where it ends up)
    return s, e, validated


# (the span in the value that counts, whether validation confirmed it), or _REFUSED
_Judged = tuple[tuple[int, int], bool]
_REFUSED: _Judged = ((-1, -1), False)


def _judge_value(rec: PatternRecognizer, value: str) -> _Judged:
    """The checks of a candidate that see its value alone."""
    refine = getattr(rec, "refine_span", None)
    if refine is not None:
        # The recognizer narrows a greedy candidate itself (validating as it goes).
        span = refine(value)
        if span is None or rec.invalidate_result(value[span[0] : span[1]]):
            return _REFUSED
        return (span[0], span[1]), True
    verdict = rec.validate_result(value)
    if verdict is False or rec.invalidate_result(value):
        return _REFUSED
    return (0, len(value)), bool(verdict)


def _rejected_at(rec: PatternRecognizer, text: str, s: int, e: int) -> bool:
    """A recognizer's look at what surrounds a value (``reject_at``): presidio's validators see
    the value alone, but whether ``Router`` is a name depends on the ``owner: `` before it and the
    `` | None`` after it."""
    reject = getattr(rec, "reject_at", None)
    return reject is not None and bool(reject(text, s, e))


_NULL = NO_MATCH


def _identity(offset: int) -> int:
    return offset


_CHUNK = 4096


class _CharIndex:
    """Byte offset -> character offset for UTF-8 text (RE2 works on bytes): the offset less the
    continuation bytes (0b10xxxxxx) before it.

    Code with a few non-ASCII characters spent ≈ 30 ms per 3 MB on a running count of every
    byte, so continuation bytes are looked for only in the chunks that are not ASCII
    (``bytes.isascii`` reads a word at a time) and, when they are few, counted by bisecting
    their list (≈ 0.2 µs a lookup, where a numpy call costs 5 µs). Text that is mostly non-ASCII
    keeps the running count."""

    def __init__(self, data: bytes) -> None:
        arr = np.frombuffer(data, dtype=np.uint8)
        self._continuations: list[int] | None = None
        self._starts: np.ndarray | None = None
        found: list[np.ndarray] = []
        count = 0
        for i in range(0, len(data), _CHUNK):
            if data[i : i + _CHUNK].isascii():
                continue
            found.append(np.flatnonzero((arr[i : i + _CHUNK] & 0xC0) == 0x80) + i)
            count += len(found[-1])
            if count * 16 >= len(data):  # many: the running count, without reading the rest first
                self._starts = np.concatenate(([0], np.cumsum((arr & 0xC0) != 0x80)))
                return
        self._continuations = np.concatenate(found).tolist() if found else []

    def __call__(self, offset: int) -> int:
        if self._continuations is not None:
            return offset - bisect_left(self._continuations, offset)
        assert self._starts is not None
        return int(self._starts[offset])


def _re2_spans(
    rx: object,
    subject: bytes,
    group: int,
    to_char: Callable[[int], int],
    windows: Iterable[tuple[int, int]] | None = None,
) -> Iterator[tuple[int, int]]:
    """Character spans of ``group`` for successive matches, calling RE2 directly on bytes (the
    wrapper's per-match objects cost ≈ 15 µs, which dominates on digit-heavy text).

    With a ``value`` group the next search starts where the value ends, so that boundary
    characters consumed after one value (RE2 has no look-ahead) can start the next match.
    """
    match = spans_of(rx)
    for lo, hi in windows if windows is not None else ((0, len(subject)),):
        yield from _window_spans(match, subject, group, to_char, lo, hi)


def _window_spans(
    match: SpanMatcher,
    subject: bytes,
    group: int,
    to_char: Callable[[int], int],
    pos: int,
    n: int,
) -> Iterator[tuple[int, int]]:
    while pos <= n:
        spans = match(subject, pos, n)
        whole = spans[0]
        if whole == _NULL:
            return
        s, e = spans[group]
        if 0 <= s < e:
            yield to_char(s), to_char(e)
            nxt = e if group else whole[1]
        else:
            nxt = whole[1]
        pos = nxt if nxt > pos else pos + 1


def _around(positions: list[int], reach: int, n: int) -> list[tuple[int, int]]:
    """Merged windows of ``reach`` either side of each of the (ascending) ``positions``."""
    out: list[tuple[int, int]] = []
    if not positions:
        return out
    lo, hi = max(0, positions[0] - reach), positions[0] + reach
    for p in positions:
        if p - reach <= hi:
            hi = p + reach
            continue
        out.append((lo, min(n, hi)))
        lo, hi = max(0, p - reach), p + reach
    out.append((lo, min(n, hi)))
    return out


def _merge(windows: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(windows):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out
