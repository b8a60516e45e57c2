"""What a vendor's reconstruction answer does to a verdict: unless it said in writing, currently,
that it can tell which of our requests an incident affected, every report says the disclosure's
scope is the vendor's guess (and "nothing matched" no all-clear)."""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from audit.assessment import Verdict
from audit.report import render_assessment_json, render_assessment_markdown, vendor_notes
from audit.report_doc import build_report
from audit.vendors import VendorAnswer, VendorRegister, VendorReview, review_profile, review_vendors, scope_doubt
from tests.audit.test_vendors import TODAY, _assessment, answer, full_profile


def _review(profile: dict[str, object] | None, review_after_days: int = 365) -> VendorReview:
    register = VendorRegister.model_validate({"review_after_days": review_after_days,
                                              "providers": {"examplecloud": profile} if profile else {}})  # fmt: skip
    return review_profile("examplecloud", register.providers.get("examplecloud"), register, TODAY)


@given(short=st.sampled_from([None, "yes", "partly", "no"]), days_ago=st.integers(-3, 800),
       engine=st.sampled_from(["vLLM 0.10.1", "vLLM 0.11.2", None]), present=st.booleans())  # fmt: skip
def test_only_a_current_written_yes_removes_the_doubt(short: str | None, days_ago: int, engine: str | None,
                                                      present: bool) -> None:  # fmt: skip
    profile = full_profile()  # the vendor declares vLLM 0.10.1
    rec = answer("we list affected request ids", days_ago, engine=engine, **({"short": short} if short else {}))
    if present:
        profile["reconstruction"] = rec
    else:
        profile.pop("reconstruction")
    current = present and 0 <= days_ago <= 365 and engine == "vLLM 0.10.1"
    doubt = scope_doubt(_review(profile))
    assert (doubt is None) == (current and short == "yes")
    if doubt is not None and present and short in ("no", "partly"):
        assert doubt.startswith("cannot fully reconstruct") and "we list affected request ids" in doubt


def test_no_profile_and_no_answer_are_doubt_too() -> None:
    assert "no answer on record" in (scope_doubt(_review(None)) or "")
    due = scope_doubt(_review({**full_profile(), "reconstruction": answer("yes", 10, short="yes"),
                               "engine": "vLLM 0.11.2"}))  # fmt: skip
    assert due is not None and "due for review: given for vLLM 0.10.1; the vendor now serves vLLM 0.11.2" in due


def _register(short: str) -> VendorRegister:
    profile = {**full_profile(), "reconstruction": answer("Cannot say which requests.", 10, short=short)}
    return VendorRegister.model_validate({"providers": {"examplecloud": profile}})


def test_the_note_in_every_report_and_its_reading_of_nothing_matched() -> None:
    matched = _assessment()
    nothing = dataclasses.replace(matched, total=0, by_tier={}, verdict=Verdict.NOTHING_MATCHED, providers=())
    vendors = review_vendors(_register("no"), matched.providers, TODAY, named=("examplecloud",))
    (hit,) = vendor_notes(matched, vendors)
    (miss,) = vendor_notes(nothing, vendors)
    assert hit.startswith("SCOPE UNCERTAIN: examplecloud cannot fully reconstruct") and "outside it" in hit
    assert "not that none was affected" in miss and "outside it" not in miss
    assert f"> **{miss}**" in render_assessment_markdown(nothing, vendors)
    assert json.loads(render_assessment_json(nothing, vendors))["vendor_notes"] == [miss]
    assert miss in build_report(nothing, vendors).notes
    # A vendor that can, in writing and currently: the verdict stands as it reads.
    sure = review_vendors(_register("yes"), (), TODAY, named=("examplecloud",))
    assert vendor_notes(nothing, sure) == () and "SCOPE UNCERTAIN" not in render_assessment_markdown(nothing, sure)


def test_short_answers_written_as_yaml_booleans() -> None:
    """``short: yes`` unquoted is a boolean to YAML: read as the word; anything else is refused."""
    for text, word in (("yes", "yes"), ("no", "no"), ("partly", "partly"), ('"yes"', "yes")):
        doc = yaml.safe_load(f"answer: a\ngiven: 2026-01-01\nshort: {text}\n")
        assert VendorAnswer.model_validate(doc).short == word
    with pytest.raises(ValidationError):
        VendorAnswer.model_validate({"answer": "a", "given": "2026-01-01", "short": "maybe"})
