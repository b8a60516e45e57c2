"""A flag named in prose where a credential could stand (issue 12, eleventh group: "the
--username and --password options"); random values after the same flags stay secrets. Names whose
words end in digits (``pat_str=gpt2_pattern``) stay values by decision: a review found that reading
them as names lost human passwords and tokens of that shape (``red_dragon777``, ``acme_prod_key2024``)."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig
from tiers.recognizers.secrets.assignments import _CAMEL_NAME, AssignmentRecognizer

from .test_recognizers import found

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_FLAGS = ["--password", "--token", "--api-key", "--secret", "--access-token"]


@pytest.fixture(scope="module")
def clf() -> Classifier:
    return Classifier(TiersConfig())


def _random_token(seed: int) -> str:
    r = random.Random(seed)
    chars = string.ascii_letters + string.digits
    while True:
        t = "".join(r.choice(chars) for _ in range(r.randint(16, 32)))
        # A value shaped as a camel-case identifier (``em8WY7XurraXyj2FqmuxyblTvmb``: about one
        # random token in 1,200) reads as a name under a token's key by design (see
        # test_secret_samples.py's random values): not a value these properties ask about.
        mixed = any(c.isdigit() for c in t) and any(c.isupper() for c in t) and any(c.islower() for c in t)
        if mixed and not _CAMEL_NAME.match(t):
            return t


@_SETTINGS
@given(
    flag=st.sampled_from(_FLAGS),
    noun=st.sampled_from(["options", "option", "flag", "flags", "argument", "parameter", "is", "and", "instead"]),
    seed=st.integers(0, 2**32),
)
def test_a_flag_named_in_prose_holds_no_value_but_a_flag_given_one_does(
    clf: Classifier, flag: str, noun: str, seed: int
) -> None:
    prose = f"Credentials can be given with the --username and {flag} {noun} of the command."
    assert not [v for e, v in found(clf, prose) if e == "SECRET"]
    token = _random_token(seed)
    assert ("SECRET", token) in found(clf, f"$ deploy {flag} {token} --verbose\n")


@pytest.mark.parametrize(
    "line",
    [
        'props.put("password", "red_dragon777");',
        'cfg = [("user", "admin"), ("password", "summer.love123")]',
        "API_KEY=acme_prod_key2024",
        'token = "abc123_def456"',
    ],
)
def test_words_with_numbers_stay_values(clf: Classifier, line: str) -> None:
    assert [v for e, v in found(clf, line) if e == "SECRET"], line


_SNAKE_PARTS = ["int32", "ptr", "a1q", "scale", "token", "fp8", "candidate", "0", "seq", "lens", "buf", "x2"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(["token_ptr", "api_token", "auth_key", "topk_indices_token"]),
    parts=st.lists(st.sampled_from(_SNAKE_PARTS), min_size=2, max_size=3),
    form=st.sampled_from(
        ["f(data, {k}={v})\n", "    out = kernel(\n        x,\n        {k}={v},\n        y=1,\n    )\n"]
    ),
    seed=st.integers(0, 2**32),
)
def test_a_keyword_argument_naming_a_variable_is_no_value(
    clf: Classifier, key: str, parts: list[str], form: str, seed: int
) -> None:
    """``seq_lens=int32_ptr,`` in vLLM's kernels: a call's keyword argument names a variable. A
    random value in the same place and a password's key stay values (dotenv lines: the table
    test above). By decision a lower-case snake token written unquoted in a call is read as the
    variable it would be there."""
    name = "_".join(parts)
    if not name[0].isalpha():
        name = "v" + name
    assert ("SECRET", name) not in found(clf, form.format(k=key, v=name))
    token = _random_token(seed)
    assert ("SECRET", token) in found(clf, form.format(k=key, v=token))
    text = form.format(k="password", v=name)
    start = text.index("password=") + len("password=")
    assert not AssignmentRecognizer().reject_at(text, start, start + len(name))  # a password's key keeps it
