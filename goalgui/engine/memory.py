"""Findings memory: results of finished goals, searched by similarity before executing.

The threshold is deliberately high (0.92): reusing a finding about "UK prices"
for "US prices" is a worse failure than doing the work twice. Vectors live in
one growing numpy matrix so a search is a single matrix-vector product.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

DEFAULT_THRESHOLD = 0.92
_TOKEN = re.compile(r"[a-z0-9]+")


class Embedder(Protocol):
    """Turns texts into vectors of a fixed dimension."""

    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class HashingEmbedder:
    """A dependency-free embedder: hashed words and word bigrams, L2-normalised.

    Word-level features keep a one-word difference ("UK" / "US") far enough apart
    to stay below the reuse threshold, while true restatements score near 1.
    Numbers weigh more (they name things: "part 3", "2024", "3.99") and stop
    words less, so "part 2 of X" is not mistaken for "part 3 of X".
    """

    def __init__(self, dimension: int = 512):
        self.dimension = dimension
        self._cache: dict[str, int] = {}

    def _bucket(self, feature: str) -> int:
        bucket = self._cache.get(feature)
        if bucket is None:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest, "little") % self.dimension
            if len(self._cache) < 200_000:
                self._cache[feature] = bucket
        return bucket

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _TOKEN.findall(text.lower())
            for word in words:
                out[row, self._bucket(word)] += _weight(word)
            for a, b in zip(words, words[1:]):
                out[row, self._bucket(a + " " + b)] += min(_weight(a), _weight(b))
            # numbers in their order: "part 0 of part 1" is not "part 1 of part 0"
            for i, number in enumerate(w for w in words if w.isdigit()):
                out[row, self._bucket(f"#{i}:{number}")] += 3.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


_STOP = frozenset("a an and are as at be by for from in is it of on or the this that to with".split())


def _weight(word: str) -> float:
    if word.isdigit():
        return 3.0
    return 0.3 if word in _STOP else 1.0


@dataclass(frozen=True)
class Finding:
    key: str
    text: str
    tag: str
    score: float = 0.0


class FindingsMemory:
    """Keyed findings with a similarity search over their tags (the goal texts)."""

    def __init__(self, embedder: Embedder | None = None, threshold: float = DEFAULT_THRESHOLD):
        self.embedder = embedder or HashingEmbedder()
        self.threshold = threshold
        self._keys: list[str] = []
        self._texts: list[str] = []
        self._tags: list[str] = []
        self._matrix = np.zeros((64, self.embedder.dimension), dtype=np.float32)

    def __len__(self) -> int:
        return len(self._keys)

    def save(self, key: str, text: str, tag: str) -> None:
        n = len(self._keys)
        if n == len(self._matrix):
            grown = np.zeros((2 * n, self.embedder.dimension), dtype=np.float32)
            grown[:n] = self._matrix
            self._matrix = grown
        self._matrix[n] = self.embedder.embed([tag])[0]
        self._keys.append(key)
        self._texts.append(text)
        self._tags.append(tag)

    def search(self, query: str, k: int = 3) -> list[Finding]:
        n = len(self._keys)
        if n == 0:
            return []
        scores = self._matrix[:n] @ self.embedder.embed([query])[0]
        top = np.argsort(-scores)[:k] if n > k else np.argsort(-scores)
        return [Finding(self._keys[i], self._texts[i], self._tags[i], float(scores[i])) for i in top]

    def reusable(self, query: str) -> Finding | None:
        """The best finding if it clears the threshold, else None."""
        best = self.search(query, k=1)
        return best[0] if best and best[0].score >= self.threshold else None
