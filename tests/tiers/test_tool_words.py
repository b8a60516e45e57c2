"""Services where a person could stand (issue 12, eleventh group): ``git@example.com`` is a service's
account at a documentation domain, not a mailbox; people at the same domain, and the same account
at a company's domain, stay mailboxes. ("opened by Pillow" stays a person's place by decision: a
rule reading a dictionary word there as a tool lost real surnames, "prepared by Penfold".)"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig

from .test_recognizers import found

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_DOC_DOMAINS = ["example.com", "example.org", "ssh.example.net", "git.example.com"]


@pytest.fixture(scope="module")
def clf() -> Classifier:
    return Classifier(TiersConfig())


@_SETTINGS
@given(
    user=st.sampled_from(["git", "accesstoken", "deploy", "ubuntu", "jenkins", "x-access-token"]),
    domain=st.sampled_from(_DOC_DOMAINS),
    form=st.sampled_from(["ssh://{u}@{d}/team/repo.git", "https://{u}@{d}/path", '"{u}@{d}" returns "****@{d}"']),
)
def test_a_service_account_at_a_documentation_domain_is_no_mailbox(
    clf: Classifier, user: str, domain: str, form: str
) -> None:
    text = form.format(u=user, d=domain)
    assert not [v for e, v in found(clf, text) if e == "EMAIL_ADDRESS"], text
    # the same account at a company's domain, and a person at a documentation domain, are mailboxes
    assert ("EMAIL_ADDRESS", f"{user}@acme-corp.com") in found(clf, f"write to {user}@acme-corp.com today")
    assert ("EMAIL_ADDRESS", f"maria.gonzalez@{domain}") in found(clf, f"write to maria.gonzalez@{domain} today")
