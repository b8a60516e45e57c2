"""1 MB built to make each secret pattern work hard stays linear, as test_linear_time holds for
the other families: key blocks without their END line, PuTTY files without a MAC, unclosed
quotes after credential keys, netrc / pgpass / header prefixes, base64 lines, provider prefixes,
credential-file objects that never close."""

from __future__ import annotations

import pytest

from tiers import Classifier

from .test_linear_time import RATIO, SIZE, SLACK_S, _cpu_seconds, _fill

ADVERSARIAL = {
    "pem-truncated-then-prose": "-----BEGIN RSA PRIVATE KEY-----\nAAAAAAAAAAAAAAAAAAAAAAAA\n. x\n",
    "ssh2-truncated-then-prose": "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nAAAAAAAAAAAAAAAAAAAAAA\n. x\n",
    "putty-without-mac": "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\n. x\n",
    "unclosed-quote": 'password = "abc\n',
    "key-runs": "db_password_token_secret_api_key_",
    "netrc-prefix": "machine a login b password ",
    "pgpass-prefix": "a:5432:b:c\n",
    "authorization-prefix": "Authorization: Bearer ",
    "base64-lines": "  k: QUFBQUFBQUE\n",
    "xml-open": "<password>",
    "mysql-p": "mysql -p",
    "provider-prefixes": "ghp_ xoxb- sk-ant- AKIA glpat- dop_v1_ hvs. ",
    # credential-file objects that never close, and armour with no END line
    "service-account-unclosed": '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nAAAA", ',
    "authorized-user-unclosed": '{"client_secret": "abc", "refresh_tokens": 1, ',
    "armour-unclosed": "-----BEGIN PRIVATE KEY-----\\nAAAA!!!! x ",
    "ey-names-dotted": "eyeColorDefaultValue.eyebrowStyleName.",
    # a special token's shape that fails at its end: brackets between words split one way only
    "special-token-runs": 'image_token = "|' + "|||".join(["Ab", "Cd", "Ef", "Gh"] * 6) + '|||9"\n',
}


@pytest.fixture(scope="module")
def prose_seconds(clf: Classifier) -> float:
    from .test_linear_time import _prose

    text = _prose()
    _cpu_seconds(clf, text)  # warm the normalisation tables
    return min(_cpu_seconds(clf, text) for _ in range(3))


@pytest.mark.parametrize("family", sorted(ADVERSARIAL))
def test_secret_patterns_stay_linear(clf: Classifier, prose_seconds: float, family: str) -> None:
    """At most RATIO x plain prose's CPU time, and about four times a quarter of it (a quadratic
    pattern takes sixteen); CPU time, so a loaded machine's wait for a core counts for nothing."""
    unit = ADVERSARIAL[family]
    quarter = min(_cpu_seconds(clf, _fill(unit, SIZE // 4)) for _ in range(2))
    elapsed = min(_cpu_seconds(clf, _fill(unit)) for _ in range(2))
    assert elapsed <= RATIO * prose_seconds, (family, elapsed, prose_seconds)
    assert elapsed <= 10 * quarter + SLACK_S, (family, elapsed, quarter)
