"""Tools and services where a person could stand (issue 12, ninth and held-out groups): "opened by
Pillow" names a library after a role word, and ``git@example.com`` a service's account at a
documentation domain. People in the same places stay people."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, TiersConfig
from tiers.recognizers._english_words import is_english_word
from tiers.recognizers._given_names import given_names
from tiers.recognizers._surnames import surname_rank

from .test_recognizers import found

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_ROLES = ["opened by", "reported by", "verified by", "written by", "checked by"]
_DOC_DOMAINS = ["example.com", "example.org", "ssh.example.net", "git.example.com"]


@pytest.fixture(scope="module")
def clf() -> Classifier:
    return Classifier(TiersConfig())


def _words(rare: bool) -> list[str]:
    """Capitalised words of the dictionary that are no given name: census surnames beyond the
    first 2,000 or none (``rare``), or among the first 2,000."""
    given = given_names(1)
    out = []
    for w in ("pillow", "lantern", "sparrow", "thimble", "walnut", "baker", "bishop", "fisher", "wood",
              "mason", "carpenter", "hunter", "porter", "marsh", "turner"):  # fmt: skip
        rank = surname_rank(w)
        if is_english_word(w) and w not in given and ((rank is None or rank > 2000) == rare):
            out.append(w.capitalize())
    return out


@_SETTINGS
@given(role=st.sampled_from(_ROLES), word=st.sampled_from(_words(rare=True)))
def test_a_word_and_rare_surname_after_a_role_is_a_tool(clf: Classifier, role: str, word: str) -> None:
    text = f"If the file was {role} {word}, then this attribute is set."
    assert ("PERSON", word) not in found(clf, text)


@_SETTINGS
@given(role=st.sampled_from(_ROLES), word=st.sampled_from(_words(rare=False)))
def test_a_common_surname_after_a_role_or_any_after_a_title_stays_a_person(
    clf: Classifier, role: str, word: str
) -> None:
    assert ("PERSON", word) in found(clf, f"The deviation was {role} {word}.\n")
    assert ("PERSON", "Pillow") in found(clf, f"The deviation was {role} Mr. Pillow.\n")


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
