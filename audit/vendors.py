"""The vendor register: per provider, the answers a buyer should have from the vendor in writing,
and which of them are due for review.

An exposure report quotes them next to its verdict, so that on the day of an incident the
operator reads what the vendor promised (isolation, time to containment, notification, whether
it can tell which of our requests were affected) beside what we sent. An answer is due for review
when it is older than ``review_after_days``, or when it was about the serving engine and the
vendor has changed engine or version since (each answer records the engine it was given for;
the profile declares the current one). A question without an answer is listed as missing.

    vendors:
      review_after_days: 365
      providers:
        cloudflare-workers-ai:
          engine: vLLM 0.11.2
          tenant_isolation:
            answer: KV cache blocks are never shared across accounts; prefix caching per account.
            given: 2026-03-02
            engine: vLLM 0.10.1
            source: security questionnaire, section 4.2
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from audit.names import matches

__all__ = ["QUESTIONS", "AnswerReview", "Question", "VendorAnswer", "VendorPrice", "VendorProfile",
           "VendorRegister", "VendorReview", "review_profile", "review_vendors", "scope_doubt"]  # fmt: skip

_STRICT = ConfigDict(extra="forbid", frozen=True)


class VendorAnswer(BaseModel):
    model_config = _STRICT

    answer: str = Field(min_length=1, max_length=4000)
    """The vendor's answer, in its own words."""
    given: date
    """The day the vendor gave it (in writing)."""
    engine: str | None = Field(None, min_length=1, max_length=200)
    """The serving engine and version the answer was given for (e.g. ``vLLM 0.10.1``): an answer
    about the engine is due for review once the profile's ``engine`` differs."""
    source: str | None = Field(None, max_length=500)
    """Where it is written: contract clause, questionnaire section, ticket, dated e-mail."""
    example: str | None = Field(None, max_length=4000)
    """An example the vendor gave (an incident and how long its containment took)."""
    short: Literal["yes", "partly", "no"] | None = None
    """The answer in one word, for the yes-or-no questions (notification, reconstruction,
    training use): what reports act on. For ``reconstruction``, anything but ``yes`` makes an
    exposure report say that its verdict rests on the vendor's own guess at the scope."""

    @field_validator("short", mode="before")
    @classmethod
    def _yaml_booleans(cls, value: object) -> object:
        # YAML 1.1 reads an unquoted yes / no as a boolean: take it as the word it was.
        return {True: "yes", False: "no"}.get(value, value) if isinstance(value, bool) else value


class VendorPrice(BaseModel):
    """What the vendor charges per million tokens (probes state their cost with it)."""

    model_config = _STRICT

    input_per_million: Decimal = Field(ge=0)
    """Price of one million prompt tokens."""
    output_per_million: Decimal = Field(ge=0)
    """Price of one million generated tokens."""
    currency: str = Field("USD", pattern=r"^[A-Z]{3}$")
    """ISO 4217 currency code of both prices."""
    source: str | None = Field(None, max_length=500)
    """Where the price is written (price list, contract clause)."""

    def cost(self, prompt_tokens: int, output_tokens: int) -> Decimal:
        return (self.input_per_million * prompt_tokens + self.output_per_million * output_tokens) / 1_000_000


@dataclass(frozen=True, slots=True)
class Question:
    key: str
    asks: str
    engine_bound: bool  # the answer describes the serving engine: a new engine or version voids it


QUESTIONS: tuple[Question, ...] = (
    Question(
        "tenant_isolation", "How are tenants isolated inside the engine (KV cache, prefix cache, batching)?", True
    ),  # fmt: skip
    Question("containment", "How long from detection to containment? With an example.", True),
    Question(
        "serving_engine",
        "Which serving engine and version are in our requests' path, and who patches them, how fast?",
        True,
    ),  # fmt: skip
    Question("notification", "Do they notify us of an incident, and within what time?", False),
    Question("reconstruction", "Can they reconstruct which of our requests an incident affected?", True),
    Question("data_retention", "How long do they keep prompts and outputs?", False),
    Question("training_use", "Are our prompts or outputs used for training?", False),
    Question("region", "Where are the requests processed and stored?", False),
    Question("contract", "Which contract or terms cover these answers?", False),
)


class VendorProfile(BaseModel):
    model_config = _STRICT

    engine: str | None = Field(None, min_length=1, max_length=200)
    """The serving engine and version the vendor currently declares for our path."""
    price: VendorPrice | None = None
    """The vendor's token prices, when known: probes state their cost in money too."""
    tenant_isolation: VendorAnswer | None = None
    """Tenant isolation inside the engine (KV cache, prefix cache, batching)."""
    containment: VendorAnswer | None = None
    """Time from detection to containment, with an example."""
    serving_engine: VendorAnswer | None = None
    """The serving engine and version in the path, and who patches them."""
    notification: VendorAnswer | None = None
    """Whether and within what time they notify us of an incident."""
    reconstruction: VendorAnswer | None = None
    """Whether they can reconstruct which of our requests an incident affected."""
    data_retention: VendorAnswer | None = None
    """How long prompts and outputs are kept."""
    training_use: VendorAnswer | None = None
    """Whether prompts or outputs are used for training."""
    region: VendorAnswer | None = None
    """Where requests are processed and stored."""
    contract: VendorAnswer | None = None
    """The contract or terms that bind these answers (reference)."""


class VendorRegister(BaseModel):
    model_config = _STRICT

    review_after_days: int = Field(365, ge=1)
    """An answer older than this many days is due for review."""
    providers: dict[str, VendorProfile] = Field(default_factory=dict)
    """Provider name (as upstreams declare it; case ignored) -> what the vendor answered."""

    @field_validator("providers")
    @classmethod
    def _fold_names(cls, value: dict[str, VendorProfile]) -> dict[str, VendorProfile]:
        folded = {name.lower(): profile for name, profile in value.items()}
        if len(folded) != len(value):
            raise ValueError("a provider is listed twice (names ignore case)")
        return folded


@dataclass(frozen=True, slots=True)
class AnswerReview:
    question: Question
    answer: VendorAnswer | None
    due: tuple[str, ...]  # why it is due for review; empty: current

    @property
    def status(self) -> str:
        return "missing" if self.answer is None else ("due" if self.due else "current")

    def as_dict(self) -> dict[str, Any]:
        a = self.answer
        return {"question": self.question.key, "asks": self.question.asks, "status": self.status,
                "due": list(self.due), "answer": a.answer if a else None,
                "given": a.given.isoformat() if a else None, "engine": a.engine if a else None,
                "source": a.source if a else None, "example": a.example if a else None,
                "short": a.short if a else None}  # fmt: skip


@dataclass(frozen=True, slots=True)
class VendorReview:
    provider: str
    engine: str | None  # None: not declared (or no profile at all)
    answers: tuple[AnswerReview, ...]
    registered: bool  # False: the register has no profile for this provider

    @property
    def due(self) -> int:
        return sum(1 for a in self.answers if a.status != "current")

    def answer_to(self, key: str) -> AnswerReview:
        return next(a for a in self.answers if a.question.key == key)

    def as_dict(self) -> dict[str, Any]:
        return {"provider": self.provider, "registered": self.registered, "engine": self.engine,
                "due_for_review": self.due, "answers": [a.as_dict() for a in self.answers]}  # fmt: skip


def _why_due(q: Question, a: VendorAnswer, engine: str | None, today: date, max_age: timedelta) -> tuple[str, ...]:
    why = []
    if a.given > today:
        why.append(f"dated {a.given.isoformat()}, after today")
    elif today - a.given > max_age:
        why.append(f"given {a.given.isoformat()}, more than {max_age.days} days ago")
    if q.engine_bound and engine is not None:
        if a.engine is None:
            why.append(f"the engine it was given for is not recorded; the vendor now serves {engine}")
        elif a.engine != engine:
            why.append(f"given for {a.engine}; the vendor now serves {engine}")
    return tuple(why)


def review_profile(provider: str, profile: VendorProfile | None, register: VendorRegister,
                   today: date) -> VendorReview:  # fmt: skip
    max_age = timedelta(days=register.review_after_days)
    engine = profile.engine if profile else None
    answers = []
    for q in QUESTIONS:
        a: VendorAnswer | None = getattr(profile, q.key) if profile else None
        answers.append(AnswerReview(q, a, _why_due(q, a, engine, today, max_age) if a else ()))
    return VendorReview(provider, engine, tuple(answers), profile is not None)


def review_vendors(register: VendorRegister, providers: tuple[str, ...], today: date, *,
                   named: tuple[str, ...] = ()) -> tuple[VendorReview, ...]:  # fmt: skip
    """The register's answers for each provider that received matching requests (``providers``),
    and for each registered provider a disclosure names (``named``: names or ``*`` patterns).
    A provider without a profile is listed too: every question then shows as missing."""
    wanted = {p.lower() for p in providers}
    folded = tuple(n.lower() for n in named)
    wanted |= {p for p in register.providers if matches(p, folded)}
    wanted |= {n for n in folded if "*" not in n}
    return tuple(review_profile(p, register.providers.get(p), register, today) for p in sorted(wanted))


def scope_doubt(review: VendorReview) -> str | None:
    """Why this vendor's word on an incident's scope cannot be relied on, or None when it said in
    writing (and the answer is current) that it can reconstruct which of our requests an incident
    affected. Fails closed: no answer, an answer due for review, or one not reduced to ``yes``
    all count as doubt, since a disclosure from such a vendor is its best guess at the window,
    models and conditions."""
    r = review.answer_to("reconstruction")
    if r.answer is None:
        return "has no answer on record on whether it can reconstruct which of our requests an incident affected"
    said = f"answered \u201c{' '.join(r.answer.answer.split())}\u201d ({r.answer.given.isoformat()})"
    if r.answer.short in ("no", "partly"):
        return f"cannot fully reconstruct which of our requests an incident affected: it {said}"
    if r.due:
        return f"{said} on reconstructing affected requests, but that answer is due for review: {'; '.join(r.due)}"
    if r.answer.short is None:
        return f"{said} on reconstructing affected requests, not recorded as a plain yes (short: yes)"
    return None
