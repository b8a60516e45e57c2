"""Secrets and credentials: cloud keys, vendor API tokens, private keys, JWTs, credentialed URLs
and ``.env``-style assignments whose names look secret. Presidio ships none of these."""

from __future__ import annotations

from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer

__all__ = ["CredentialUrlRecognizer", "EnvSecretRecognizer", "PrivateKeyRecognizer", "TokenRecognizer"]

# Values that are obviously not real secrets (templates, examples, empty markers).
_PLACEHOLDER_VALUES = frozenset(
    {"changeme", "change_me", "password", "secret", "example", "xxxxxx", "none", "null", "true",
     "false", "redacted", "your_api_key", "your-api-key", "undefined", "placeholder", "********"}
)


class TokenRecognizer(TiersPatternRecognizer):
    """Vendor tokens with a recognisable prefix or shape."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern("aws_access_key_id", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b", 0.9),
        Pattern("anthropic_key", r"\bsk-ant-[a-z0-9]{2,8}\d{0,2}-[A-Za-z0-9_-]{20,}", 0.95),
        Pattern("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}", 0.9),
        Pattern("github_token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", 0.95),
        Pattern("github_fine_grained", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b", 0.95),
        Pattern("gitlab_token", r"\bgl(?:pat|ptt|dt|rt|cbt|soat|ffct|imt|agent)-[A-Za-z0-9_-]{20,}", 0.95),
        Pattern("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", 0.95),
        Pattern("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}", 0.95),
        Pattern("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b", 0.95),
        Pattern("stripe_webhook_secret", r"\bwhsec_[A-Za-z0-9]{24,}\b", 0.95),
        Pattern("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", 0.95),
        Pattern("google_oauth_token", r"\bya29\.[0-9A-Za-z_-]{20,}", 0.9),
        Pattern("google_client_secret", r"\bGOCSPX-[A-Za-z0-9_-]{20,}", 0.95),
        Pattern("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b", 0.9),
        Pattern("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0.9),
        Pattern("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", 0.95),
        Pattern("azure_storage_key", r"(?i)AccountKey=(?P<value>[A-Za-z0-9+/]{40,}={0,2})", 0.95),
        Pattern("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", 0.9),
    ]


class PrivateKeyRecognizer(TiersPatternRecognizer):
    """PEM / OpenSSH private-key blocks, whole; a truncated block up to the end of its base64."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "private_key_block",
            r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?:(?s:.*?)-----END[A-Z0-9 ]{0,40}"
            r" PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)",
            1.0,
        ),
    ]


class CredentialUrlRecognizer(TiersPatternRecognizer):
    """URLs that carry a password: database DSNs, brokers, HTTP basic auth in the URL."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern(
            "url_with_password",
            r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"<>]{1,128}:[^\s@/'\"<>]{1,256}@[^\s'\"<>]{1,512}",
            0.9,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:  # noqa: D102
        password = pattern_text.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
        return password.lower() in _PLACEHOLDER_VALUES or password.startswith(("${", "{{", "<", "%("))


class EnvSecretRecognizer(TiersPatternRecognizer):
    """``NAME=value`` / ``name: "value"`` assignments whose name looks secret; only the value is
    reported, so stripping keeps the variable name."""

    ENTITY = "SECRET"
    _ENV_NAME = (
        r"[A-Z0-9_]*(?:SECRET|PASSW(?:OR)?D|PWD|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY"
        r"|CREDENTIALS?|AUTH_?KEY|CLIENT_?SECRET)[A-Z0-9_]*"
    )
    _ANY_NAME = (
        r"[A-Za-z0-9_.-]*(?i:secret|passw(?:or)?d|pwd|token|api[_-]?key|access[_-]?key"
        r"|private[_-]?key|credential|auth[_-]?key|client[_-]?secret)[A-Za-z0-9_.-]*"
    )
    PATTERNS = [
        Pattern(
            "env_assignment",
            # Upper-case names only (the .env convention, also inside prose or shell lines) and a
            # token-like value, so that code such as ``token = get_token()`` is not taken.
            r"(?:^|[^A-Za-z0-9_$])" + _ENV_NAME
            + r"[ \t]*[=:][ \t]*['\"]?(?P<value>[^\s'\"#()\[\]{}<>,;]{6,})(?:[ \t'\"#]|$)",
            0.8,
        ),
        Pattern(
            "quoted_assignment",
            r"['\"]?" + _ANY_NAME + r"['\"]?[ \t]*(?:=|:|=>)[ \t]*['\"](?P<value>[^\s'\"]{6,})['\"]",
            0.8,
        ),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:  # noqa: D102
        value = pattern_text.strip("'\"")
        low = value.lower()
        return (
            low in _PLACEHOLDER_VALUES
            or value.startswith(("${", "{{", "<", "%(", "$(", "os.environ", "process.env", "env("))
            or set(low) <= {"x", "*", "."}
            or low.startswith("<") and low.endswith(">")
        )
