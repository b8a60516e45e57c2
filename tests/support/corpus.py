"""A deterministic, varied corpus of prompts: prose, code, JSON, tables, numbers, several scripts,
emoji, whitespace runs, very short and long, single and multi-message. For false-alarm tests."""

from __future__ import annotations

import json
import random
from typing import Any

__all__ = ["chat_corpus", "texts"]

_WORDS = (
    "the quarterly plan needs review before we ship the new release to every region while "
    "keeping latency low and costs predictable across teams and vendors"
).split()
_CODE = '''def merge(a, b):
    """Merge two sorted lists."""
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] <= b[j]:
            out.append(a[i]); i += 1
        else:
            out.append(b[j]); j += 1
    return out + a[i:] + b[j:]
'''
_SCRIPTS = [
    "Der schnelle braune Fuchs springt über den faulen Hund. Grüße aus München!",
    "Le cœur a ses raisons que la raison ne connaît point. Voilà, c'est déjà l'été.",
    "速い茶色の狐がのろまな犬を飛び越える。東京の天気は晴れです。",
    "快速的棕色狐狸跳过了懒狗。今天北京的天气很好。",
    "Быстрая коричневая лиса перепрыгивает через ленивую собаку.",
    "الثعلب البني السريع يقفز فوق الكلب الكسول",
    "빠른 갈색 여우가 게으른 개를 뛰어넘습니다.",
    "Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",
    "तेज़ भूरी लोमड़ी आलसी कुत्ते के ऊपर कूदती है।",
    "Launch 🚀 party 🎉 with 🍕 and 🎸 — see you there 👋🏽",
]


def _prose(rng: random.Random, n: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def _table(rng: random.Random, rows: int) -> str:
    lines = ["id,region,units,price"]
    for i in range(rows):
        lines.append(f"{i},{rng.choice(['north', 'south', 'east'])},{rng.randint(0, 9999)},{rng.random() * 100:.2f}")
    return "\n".join(lines)


def texts(n: int = 1000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    kinds = ["prose", "code", "json", "table", "script", "mixed", "short", "spaces", "long", "numbers"]
    for i in range(n):
        kind = kinds[i % len(kinds)]
        if kind == "prose":
            text = _prose(rng, rng.randint(5, 200))
        elif kind == "code":
            text = "Review this code:\n" + _CODE * rng.randint(1, 4)
        elif kind == "json":
            obj = {"task": _prose(rng, 8), "items": [rng.randint(0, 10**6) for _ in range(rng.randint(1, 40))],
                   "flags": {"a": True, "b": None}}  # fmt: skip
            text = "Validate: " + json.dumps(obj, indent=rng.choice([None, 2]))
        elif kind == "table":
            text = "Summarise:\n" + _table(rng, rng.randint(2, 60))
        elif kind == "script":
            text = " ".join(rng.choice(_SCRIPTS) for _ in range(rng.randint(1, 12)))
        elif kind == "mixed":
            text = _prose(rng, 20) + "\n\n" + rng.choice(_SCRIPTS) + "\n```\n" + _CODE + "```"
        elif kind == "short":
            text = rng.choice(["hi", "ok?", "Thanks!", "2+2", "Why?", "yes", "Translate: cat"])
        elif kind == "spaces":
            text = "Indented:\n" + "\n".join(" " * rng.randint(0, 16) + _prose(rng, 4) for _ in range(12))
        elif kind == "long":
            text = "\n".join(_prose(rng, 120) for _ in range(rng.randint(5, 15)))
        else:
            text = " ".join(str(rng.randint(0, 10 ** rng.randint(1, 12))) for _ in range(rng.randint(3, 80)))
        out.append(text)
    return out


def chat_corpus(n: int = 1000, seed: int = 7) -> list[list[dict[str, Any]]]:
    """Chats of one to four messages built from :func:`texts`."""
    rng = random.Random(seed)
    items = texts(n, seed)
    chats = []
    for i, text in enumerate(items):
        messages: list[dict[str, Any]] = []
        if i % 3 == 0:
            messages.append({"role": "system", "content": "You are a careful assistant."})
        if i % 4 == 1:
            messages += [{"role": "user", "content": "Earlier question."},
                         {"role": "assistant", "content": _prose(rng, 15)}]  # fmt: skip
        messages.append({"role": "user", "content": text})
        chats.append(messages)
    return chats
