"""The guard's checks without an engine: checksums, the load verdict, deferred release, records.

These are the pieces ``TiergateKVGuard`` calls at vLLM's connector seam; the real two-process
split is ``test_pd_vllm.py``. Block tensors here have the layout vLLM hands connectors on CPU.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.manifest import manifest_problems
from engine.pd.checksum import KvLayoutError, block_checksums, check_layout
from engine.pd.records import RecordStore, TransferRecord, valid_transfer_id
from engine.pd.release import Deferral, DeferredReleases
from engine.pd.settings import GuardSettings, guard_transfer_config
from engine.pd.verify import LoadClaim, judge_load
from tests.engine.test_manifest import GOOD

BS = 8


def _layers(blocks: int = 6, seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return [torch.randn(blocks, 1, BS, 8, generator=gen).to(torch.bfloat16) for _ in range(2)]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, BS), layer=st.integers(0, 1), slot=st.integers(0, BS - 1), ch=st.integers(0, 7),
       bit=st.integers(0, 15))  # fmt: skip
def test_any_single_bit_flip_in_the_covered_slots_changes_the_checksum(n, layer, slot, ch, bit) -> None:
    """Flip one bit of one value; the block's checksum changes iff the slot is covered."""
    layers = _layers()
    before = block_checksums(layers, [2], [n])[0]
    layers[layer][2, 0, slot, ch : ch + 1].view(torch.int16).bitwise_xor_(1 << bit)
    after = block_checksums(layers, [2], [n])[0]
    assert (after != before) == (slot < n)


@settings(max_examples=30, deadline=None)
@given(src=st.integers(0, 5), dst=st.integers(0, 5), n=st.integers(1, BS))
def test_the_same_kv_at_another_block_id_has_the_same_checksum(src: int, dst: int, n: int) -> None:
    """Sender and receiver hold a block at different ids, with different leftovers past n."""
    a, b = _layers(seed=1), _layers(seed=2)
    for la, lb in zip(a, b, strict=True):
        lb[dst, :, :n] = la[src, :, :n]
    assert block_checksums(a, [src], [n]) == block_checksums(b, [dst], [n])


def test_counts_and_layers_are_part_of_the_checksum() -> None:
    layers = _layers()
    for la in layers:
        la.zero_()
    assert block_checksums(layers, [1], [3]) != block_checksums(layers, [1], [4])  # zeros, more of them
    swapped = [layers[1], layers[0]]
    nonzero = _layers()
    assert block_checksums(nonzero, [0], [BS]) != block_checksums([nonzero[1], nonzero[0]], [0], [BS])
    assert block_checksums(swapped, [1], [3]) == block_checksums(layers, [1], [3])  # all zero: equal


def test_unknown_layouts_are_refused() -> None:
    with pytest.raises(KvLayoutError):
        check_layout([torch.zeros(2, 6, BS, 1, 8)], BS)  # a [2, blocks, ...] K/V-first layout
    with pytest.raises(KvLayoutError):
        check_layout([torch.zeros(6, 1, 16, 8)], BS)
    check_layout(_layers(), BS)


def _claim(blocks: tuple[int, ...], first: int, claimed: int, tid: str | None = "transfer-1") -> LoadClaim:
    return LoadClaim("r1", tid, blocks, first, claimed, BS)


def _sender_record(layers, block_ids, tokens) -> TransferRecord:
    n_blocks = -(-tokens // BS)
    counts = [min(BS, tokens - j * BS) for j in range(n_blocks)]
    return TransferRecord(BS, tokens, tuple(block_checksums(layers, block_ids[:n_blocks], counts)))


@settings(max_examples=60, deadline=None)
@given(tokens=st.integers(1, 5 * BS), claimed=st.integers(1, 5 * BS), first=st.integers(0, 2))
def test_verdict_no_token_counted_unless_vouched(tokens: int, claimed: int, first: int) -> None:
    """A faithful copy passes iff the sender vouched for every token the receiver claims."""
    first = min(first, (claimed - 1) // BS)
    sender = _layers(seed=3)
    receiver = _layers(seed=4)
    send_ids, recv_ids = (0, 1, 2, 3, 4), (5, 4, 3, 2, 1)
    for ls, lr in zip(sender, receiver, strict=True):
        for j in range(5):
            lr[recv_ids[j]] = ls[send_ids[j]]
    record = _sender_record(sender, list(send_ids), tokens)

    def checksum(ids, counts):
        return block_checksums(receiver, ids, counts)

    verdict = judge_load(_claim(recv_ids, first, claimed), record, checksum)
    assert verdict.ok == (tokens >= claimed), verdict
    if not verdict.ok:
        assert verdict.outcome == "short"
        assert verdict.bad_blocks == frozenset(recv_ids[first : -(-claimed // BS)])


def test_verdict_stale_blocks_missing_records_and_foreign_block_sizes() -> None:
    sender, receiver = _layers(seed=5), _layers(seed=6)  # the receiver's blocks hold other KV
    record = _sender_record(sender, [0, 1, 2, 3], 4 * BS)
    for ls, lr in zip(sender, receiver, strict=True):
        lr[0] = ls[0]  # one page of four arrived

    def checksum(ids, counts):
        return block_checksums(receiver, ids, counts)

    assert judge_load(_claim((0, 1, 2, 3), 0, 4 * BS), record, checksum).outcome == "checksum"
    assert judge_load(_claim((0, 1, 2, 3), 0, BS), record, checksum).ok  # only the page that came
    assert judge_load(_claim((0, 1, 2, 3), 0, BS), None, checksum).outcome == "no_record"
    other = dataclasses.replace(record, block_size=16)
    assert judge_load(_claim((0, 1, 2, 3), 0, BS), other, checksum).outcome == "no_record"


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_deferred_release_waits_for_the_peer_then_times_out_and_zeroes() -> None:
    """Held blocks go back only when every peer rank acked (drained) or after the deadline,
    zeroed first (timeout); nothing is released twice."""
    acked: set[str] = set()
    zeroed: list[tuple[int, ...]] = []
    clock = _Clock()
    releases = DeferredReleases(lambda tid, peer: tid in acked, zeroed.append, clock)
    releases.hold(Deferral("a", "tid-aaaaaaaa", "producer", (3, 4), deadline=110.0))
    releases.hold(Deferral("b", "tid-bbbbbbbb", "producer", (7,), deadline=105.0))
    assert releases.poll() == [] and len(releases) == 2
    acked.add("tid-aaaaaaaa")
    assert releases.poll() == [("a", "drained")] and zeroed == []
    clock.t = 104.9
    assert releases.poll() == []
    clock.t = 105.0
    assert releases.poll() == [("b", "timeout")] and zeroed == [(7,)]
    assert releases.poll() == [] and len(releases) == 0


def test_record_store_acks_need_every_rank_and_ids_are_plain(tmp_path) -> None:
    store = RecordStore(tmp_path / "records")
    store.put_record("transfer-1", 0, TransferRecord(BS, 9, (1, 2)))
    assert store.get_record("transfer-1", 0) == TransferRecord(BS, 9, (1, 2))
    assert store.get_record("transfer-1", 1) is None
    store.ack("transfer-1", "consumer", 0)
    assert not store.acked("transfer-1", "consumer", 2)
    store.ack("transfer-1", "consumer", 1)
    assert store.acked("transfer-1", "consumer", 2) and not store.acked("transfer-1", "producer", 1)
    for bad in ("../../etc", "short", "a" * 65, "with space!", None, 5):
        assert not valid_transfer_id(bad)
    with pytest.raises(ValueError):
        store.ack("../../../x", "consumer", 0)


def test_guard_settings_reject_unknown_keys_and_self_wrapping() -> None:
    inner = {"kv_connector": "NixlConnector"}
    GuardSettings.from_extra({"tiergate": {"inner": inner, "record_dir": "/r"}})
    for bad in ({"inner": inner, "record_dir": "/r", "release_timeout": 5},
                {"inner": {"kv_connector": "TiergateKVGuard"}, "record_dir": "/r"},
                {"inner": {**inner, "kv_role": "kv_both"}, "record_dir": "/r"},
                {"record_dir": "/r"}):  # fmt: skip
        with pytest.raises(ValueError):
            GuardSettings.from_extra({"tiergate": bad})
    cfg = guard_transfer_config("kv_consumer", GuardSettings(inner=inner, record_dir="/r"))
    assert '"kv_load_failure_policy": "fail"' in cfg and '"kv_connector": "TiergateKVGuard"' in cfg


@pytest.mark.parametrize("missing", ["kv_boundary_check", "kv_deferred_release", "kv_checksums", "paired_aborts"])
def test_a_split_deployment_without_any_one_protection_is_refused(missing: str) -> None:
    split = dataclasses.replace(GOOD, disaggregated=True, kv_boundary_check=True, kv_deferred_release=True,
                                kv_checksums=True, paired_aborts=True)  # fmt: skip
    assert manifest_problems(split, 2048) == []
    problems = manifest_problems(dataclasses.replace(split, **{missing: False}), 2048)
    assert len(problems) == 1 and "prefill/decode disaggregation without" in problems[0]


def test_an_older_manifest_without_split_fields_reads_as_unprotected() -> None:
    from engine.manifest import EngineManifest

    split_fields = {"kv_boundary_check", "kv_deferred_release", "kv_checksums", "paired_aborts"}
    old = {k: v for k, v in GOOD.to_json().items() if k not in split_fields}
    parsed = EngineManifest.from_json(old)
    assert parsed == GOOD and not parsed.kv_checksums
    assert manifest_problems(dataclasses.replace(parsed, disaggregated=True), 2048) != []


def test_engine_config_split_half_starts_vllm_with_the_guarded_transport(tmp_path) -> None:
    """`disaggregation` in engine.yaml becomes vLLM's --kv-transfer-config, guarded unless off."""
    import json

    from engine.config import EngineConfig
    from engine.launcher import vllm_command

    (tmp_path / "config.json").write_text("{}")
    base = {"model": tmp_path, "served_model_name": "m", "max_model_len": 64, "kv_cache_memory_bytes": 1 << 20}
    split = {"role": "decode", "connector": {"kv_connector": "NixlConnector"}, "record_dir": str(tmp_path / "r")}
    cmd = vllm_command(EngineConfig.model_validate({**base, "disaggregation": split}), 9000)
    ktc = json.loads(cmd[cmd.index("--kv-transfer-config") + 1])
    assert ktc["kv_connector"] == "TiergateKVGuard" and ktc["kv_role"] == "kv_consumer"
    assert ktc["kv_connector_extra_config"]["tiergate"]["inner"] == {"kv_connector": "NixlConnector"}
    bare = vllm_command(EngineConfig.model_validate({**base, "disaggregation": {**split, "guard": False}}), 9000)
    assert json.loads(bare[bare.index("--kv-transfer-config") + 1])["kv_connector"] == "NixlConnector"
    assert "--kv-transfer-config" not in vllm_command(EngineConfig.model_validate(base), 9000)


def test_the_front_exposes_the_guards_counters_as_metrics(tmp_path) -> None:
    """Counters the guard keeps in its vLLM processes appear on the instance front's /metrics."""
    import httpx
    from litestar.testing import TestClient

    from engine.config import EngineConfig
    from engine.front import create_front
    from engine.pd.counters import GuardCounters
    from tests.engine.test_front import FakeSupervisor, ScriptedEngine

    (tmp_path / "config.json").write_text("{}")
    split = {"role": "decode", "connector": {"kv_connector": "NixlConnector"}, "record_dir": str(tmp_path / "r")}
    cfg = EngineConfig(model=tmp_path, served_model_name="tiny", max_model_len=2048, kv_cache_memory_bytes=1 << 20,
                       disaggregation=split)  # fmt: skip
    supervisor = FakeSupervisor(cfg)
    supervisor.state_dir = tmp_path / "state"  # type: ignore[attr-defined]  # the fake gains the attribute the real supervisor has
    counters = GuardCounters(supervisor.state_dir, {"role": "worker:kv_consumer", "inner": "x", "protections": []})  # type: ignore[attr-defined]  # the fake gains the attribute the real supervisor has
    counters.add("deferred_timeout", 2)
    counters.add("deferred_drained")
    counters.add("checksum_mismatch", 3)
    app = create_front(supervisor, transport=httpx.MockTransport(ScriptedEngine()))  # type: ignore[arg-type]  # a test fake standing in for the real class
    with TestClient(app) as client:
        text = client.get("/metrics").text
    assert 'tiergate_kv_deferred_release_total{outcome="timeout"} 2.0' in text
    assert 'tiergate_kv_deferred_release_total{outcome="drained"} 1.0' in text
    assert 'tiergate_kv_load_refused_total{check="checksum"} 3.0' in text
