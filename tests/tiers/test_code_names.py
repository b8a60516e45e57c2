"""Names that code and its documentation write where a credential could stand (issue 12, eleventh
group): a flag named in prose ("the --username and --password options"), and a variable whose
words end in a short number (``pat_str=gpt2_pattern``, ``token=sha256_digest``). Random values in
the same places stay secrets."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig

from .test_recognizers import found

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_FLAGS = ["--password", "--token", "--api-key", "--secret", "--access-token"]
_WORDS = ["pattern", "digest", "name", "value", "encoding", "header", "table", "prefix", "cache", "path"]
_NUMBERED = ["gpt2", "sha256", "utf8", "base64", "ipv4", "md5", "http2", "py3", "x509", "oauth2"]


@pytest.fixture(scope="module")
def clf() -> Classifier:
    return Classifier(TiersConfig())


def _random_token(seed: int) -> str:
    r = random.Random(seed)
    chars = string.ascii_letters + string.digits
    while True:
        t = "".join(r.choice(chars) for _ in range(r.randint(16, 32)))
        if any(c.isdigit() for c in t) and any(c.isupper() for c in t) and any(c.islower() for c in t):
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


@_SETTINGS
@given(
    # a password's key (``client_secret``, ``password``) keeps ``hunter2``-like names: a dotenv password
    key=st.sampled_from(["pat_str", "token", "api_key", "auth_token"]),
    parts=st.lists(st.sampled_from(_NUMBERED + _WORDS), min_size=2, max_size=3),
    call=st.sampled_from(["    enc = train(data, {k}={v})\n", "client = Client(timeout=5, {k}={v}, retries=2)\n"]),
    seed=st.integers(0, 2**32),
)
def test_a_snake_name_with_numbered_words_is_a_variable_but_a_random_value_is_not(
    clf: Classifier, key: str, parts: list[str], call: str, seed: int
) -> None:
    name = "_".join(parts)
    assert ("SECRET", name) not in found(clf, call.format(k=key, v=name))
    token = _random_token(seed)
    assert ("SECRET", token) in found(clf, call.format(k=key, v=f'"{token}"'))
