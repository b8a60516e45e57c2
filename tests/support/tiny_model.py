"""A tiny random-weight Llama with a locally built byte-level tokenizer, for tests and benchmarks.

Kept with the tests, not in the product (it was ``tiergate engine make-test-model``): a model of
random weights is of use only to exercise vLLM. From a checkout, to try the engine without a
download: ``python -m tests.support.tiny_model ./tiny``.

Nothing is downloaded. The tokenizer has 256 byte tokens and no merges, so a prompt's token count
is its UTF-8 byte count (plus chat-template tokens): tests can aim at exact lengths. The chat
template is ChatML; ``<|im_end|>`` is the end-of-sequence token. With a fixed seed the files are
identical on every build, so generations are reproducible across processes.

vLLM's CPU attention needs ``head_dim >= 32``; 2 layers x 1 KV head x 32 x (K,V) x 2 bytes (bf16)
gives 256 bytes of KV per token, so 1 MiB of KV cache holds 4,096 tokens.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TinyModelSpec", "build_tiny_model"]

SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>")

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


@dataclass(frozen=True, slots=True)
class TinyModelSpec:
    """Shape of the tiny model; the defaults are the smallest vLLM's CPU backend accepts."""

    hidden_size: int = 64
    intermediate_size: int = 128
    num_hidden_layers: int = 2
    num_attention_heads: int = 2
    num_key_value_heads: int = 1
    head_dim: int = 32
    max_position_embeddings: int = 8192
    seed: int = 1234

    @property
    def kv_bytes_per_token(self) -> int:
        return 2 * self.num_hidden_layers * self.num_key_value_heads * self.head_dim * 2


def _build_tokenizer(out: Path) -> int:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {ch: i for i, ch in enumerate(sorted(alphabet))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    core.add_special_tokens(list(SPECIAL_TOKENS))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|pad|>",
        unk_token=None,
        model_max_length=1 << 30,
    )
    fast.chat_template = CHATML_TEMPLATE
    fast.save_pretrained(out)
    return len(fast)


def build_tiny_model(out: Path, spec: TinyModelSpec = TinyModelSpec()) -> Path:
    """Write a loadable HF model directory to ``out`` (created); return it. Takes a few seconds."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    vocab_size = _build_tokenizer(out)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=spec.hidden_size,
        intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers,
        num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads,
        head_dim=spec.head_dim,
        max_position_embeddings=spec.max_position_embeddings,
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=vocab_size - 2,  # <|im_end|>
        pad_token_id=vocab_size - 1,
        torch_dtype="bfloat16",
    )
    torch.manual_seed(spec.seed)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(out, safe_serialization=True)
    (out / "generation_config.json").write_text(
        json.dumps({"eos_token_id": vocab_size - 2, "pad_token_id": vocab_size - 1}) + "\n"
    )
    return out


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m tests.support.tiny_model OUT_DIR")
    print(f"tiny model written to {build_tiny_model(Path(sys.argv[1]))}")
