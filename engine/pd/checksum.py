"""Per-block checksums of paged KV, computed where the KV lives (CPU or GPU) without a host copy.

A block's checksum covers the first ``n`` token slots of that block in every layer, so sender
and receiver agree although they hold the block at different block ids and the slots past ``n``
hold whatever each side had there. Layers are given as the standardized per-layer view vLLM
hands to connectors, ``[num_blocks, kv_heads, block_size, head_dim * 2]`` (K and V side by
side); other layouts are refused when the caches are registered, never guessed.

The hash is linear: each 32-bit word ``x_i`` of the covered bytes is multiplied by a fixed odd
64-bit weight ``w_i`` and the products summed modulo 2**64, per layer, and the layer sums are
mixed with per-layer odd weights. A change to any one word changes the sum (an odd weight times
a non-zero difference below 2**33 is never 0 modulo 2**64); more scattered changes go
undetected with probability about 2**-64. It guards against races and truncated or misplaced
transfers, not against someone who knows the weights and forges KV: they are not secret.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["KvLayoutError", "block_checksums", "check_layout"]

_MASK = (1 << 64) - 1
_SEED = 0x7469657267617465  # "tiergate"
_weights: dict[tuple[int, torch.device], torch.Tensor] = {}


class KvLayoutError(Exception):
    """The KV cache tensors are not in the layout the checksums and zeroing understand."""


def check_layout(layers: Sequence[torch.Tensor], block_size: int) -> None:
    """Refuse anything but ``[blocks, heads, block_size, channels]`` with whole 32-bit words."""
    if not layers:
        raise KvLayoutError("no KV cache layers were registered")
    for t in layers:
        if t.dim() != 4 or t.shape[2] != block_size:
            raise KvLayoutError(
                f"KV cache layer of shape {tuple(t.shape)} is not [blocks, heads, {block_size}, channels]"
            )
        if (t.shape[1] * t.shape[3] * t.element_size()) % 4:
            raise KvLayoutError("a KV slot is not a whole number of 32-bit words")


def _word_weights(count: int, device: torch.device) -> torch.Tensor:
    key = (count, device)
    cached = _weights.get(key)
    if cached is None:
        gen = torch.Generator().manual_seed(_SEED)
        w = torch.randint(-(1 << 62), 1 << 62, (count,), generator=gen, dtype=torch.int64)
        cached = (w * 2 + 1).to(device)  # odd: no difference of one word can cancel
        _weights[key] = cached
    return cached


def _layer_weight(index: int) -> int:
    return ((_SEED * (2 * index + 3)) ^ (index << 17)) & _MASK | 1


def _block_words(layer: torch.Tensor, block_ids: list[int], n: int) -> torch.Tensor:
    """``[len(block_ids), words]`` int64 of the first ``n`` slots of each block."""
    index = torch.tensor(block_ids, dtype=torch.long, device=layer.device)
    # Both sides hold the same layout, so the covered bytes are hashed in storage order: one copy
    # (the gather) instead of two (a slots-first permute cost half the hash's time on CPU).
    flat = layer.index_select(0, index)[:, :, :n, :].reshape(len(block_ids), -1)
    return flat.view(torch.int32).to(torch.int64)


def block_checksums(layers: Sequence[torch.Tensor], block_ids: Sequence[int], counts: Sequence[int]) -> list[int]:
    """One 64-bit checksum per block: block ``block_ids[i]``'s first ``counts[i]`` slots."""
    if len(block_ids) != len(counts):
        raise ValueError("one token count per block")
    sums = [0] * len(block_ids)
    by_count: dict[int, list[int]] = {}
    for i, n in enumerate(counts):
        by_count.setdefault(int(n), []).append(i)
    for n, positions in by_count.items():
        ids = [int(block_ids[i]) for i in positions]
        for li, layer in enumerate(layers):
            words = _block_words(layer, ids, n)
            weights = _word_weights(words.shape[1], layer.device)
            per_block = (words * weights).sum(dim=1).tolist()  # int64 arithmetic wraps mod 2**64
            lw = _layer_weight(li)
            for pos, value in zip(positions, per_block, strict=True):
                sums[pos] = (sums[pos] + (value & _MASK) * lw) & _MASK
        for pos in positions:
            sums[pos] = (sums[pos] ^ (n * 0x9E3779B97F4A7C15)) & _MASK  # the count is covered too
    return sums
