"""Credentials written without "key = value": statements, blanks, cookies, prose.

The syntaxes themselves (``$password = …``, ``os.environ["API_KEY"] = …``, ``IDENTIFIED BY``,
``requirepass``, a YAML block scalar, a Terraform variable's default, "my password is …") are
rows of ``secret_corpus.SYNTAXES``, so every property of ``test_secrets`` runs over them
(generated values stripped whole, placeholders and paths no secret). Here: what each new form
must not take (the prose and code that look like it, as real packages write them), and cookies.
"""

from __future__ import annotations

import random
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier

from .conftest import content

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_rnd = st.integers(0, 2**32).map(random.Random)


def _secrets(clf: Classifier, text: str) -> list[str]:
    decision = clf.classify(content(text))
    assert not decision.failed_closed, decision.reasons
    return [text[f.start : f.end] for f in decision.findings if f.entity_type == "SECRET"]


def _token(rnd: random.Random, n: int = 24) -> str:
    """Random letters of both cases and digits, a digit between two letters among them: a draw
    whose only digits end it and whose letters split into capitalised runs
    ("kqEMHVwocFRONPwcfItcato0") reads as a name of code, a known limit (see
    ``test_standard_library._token``) that made this file's properties fail one run in hundreds."""
    alphabet = string.ascii_letters + string.digits
    while True:
        value = "".join(rnd.choice(alphabet) for _ in range(n))
        if any(c.isupper() for c in value) and any(c.islower() for c in value) and _DIGIT_INSIDE.search(value):
            return value


_DIGIT_INSIDE = re.compile(r"[A-Za-z][0-9]+[A-Za-z]")


# found in real packages' docstrings and messages (bench/outside.py, 2026-12-07) or written the
# way they are: none of them holds a credential
_NOT_CREDENTIALS = [
    "You can also pass `default_to_notebook=False` to get back raw HTML.",
    "Please pass 'draft_tensor_parallel_size' in the speculative config.",
    'Do not pass "detached_payload" when the protected header says so.',
    "the forward pass. `doc_scores` can be computed via the retriever",
    "The secret `HF_TOKEN` does not exist in your Colab secrets.",
    "the secret 'HF_TOKEN' is unset",
    "Load and return a dynamic library identified by 'name'.",
    "Set the 'string' for the name record identified by 'nameID', 'platformID'",
    "The password is required.",
    "The token is expired",
    "token: abc",
    "Your PIN is 123456",
    "The password is 8 characters long",
    "password is <your-password>",
    "password: ${DB_PASSWORD}",
    "Password reset",
    "token expired",
    "Cookie: theme=dark; lang=en-GB",
    "Set-Cookie: consent=yes; Path=/; Max-Age=31536000",
    "tool sync --password --verbose",
]


@pytest.mark.parametrize("text", _NOT_CREDENTIALS)
def test_prose_and_code_that_look_like_a_statement_hold_no_secret(clf: Classifier, text: str) -> None:
    assert _secrets(clf, text + "\n") == []


@_SETTINGS
@given(_rnd, st.sampled_from(["sessionid", "PHPSESSID", "JSESSIONID", "connect.sid", "_session"]))
def test_every_session_value_of_a_cookie_header_is_stripped(clf: Classifier, rnd: random.Random, name: str) -> None:
    first, second = _token(rnd), _token(rnd, 32)
    request = f"GET / HTTP/1.1\nHost: app.test\nCookie: theme=dark; {name}={first}; csrftoken={second}\n"
    found = "\n".join(_secrets(clf, request))
    assert first in found and second in found
    assert "dark" not in found
    response = f"HTTP/1.1 200 OK\nSet-Cookie: {name}={first}; Path=/; HttpOnly\n"
    assert _secrets(clf, response) == [first]
    # the same pairs outside a cookie header are a query's or code's, judged elsewhere
    assert first not in _secrets(clf, f"x = 1; {name}={first}; y = 2\n")


@_SETTINGS
@given(_rnd, st.sampled_from(["password", "passwort", "mot de passe", "passcode"]),
       st.sampled_from(["is", "was", ":", "is now"]), st.sampled_from(["", ".", "!"]))  # fmt: skip
def test_a_password_a_sentence_gives_is_stripped_with_its_closing_mark(
    clf: Classifier, rnd: random.Random, word: str, verb: str, mark: str
) -> None:
    value = _token(rnd, rnd.randint(8, 16))
    sep = ": " if verb == ":" else f" {verb} "
    text = f"Hi, my {word}{sep}{value}{mark} Please reset it.\n"
    found = _secrets(clf, text)
    assert any(value in f for f in found), found
    # nothing of the sentence around it (a token may hold "Hi" itself: "6HiAGxF5hGezj")
    assert not [f for f in found if " " in f or "," in f or "Please" in f]


@_SETTINGS
@given(_rnd, st.sampled_from(["password", "API_KEY", "client_secret", "db-token"]))
def test_a_token_in_the_cell_after_a_credential_name_is_stripped(
    clf: Classifier, rnd: random.Random, name: str
) -> None:
    value = _token(rnd)
    table = f"| Name | Value |\n|---|---|\n| {name} | {value} |\n| region | eu-west-1 |\n"
    assert value in _secrets(clf, table)
    assert value in _secrets(clf, f"name,value\n{name},{value}\nregion,eu-west-1\n")
    # a table describing its settings holds none
    assert _secrets(clf, f"| {name} | string | required |\n| {name} | `changeme` | the default |\n") == []


@pytest.mark.parametrize(
    "text",
    [
        "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password\n",
        '{"name": "password", "value": "${PASSWORD}"}',
        '{"name": "token_type", "value": "bearer"}',
        '<input type="password" name="password" value="">',
        "docker run --name web -e MODE=1 nginx",
        "$token = Get-Secret -Name api",
        "$cred = Get-Credential",
    ],
)
def test_a_reference_or_a_field_about_a_credential_is_none(clf: Classifier, text: str) -> None:
    assert _secrets(clf, text + "\n") == []


_WORDS = ["sunshine", "hunter", "Dragonfly", "correcthorsebatterystaple", "postgres", "Marigold", "tigerlily"]


@pytest.mark.parametrize("word", _WORDS)
@pytest.mark.parametrize(
    "line",
    ["DB_PASSWORD={w}", "export POSTGRES_PASSWORD={w}", "ENV MYSQL_ROOT_PASSWORD={w}", "      - REDIS_PASSWORD={w}"],
)
def test_a_word_an_environment_variable_names_a_password_is_one(clf: Classifier, word: str, line: str) -> None:
    """A dotenv or shell line holds a literal: a plain word there is the password (a name of code
    would need a "$" to be read)."""
    assert word in _secrets(clf, line.format(w=word) + "\n")


@pytest.mark.parametrize("text", ["DB_PASSWORD=changeme", "REDIS_PASSWORD=none", "DB_PASSWORD=required", "f(db_password=password_input)",
                                  "API_TOKEN=sunshine", "PASSWORD_FILE=passwords", "DB_PASSWORD=$POSTGRES_PASSWORD"])  # fmt: skip
def test_a_setting_word_or_a_reference_is_no_password(clf: Classifier, text: str) -> None:
    assert _secrets(clf, text + "\n") == []
