"""Findings memory: results of finished goals, searched by similarity before executing.

The threshold is deliberately high (0.92): reusing a finding about "UK prices"
for "US prices" is a worse failure than doing the work twice. The default
hashing embedder counts words, not meaning, so with it only a finding for the
same goal text is reused; near ones are only shown to the model as related. A search is a few
vectorised numpy operations, never a Python loop over the findings.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

DEFAULT_THRESHOLD = 0.92
BLOCK = 16_384  # findings per block of the vector store
_TOKEN = re.compile(r"[a-z0-9]+")


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors of a fixed dimension."""

    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class AsyncEmbedder(Protocol):
    """An embedder that must be awaited (a provider's embeddings endpoint). `dimension` may be
    None until the first vectors arrive."""

    dimension: int | None

    async def aembed(self, texts: Sequence[str]) -> np.ndarray: ...


class HashingEmbedder:
    """A dependency-free embedder: hashed words and word bigrams, L2-normalised.

    Word-level features keep a one-word difference ("UK" / "US") far enough apart
    to stay below the reuse threshold, while true restatements score near 1.
    Numbers weigh more (they name things: "part 3", "2024", "3.99") and stop
    words less, so "part 2 of X" is not mistaken for "part 3 of X".
    """

    semantic = False  # similar words are not a similar goal: only the same text is reused

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

    def features(self, text: str) -> tuple[list[int], list[float]]:
        """(buckets, weights) of a text's features; a bucket may repeat."""
        words = _TOKEN.findall(text.lower())
        weights = [_weight(w) for w in words]
        buckets = [self._bucket(w) for w in words]
        for i in range(len(words) - 1):
            buckets.append(self._bucket(words[i] + " " + words[i + 1]))
            weights.append(min(weights[i], weights[i + 1]))
        # numbers in their order: "part 0 of part 1" is not "part 1 of part 0"
        for i, number in enumerate(w for w in words if w.isdigit()):
            buckets.append(self._bucket(f"#{i}:{number}"))
            weights.append(3.0)
        return buckets, weights

    def sparse(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """The normalised vector of one text as (dimensions, values): ~20 entries, not 512."""
        summed: dict[int, float] = {}
        for bucket, weight in zip(*self.features(text)):
            summed[bucket] = summed.get(bucket, 0.0) + weight
        norm = math.sqrt(sum(v * v for v in summed.values())) or 1.0
        rows = np.fromiter(summed.keys(), dtype=np.intp, count=len(summed))
        values = np.fromiter((v / norm for v in summed.values()), dtype=np.float32, count=len(summed))
        return rows, values

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            dims, values = self.sparse(text)
            out[row, dims] = values
        return out


_STOP = frozenset("a an and are as at be by for from in is it of on or the this that to with".split())


def _normalised(text: str) -> str:
    return " ".join(_TOKEN.findall(text.lower()))


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


class _Columns:
    """Vectors stored one row per dimension, in blocks of BLOCK findings (dimension x BLOCK each).

    A sparse query reads only its ~20 rows of each block: a gather and one small product.
    Posting lists per dimension were tried and dropped: goal texts share common words, so the
    lists are long, and the scatter-add over them made the 10,000-goal benchmark 2.4x slower. Blocks, not one matrix that doubles: growing never copies what is there
    (at 100,000 findings a doubling copied 200 MB in one stall of a tenth of a second)."""

    def __init__(self, dimension: int):
        self.dimension = dimension
        self.blocks: list[np.ndarray] = []

    def add(self, item: int, dims, values: np.ndarray) -> None:
        block, column = divmod(item, BLOCK)
        if block == len(self.blocks):
            self.blocks.append(np.zeros((self.dimension, min(BLOCK, max(64, 2 * item))), dtype=np.float32))
        matrix = self.blocks[block]
        if column >= matrix.shape[1]:  # the first block starts small and doubles up to BLOCK
            grown = np.zeros((self.dimension, min(BLOCK, 2 * matrix.shape[1])), dtype=np.float32)
            grown[:, :matrix.shape[1]] = matrix
            self.blocks[block] = matrix = grown
        matrix[dims, column] = values

    def scores(self, dims, values: np.ndarray, n: int) -> np.ndarray:
        parts = []
        for block, matrix in enumerate(self.blocks):
            width = min(BLOCK, n - block * BLOCK)
            if width <= 0:
                break
            parts.append(values @ matrix[dims, :width])
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


class FindingsMemory:
    """Keyed findings with a similarity search over their tags (the goal texts).

    Vectors are stored one row per dimension, so a sparse query (an embedder with
    `sparse(text)`, like the hashing one: ~20 features) reads only its own rows: a search
    costs features x findings, not dimension x findings. Dense embedders use every row.
    """

    def __init__(self, embedder: Embedder | AsyncEmbedder | None = None, threshold: float = DEFAULT_THRESHOLD):
        self.embedder = embedder or HashingEmbedder()
        self.threshold = threshold
        self._async = hasattr(self.embedder, "aembed")
        self._keys: list[str] = []
        self._texts: list[str] = []
        self._tags: list[str] = []
        self._store: _Columns | None = None  # its dimension is the first vector's
        self._recent: OrderedDict[str, tuple] = OrderedDict()
        self._waiting: list[tuple[str, str, str]] = []  # saved before their vectors could be fetched

    async def prepare(self, texts: Sequence[str]) -> None:
        """Fetch the vectors an awaited embedder owes (for `texts` and for findings saved before).
        Call before `search`/`save` with such an embedder; with a plain one it does nothing."""
        if not self._async:
            return
        waiting, self._waiting = self._waiting, []
        wanted = [t for t in dict.fromkeys([tag for _, _, tag in waiting] + list(texts)) if t not in self._recent]
        fetched: dict[str, tuple] = {}
        if wanted:
            vectors = np.asarray(await self.embedder.aembed(wanted), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.where(norms > 0, norms, 1)
            fetched = {text: (slice(None), vector) for text, vector in zip(wanted, vectors)}
        for key, text, tag in waiting:
            self._insert(key, text, tag, fetched.get(tag) or self._recent[tag])
        for text in texts:
            if text in fetched:
                self._remember(text, fetched[text])

    def _remember(self, text: str, vector: tuple) -> None:
        self._recent[text] = vector
        if len(self._recent) > 16:
            self._recent.popitem(last=False)

    def __len__(self) -> int:
        return len(self._keys)

    def _vector(self, text: str) -> tuple[np.ndarray | slice, np.ndarray]:
        """(dimensions, values) of a text: only its nonzero dimensions for a sparse embedder."""
        vector = self._recent.get(text)
        if vector is None:
            if self._async:
                raise RuntimeError("an awaited embedder needs `await memory.prepare([text])` first")
            sparse = getattr(self.embedder, "sparse", None)
            if sparse is not None:
                vector = sparse(text)
            else:
                vector = (slice(None), self.embedder.embed([text])[0])
            self._remember(text, vector)
        return vector

    def save(self, key: str, text: str, tag: str) -> None:
        if self._async and tag not in self._recent:  # its vector is fetched by the next prepare()
            self._waiting.append((key, text, tag))
            return
        self._insert(key, text, tag, self._vector(tag))

    def _insert(self, key: str, text: str, tag: str, vector: tuple) -> None:
        dims, values = vector
        if self._store is None:
            self._store = _Columns(self.embedder.dimension if not isinstance(dims, slice) else len(values))
        self._store.add(len(self._keys), dims, values)
        self._keys.append(key)
        self._texts.append(text)
        self._tags.append(tag)

    def search(self, query: str, k: int = 3) -> list[Finding]:
        """The `k` findings most like `query`, best first."""
        n = len(self._keys)
        if n == 0:
            return []
        dims, values = self._vector(query)
        scores = self._store.scores(dims, values, n)
        if n <= k:
            top = [int(i) for i in np.argsort(-scores)]
        else:  # k passes of argmax: ~1 us each, where argpartition costs ~50 us at 4,000 findings
            top, masked = [], scores.copy()
            for _ in range(k):
                best = int(masked.argmax())
                top.append(best)
                masked[best] = -np.inf
        return [Finding(self._keys[i], self._texts[i], self._tags[i], float(scores[i])) for i in top]

    @property
    def semantic(self) -> bool:
        """Whether the embedder knows meaning. The hashing one counts words: "delete the production
        backups, keep staging" and "delete the staging backups, keep production" score 0.95."""
        return getattr(self.embedder, "semantic", True)

    def reusable(self, query: str, found: list[Finding] | None = None) -> Finding | None:
        """The finding whose result may stand for `query`'s, or None (seed 000: reusing a wrong
        finding is worse than doing the work twice). With a semantic embedder, the best one at
        or above the threshold; with the hashing one, only a finding for the same text
        (normalised). `found`: a search already made for `query`."""
        best = found[:1] if found is not None else self.search(query, k=1)
        if not best or best[0].score < self.threshold:
            return None
        if not self.semantic and _normalised(best[0].tag) != _normalised(query):
            return None
        return best[0]
