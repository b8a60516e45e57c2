"""Secrets and credentials (entity ``SECRET``); presidio ships none of these.

- ``providers``: self-identifying tokens of the providers in ``_table`` (documented prefixes,
  alphabets and lengths);
- ``assignments``: credentials by the key they are assigned to, in every common syntax;
- ``commands``: command lines, ``.netrc`` / ``.pgpass``, ``Authorization`` and cookie headers,
  Kubernetes Secret data;
- ``pairs``: a credential's name in one field and its value in the next (Kubernetes ``env``,
  ECS, Terraform, CloudFormation), ``--name … --value …`` on command lines;
- ``calls``: credentials handed to a call by position (``setPassword("…")``, ``auth=("u", "…")``,
  a browser test filling a password field);
- ``statements``: SQL's ``IDENTIFIED BY``, PowerShell's ``ConvertTo-SecureString``, prose
  ("my password is …");
- ``keys``: private-key blocks, PuTTY files, JWTs, URLs with a password;
- ``connection_strings``: Azure-style ``Endpoint=…;…Key=…`` strings, whole;
- ``credential_files``: Google service-account keys and application default credentials.

Every pattern is RE2; each reports the whole value.
"""

from __future__ import annotations

from presidio_analyzer import EntityRecognizer

from .assignments import AssignmentRecognizer, MarkupRecognizer
from .calls import CallArgumentRecognizer
from .commands import (
    AuthorizationRecognizer,
    BearerRecognizer,
    CommandLineRecognizer,
    CookieRecognizer,
    DotfileRecognizer,
    KubernetesSecretDataRecognizer,
)
from .connection_strings import ConnectionStringRecognizer
from .credential_files import GoogleCredentialFileRecognizer
from .keys import CredentialUrlRecognizer, JwtRecognizer, PrivateKeyRecognizer, TokenUrlRecognizer
from .pairs import NameValueRecognizer
from .providers import ProviderTokenRecognizer, provider_formats
from .statements import ProseCredentialRecognizer, StatementRecognizer

__all__ = [
    "AssignmentRecognizer",
    "AuthorizationRecognizer",
    "BearerRecognizer",
    "CallArgumentRecognizer",
    "CommandLineRecognizer",
    "ConnectionStringRecognizer",
    "CookieRecognizer",
    "CredentialUrlRecognizer",
    "DotfileRecognizer",
    "GoogleCredentialFileRecognizer",
    "JwtRecognizer",
    "KubernetesSecretDataRecognizer",
    "MarkupRecognizer",
    "NameValueRecognizer",
    "PrivateKeyRecognizer",
    "ProseCredentialRecognizer",
    "ProviderTokenRecognizer",
    "StatementRecognizer",
    "TokenUrlRecognizer",
    "provider_formats",
    "secret_recognizers",
]


def secret_recognizers() -> list[EntityRecognizer]:
    """The shipped secret recognizers, in the registry's order."""
    return [
        ProviderTokenRecognizer(),
        PrivateKeyRecognizer(),
        JwtRecognizer(),
        CredentialUrlRecognizer(),
        TokenUrlRecognizer(),
        ConnectionStringRecognizer(),
        GoogleCredentialFileRecognizer(),
        AssignmentRecognizer(),
        MarkupRecognizer(),
        CommandLineRecognizer(),
        DotfileRecognizer(),
        AuthorizationRecognizer(),
        BearerRecognizer(),
        KubernetesSecretDataRecognizer(),
        CookieRecognizer(),
        StatementRecognizer(),
        ProseCredentialRecognizer(),
        NameValueRecognizer(),
        CallArgumentRecognizer(),
    ]
