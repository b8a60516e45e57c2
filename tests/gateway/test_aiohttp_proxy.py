"""The upstream client's proxy lookup: aiohttp's own, accepted only for the tested minor."""

from __future__ import annotations

import types
from importlib.metadata import version

import pytest
from aiohttp import helpers
from yarl import URL

from gateway._aiohttp_proxy import TESTED_MINOR, env_proxy_for_url, incompatibility


def test_the_installed_aiohttp_is_accepted() -> None:
    assert version("aiohttp").startswith(TESTED_MINOR + ".")
    assert incompatibility(version("aiohttp"), helpers) is None


@pytest.mark.parametrize("other", ["3.15.0", "4.0.0", "3.13.2"])
def test_another_minor_is_refused(other: str) -> None:
    assert f"aiohttp {other} is not the tested" in (incompatibility(other, helpers) or "")


def test_a_missing_or_changed_lookup_is_refused() -> None:
    installed = version("aiohttp")
    assert "missing" in (incompatibility(installed, types.SimpleNamespace()) or "")
    changed = types.SimpleNamespace(get_env_proxy_for_url=lambda url, trust=True: None)
    assert "is not (url)" in (incompatibility(installed, changed) or "")


def test_the_lookup_reads_the_proxy_and_no_proxy_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/nonexistent")  # no ~/.netrc
    with pytest.raises(LookupError):
        env_proxy_for_url(URL("https://api.vendor.example/v1"))
    monkeypatch.setenv("HTTPS_PROXY", "http://egress:s3cret@proxy.internal:3128")
    proxy, auth = env_proxy_for_url(URL("https://api.vendor.example/v1"))
    assert (str(proxy), auth and (auth.login, auth.password)) == ("http://proxy.internal:3128", ("egress", "s3cret"))
    monkeypatch.setenv("NO_PROXY", "api.vendor.example")
    with pytest.raises(LookupError):
        env_proxy_for_url(URL("https://api.vendor.example/v1"))
