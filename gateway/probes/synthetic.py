"""Synthetic probe prompts of a chosen length, counted the way the gateway counts prompts.

Pure synthetic text: a fixed word list and fresh random markers, never a byte of real traffic.
The length is our own count (``gateway.tokens``: the upstream's ``tokenizer_file`` when
configured, else the calibrated estimate), so a probe's rung and the gateway's safe-length check
speak of the same number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gateway.probe import new_marker
from gateway.tokens import PromptCount, TokenCounter

__all__ = ["SYSTEM", "LadderPrompt", "filler", "fit_words", "ladder_prompt", "prefix_prompt"]

SYSTEM = "You are an echo service. Reply only with the codes you are asked for, nothing else."
_WORDS = ("amber", "basin", "cedar", "delta", "ember", "fjord", "granite", "harbor", "island", "juniper",
          "kelp", "lagoon", "meadow", "nectar", "orchard", "pebble", "quartz", "river", "summit", "tundra",
          "upland", "valley", "willow", "yarrow", "zephyr", "acorn", "birch", "canyon", "dune", "estuary")  # fmt: skip
# Counting a million-token prompt takes a moment: the fit stops after this many tries.
_MAX_TRIES = 12


def filler(words: int, offset: int = 0) -> str:
    """``words`` plain words in sentences of twelve; no digits, no marker-shaped strings."""
    out: list[str] = []
    n = len(_WORDS)
    for i in range(words):
        j = i + offset
        w = _WORDS[(j * 7 + j // n) % n]
        out.append(w + ("." if i % 12 == 11 else ""))
        if i % 96 == 95:
            out.append("\n")
    return " ".join(out)


def fit_words(target: int, count: Callable[[int], int]) -> int:
    """The number of filler words whose prompt ``count`` is closest to ``target`` from below
    (or the smallest above it, when none is below). ``count`` must grow with the words."""
    base = count(0)
    if base >= target:
        return 0
    probe = max(64, min(4096, target))
    rate = max((count(probe) - base) / probe, 1e-6)
    lo, lo_n = 0, base  # the most words known to stay at or under the target
    hi, hi_n = None, 0  # the fewest words known to go over it
    k = max(1, round((target - base) / rate))
    for _ in range(_MAX_TRIES):
        got = count(k)
        if got == target:
            return k
        if got < target:
            lo, lo_n = k, got
        else:
            hi, hi_n = k, got
        if hi is None:
            k = lo + max(1, round((target - lo_n) / rate))
            continue
        if hi - lo <= 1:
            break
        # Interpolate between the two bounds (the count is close to linear in the words).
        k = lo + round((target - lo_n) * (hi - lo) / max(hi_n - lo_n, 1))
        k = min(max(k, lo + 1), hi - 1)
    return lo if lo > 0 or hi is None else hi


@dataclass(frozen=True, slots=True)
class LadderPrompt:
    """One rung request's messages, its markers and our count of it."""

    system: str
    user: str
    start: str
    middle: str
    end: str
    count: PromptCount

    @property
    def markers(self) -> frozenset[str]:
        return frozenset((self.start, self.middle, self.end))

    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]


def ladder_user(start: str, middle: str, end: str, words: int) -> str:
    """A rung's user message: the three markers around ``words`` filler words."""
    half = words // 2
    return (f"Probe document. The first code is {start}.\n{filler(half)}\nCheckpoint code {middle}.\n"
            f"{filler(words - half, half)}\nThe last code is {end}.\n"
            "Reply with the first code and the last code, separated by one space, and nothing else.")  # fmt: skip


def ladder_prompt(counter: TokenCounter, target: int, *, words: int | None = None) -> tuple[LadderPrompt, int]:
    """A prompt of about ``target`` tokens (our count) with fresh start, middle and end markers.

    Returns the prompt and the filler size used: pass it back as ``words`` for the rung's other
    requests, which then differ from the first only by their markers' few tokens."""
    start, middle, end = new_marker(), new_marker(), new_marker()

    def count(k: int) -> int:
        return counter.count([SYSTEM, ladder_user(start, middle, end, k)]).tokens

    k = fit_words(target, count) if words is None else words
    user = ladder_user(start, middle, end, k)
    return LadderPrompt(SYSTEM, user, start, middle, end, counter.count([SYSTEM, user])), k


def prefix_prompt(counter: TokenCounter, target: int) -> tuple[str, str, PromptCount]:
    """A user message of about ``target`` tokens starting with a fresh marker (so no earlier
    request shares a single block of it), its marker and our count."""
    marker = new_marker()

    def text(k: int) -> str:
        return f"Shared prefix {marker}.\n{filler(k)}\nReply with one word."

    k = fit_words(target, lambda n: counter.count([text(n)]).tokens)
    body = text(k)
    return body, marker, counter.count([body])
