"""The audit store's seams (``gateway.seams``): the real store and the tests' fakes implement them.

mypy checks the assignments in ``_conforms`` (a fake that drifts from the protocol fails the type
check); the test checks the same at run time, by signature, for the real store and the wrappers."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from audit.store import AuditStore as RealStore
from gateway.seams import AuditStore, KeyStore, WriteAheadLog
from tests.gateway.test_auth_cache import _SlowStore
from tests.support.harness import _LazyStore
from tests.support.stores import FailingWrites, WrappedStore


def _conforms(real: RealStore, wrapped: WrappedStore, failing: FailingWrites, lazy: _LazyStore,
              slow: _SlowStore) -> None:  # fmt: skip
    """Never called: its assignments are what mypy checks."""
    stores: list[AuditStore] = [real, wrapped, failing, lazy]
    logs: list[WriteAheadLog] = [*stores]
    keys: list[KeyStore] = [*stores, slow]
    del logs, keys


def _members(protocol: type) -> dict[str, inspect.Signature | None]:
    names = [n for n in vars(protocol) if not n.startswith("_")]
    for base in protocol.__mro__[1:]:
        if getattr(base, "_is_protocol", False) and base is not protocol:
            names += [n for n in vars(base) if not n.startswith("_")]
    out: dict[str, inspect.Signature | None] = {}
    for name in names:
        value = getattr(protocol, name)
        out[name] = None if isinstance(value, property) else inspect.signature(value)
    return out


@pytest.mark.parametrize("impl", [RealStore, WrappedStore, FailingWrites, _LazyStore])
def test_every_member_of_the_seam_is_implemented_with_its_signature(impl: Any) -> None:
    members = _members(AuditStore)
    assert {"record_request", "record_outcome", "record_refusal", "authenticate", "engine"} <= set(members)
    for name, signature in members.items():
        if signature is None:  # the engine: an attribute the real store sets, a property of the wrappers
            assert name in dir(impl) or f"self.{name} = " in inspect.getsource(impl.__init__), name
            continue
        assert name in dir(impl), name
        got = inspect.signature(getattr(impl, name))
        assert list(got.parameters) == list(signature.parameters), name
        assert [p.kind for p in got.parameters.values()] == [p.kind for p in signature.parameters.values()], name
        assert inspect.iscoroutinefunction(getattr(impl, name)), name
