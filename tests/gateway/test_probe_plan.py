"""Probe plans and synthetic prompts, pure: rungs, stated cost, price, budget; exact lengths."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.vendors import VendorPrice, VendorRegister
from gateway.probe import MARKER_RE
from gateway.probes.plan import RESERVE_TOKENS, OverBudget, ladder_plan, ladder_rungs, price_for
from gateway.probes.settings import LadderSettings
from gateway.probes.synthetic import LadderPrompt, filler, ladder_prompt, ladder_user
from gateway.tokens import EstimateCounter, TokenizerCounter
from tests.support.corpus import texts
from tests.support.tokenizer_files import trained_bpe


@settings(max_examples=200, deadline=None)
@given(context=st.integers(512, 2_000_000), safe=st.one_of(st.none(), st.integers(64, 2_000_000)),
       start=st.integers(16, 4096), factor=st.floats(1.2, 8), max_tokens=st.integers(8, 256),
       over=st.booleans())  # fmt: skip
def test_default_rungs_climb_to_the_window(context: int, safe: int | None, start: int, factor: float,
                                           max_tokens: int, over: bool) -> None:  # fmt: skip
    """Sorted and distinct; the top rung leaves room for the answer and the template; a refusal is
    acceptable exactly where the window has no room; rungs bracket a safe length below the top;
    the over-context rung exists only when asked for."""
    cfg = LadderSettings(start_tokens=start, factor=factor, max_tokens=max_tokens, over_context=over)
    rungs = ladder_rungs(context, safe, cfg)
    tokens = [r.tokens for r in rungs]
    assert tokens == sorted(set(tokens))
    top = max(16, context - max_tokens - RESERVE_TOKENS)
    in_window = [r for r in rungs if r.tokens < context]
    assert max(r.tokens for r in in_window) == top
    for r in rungs:
        assert r.may_refuse == (r.tokens + max_tokens + RESERVE_TOKENS > context)
    assert any(r.tokens > context for r in rungs) == over
    if safe is not None and safe < context:
        step = max(16, int(safe * cfg.safe_margin))
        for point in (safe - step, safe + step):
            if 16 <= point < top:
                assert point in tokens


@settings(max_examples=100, deadline=None)
@given(rungs=st.lists(st.integers(16, 10**6), min_size=1, max_size=20), per=st.integers(1, 8),
       budget=st.integers(1, 10**8), inp=st.decimals(0, 100, places=3), out=st.decimals(0, 100, places=3))  # fmt: skip
def test_plan_states_tokens_and_price_and_guards_the_budget(rungs: list[int], per: int, budget: int,
                                                             inp: Decimal, out: Decimal) -> None:  # fmt: skip
    price = VendorPrice(input_per_million=inp, output_per_million=out)
    cfg = LadderSettings(rungs=rungs, requests_per_rung=per)
    plan = ladder_plan(upstream="u", model="m", context_window=2**21, safe_prompt_tokens=None, cfg=cfg,
                       budget=budget, price=price)  # fmt: skip
    distinct = sorted(set(rungs))
    assert [r.tokens for r in plan.rungs] == distinct
    assert plan.requests == per * len(distinct)
    assert plan.prompt_tokens == per * sum(t + RESERVE_TOKENS for t in distinct)
    assert plan.output_tokens == plan.requests * cfg.max_tokens
    assert plan.cost == (inp * plan.prompt_tokens + out * plan.output_tokens) / 1_000_000
    assert plan.within_budget == (plan.total_tokens <= budget)
    if plan.within_budget:
        plan.check_budget()
    else:
        with pytest.raises(OverBudget):
            plan.check_budget()


def test_price_comes_from_the_register_by_provider_ignoring_case() -> None:
    register = VendorRegister.model_validate({"providers": {"ExampleCloud": {"price": {
        "input_per_million": "1.5", "output_per_million": "6"}}}})  # fmt: skip
    assert price_for("EXAMPLECLOUD", register) == VendorPrice(input_per_million=Decimal("1.5"),
                                                              output_per_million=Decimal(6))  # fmt: skip
    assert price_for("other", register) is None and price_for(None, register) is None
    with pytest.raises(ValueError):
        VendorPrice(input_per_million=Decimal(-1), output_per_million=Decimal(0))


@pytest.fixture(scope="module")
def bpe(tmp_path_factory: pytest.TempPathFactory) -> TokenizerCounter:
    path = trained_bpe(tmp_path_factory.mktemp("tok") / "tokenizer.json", texts(300, seed=5), vocab_size=1500)
    return TokenizerCounter(Path(path))


@settings(max_examples=40, deadline=None)
@given(target=st.integers(120, 60_000))
def test_synthetic_prompts_hit_their_length_with_the_upstreams_tokenizer(bpe: TokenizerCounter, target: int) -> None:
    """Counted through the upstream's tokenizer, a rung prompt lands within a word of its target
    (or at its fixed frame's length, for a target shorter than that), carries its three fresh
    markers in order, and nothing else marker-shaped."""

    # Two prompts with the same words differ by what their random markers tokenize to (seen: 14
    # tokens apart on three markers), and by a few tokens where the markers meet the words.
    def marker_tokens(p: LadderPrompt) -> int:
        return bpe.count([p.start, p.middle, p.end]).tokens

    prompt, words = ladder_prompt(bpe, target)

    def with_words(k: int) -> int:  # the same prompt's count with ``k`` filler words
        return bpe.count([prompt.system, ladder_user(prompt.start, prompt.middle, prompt.end, k)]).tokens

    # The most filler words that stay at or under the target (a word is 1 to 11 tokens here), or
    # the fewest over it when none stays under.
    assert with_words(words) == prompt.count.tokens
    if words == 0:
        assert target <= prompt.count.tokens
    elif prompt.count.tokens > target:
        assert words == 1 and with_words(0) < target
    else:
        assert prompt.count.tokens <= target < with_words(words + 1)
    frame = with_words(0)
    text = prompt.user
    assert MARKER_RE.findall(text) == [prompt.start, prompt.middle, prompt.end]
    if target > 20 * frame:
        assert text.index(prompt.middle) == pytest.approx(len(text) / 2, rel=0.05)
    again, _ = ladder_prompt(bpe, target, words=words)
    assert abs(again.count.tokens - prompt.count.tokens) <= abs(marker_tokens(again) - marker_tokens(prompt)) + 12
    assert again.markers.isdisjoint(prompt.markers)


def test_filler_is_plain_words() -> None:
    text = filler(5000)
    assert not any(ch.isdigit() for ch in text) and not MARKER_RE.search(text)
    assert len(text.split()) == 5000


def test_estimate_counted_prompts_are_exact() -> None:
    for target in (100, 4096, 250_000):
        prompt, _ = ladder_prompt(EstimateCounter(bytes_per_token=4.0), target)
        assert target - 1 <= prompt.count.tokens <= target
