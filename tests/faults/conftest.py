"""Fixtures for the fault suite: one classifier per session and an opened audit store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from migrations import upgrade
from tests.support.harness import SECRETS


@pytest.fixture(scope="session")
def classifier() -> Any:
    """One classifier for the session: building presidio's registry takes a moment."""
    from tiers import Classifier
    from tiers.config import TiersConfig

    return Classifier(TiersConfig(internal_domains=("corp.example.com",)))


async def open_store(db_url: str, tmp_path: Path) -> Any:
    from audit.settings import AuditSettings
    from audit.store import AuditStore

    store = await AuditStore.open(
        AuditSettings(url=db_url, checkpoint_dir=str(tmp_path / "checkpoints")),
        fingerprint_key=SECRETS["fingerprint_key"].encode(),
        checkpoint_key=SECRETS["checkpoint_key"].encode(),
    )
    await upgrade(store)
    return store


def admin(db_url: str, tmp_path: Path, work: Any) -> Any:
    """Run ``await work(store)`` on a freshly opened (and migrated) store, in a private loop."""
    import asyncio
    import threading

    async def run() -> Any:
        store = await open_store(db_url, tmp_path)
        try:
            return await work(store)
        finally:
            await store.close()

    box: list[Any] = []
    t = threading.Thread(target=lambda: box.append(asyncio.run(run())))
    t.start()
    t.join()
    if not box:
        raise RuntimeError("admin work failed (see the thread's traceback above)")
    return box[0]


def create_key(db_url: str, tmp_path: Path, tenant: str = "acme", max_tier: int = 3) -> str:
    plaintext, _info = admin(db_url, tmp_path, lambda st: st.create_key(tenant, f"{tenant}-key", max_tier, None))
    return str(plaintext)
