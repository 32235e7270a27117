"""XAPP's model search (section 3.3 of the seed): exhaustive feature selection with
repeated random sub-sampling validation, vectorised.

For a set of 4 features the model is OLS on all their interactions: 16 terms, the product
of every subset of the 4 (the empty one is the intercept). A set is scored by 100 random
internal train/test splits of the training data (the seed's 80/12 of 92, scaled): on each
split the model is fitted on the internal train and its mean ``|relative error|`` taken
on the internal test; the set's cross-validation error is the harmonic mean of the 100
split errors. Stage 1 scores a random sample of sets (10,000 of the C(39,4) = 82,251);
stage 2 scores every set of the 12 features most frequent among stage 1's best.

Splits are drawn by kernel, so no kernel is in both an internal train and test. Here all
splits of a chunk of sets are solved at once: each kernel's 16x16 Gram matrix (the sum of
its rows' outer products) is computed once per set, one matrix product with the split
masks gives the normal equations of every split, a tiny ridge keeps them solvable, and
``numpy.linalg.solve`` solves the batch. About 4 s per 10,000 sets on one core.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from kerncast._errors import InputError

__all__ = [
    "RESPONSES",
    "MinMax",
    "SearchResult",
    "cv_errors",
    "group_splits",
    "interaction_names",
    "interaction_terms",
    "search_feature_sets",
    "to_response",
    "from_response",
]

RESPONSES: tuple[str, ...] = ("speedup", "log", "sqrt")
"""The responses the seed tried: the speedup itself, its log and its square root."""
_LOG_CLIP = 60.0
PAPER_TEST_FRACTION = 12 / 92
"""The seed's internal test share: 12 of the 92 training points."""


def _check_response(response: str) -> None:
    if response not in RESPONSES:
        raise InputError(f"unknown response {response!r}; use one of {', '.join(RESPONSES)}")


def to_response(speedup: np.ndarray, response: str) -> np.ndarray:
    """The regression target for ``speedup`` under ``response``."""
    _check_response(response)
    s = np.asarray(speedup, dtype=float)
    if response == "log":
        return np.log(s)
    if response == "sqrt":
        return np.sqrt(s)
    return s


def from_response(value: np.ndarray, response: str) -> np.ndarray:
    """The speedup a regression output stands for (``exp``, the square, or itself)."""
    _check_response(response)
    v = np.asarray(value, dtype=float)
    if response == "log":
        return np.exp(np.clip(v, -_LOG_CLIP, _LOG_CLIP))
    if response == "sqrt":
        return np.square(np.maximum(v, 0.0))
    return v


@dataclass(frozen=True)
class MinMax:
    """Min-max normalisation with the training data's statistics (constant columns map to 0)."""

    low: np.ndarray
    span: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray) -> MinMax:
        x = np.asarray(x, dtype=float)
        low, high = x.min(axis=0), x.max(axis=0)
        span = high - low
        return cls(low, np.where(span > 0, span, 1.0))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x, dtype=float) - self.low) / self.span


def interaction_terms(x: np.ndarray) -> np.ndarray:
    """Every product of a subset of the last axis' ``k`` features: ``(..., n, k)`` ->
    ``(..., n, 2**k)``. Column ``m`` multiplies the features whose bit is set in ``m``,
    so column 0 is the intercept and, for 4 features, there are the seed's 16 terms."""
    x = np.asarray(x, dtype=float)
    k = x.shape[-1]
    out = np.ones((*x.shape, ), dtype=float)[..., :1].repeat(1 << k, axis=-1)
    for j in range(k):
        bit = 1 << j
        cols = [m for m in range(1 << k) if m & bit]
        out[..., cols] *= x[..., j:j + 1]
    return out


def interaction_names(names: Sequence[str]) -> list[str]:
    """The names of :func:`interaction_terms`' columns: ``1``, ``a``, ``b``, ``a*b``, ..."""
    k = len(names)
    return ["*".join(names[j] for j in range(k) if m >> j & 1) or "1" for m in range(1 << k)]


def group_splits(groups: Sequence[str] | np.ndarray, n_splits: int = 100,
                 test_fraction: float = PAPER_TEST_FRACTION, seed: int = 0) -> np.ndarray:
    """Repeated random sub-sampling by group: ``(n_splits, n)`` boolean internal-test masks.

    Each split puts ``round(test_fraction * groups)`` whole groups (kernels) in its
    internal test, so no kernel is on both sides; the seed's 12 of 92 is the default.
    """
    g = np.asarray(groups)
    labels, index = np.unique(g, return_inverse=True)
    if labels.size < 2:
        raise InputError("the sub-sampling needs at least 2 kernels in the training data")
    n_test = min(labels.size - 1, max(1, round(test_fraction * labels.size)))
    rng = np.random.default_rng(seed)
    chosen = np.argsort(rng.random((n_splits, labels.size)), axis=1)[:, :n_test]
    in_test = np.zeros((n_splits, labels.size), dtype=bool)
    np.put_along_axis(in_test, chosen, True, axis=1)
    return in_test[:, index]


def _solve_splits(terms: np.ndarray, target: np.ndarray, train: np.ndarray,
                  ridge: float, block: int = 1) -> np.ndarray:
    """Coefficients ``(G, S, T)`` of every set ``G`` and split ``S`` from the normal
    equations of the rows in ``train``, with a ridge relative to their scale.

    ``train`` is ``(S, n / block)``: rows come in blocks of ``block`` consecutive rows (a
    kernel's sizes, padded with all-zero rows) that are always on one side of a split, so
    the per-row products are summed per block before the matrix product with the masks.
    """
    g, n, t = terms.shape
    nb = n // block
    per_block = np.ascontiguousarray(terms.reshape(g, nb, block, t).transpose(1, 0, 3, 2))
    gram = (train @ (per_block @ per_block.transpose(0, 1, 3, 2)).reshape(nb, -1))
    gram = gram.reshape(-1, g, t, t)  # (S, G, T, T)
    moment = (terms * target[None, :, None]).reshape(g, nb, block, t).sum(axis=2)
    rhs = (train @ moment.transpose(1, 0, 2).reshape(nb, -1)).reshape(-1, g, t)
    diag = np.arange(t)
    scale = gram[..., diag, diag].mean(axis=-1, keepdims=True)
    gram[..., diag, diag] += ridge * scale + 1e-12
    return np.linalg.solve(gram, rhs[..., None])[..., 0].transpose(1, 0, 2)


def cv_errors(x_sets: np.ndarray, speedup: np.ndarray, test: np.ndarray,
              response: str = "speedup", ridge: float = 1e-8, block: int = 1,
              real: np.ndarray | None = None, clip: bool = True) -> np.ndarray:
    """The seed's cross-validation error of each feature set.

    ``x_sets`` is ``(G, n, k)``: the normalised features of ``G`` sets; ``test`` the
    ``(S, n)`` internal-test masks of :func:`group_splits`. Per split: OLS on the
    interaction terms of the internal train, mean ``|relative error|`` of the speedup on
    the internal test. Per set: the harmonic mean over the splits. Returns ``(G,)``.
    ``clip`` bounds each split's predictions by the speedups of its internal train (as
    :class:`PublishedModel` bounds its own by its training data).

    For speed, rows may come in blocks of ``block`` consecutive rows that no split cuts;
    ``real`` (``(n,)`` booleans) then marks the rows that are not padding (padding rows
    carry a positive speedup and are in no internal test).
    """
    y = np.asarray(speedup, dtype=float)
    terms = interaction_terms(x_sets)
    target = to_response(y, response)
    if real is not None:
        terms *= real[None, :, None]
        target = np.where(real, target, 0.0)
    train = (~test[:, ::block]).astype(float)
    beta = _solve_splits(terms, target, train, ridge, block)
    pred = from_response(terms @ beta.transpose(0, 2, 1), response)  # (G, n, S)
    if clip:
        fitted = ~test if real is None else ~test & real
        pred = np.clip(pred, np.where(fitted, y, np.inf).min(axis=1),
                       np.where(fitted, y, -np.inf).max(axis=1))
    rel = np.abs(pred - y[None, :, None]) / y[None, :, None]
    per_split = np.einsum("gns,sn->gs", rel, test.astype(float)) / test.sum(axis=1)
    per_split = np.maximum(np.nan_to_num(per_split, nan=np.inf, posinf=np.inf), 1e-12)
    return per_split.shape[1] / np.sum(1.0 / per_split, axis=1)


@dataclass(frozen=True)
class _Blocks:
    """The training rows rearranged in equal blocks, one per kernel, padded at the end."""

    index: np.ndarray  # (B * block,) row of each slot, -1 for padding
    block: int

    @classmethod
    def of(cls, groups: np.ndarray) -> _Blocks:
        labels, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
        block = int(counts.max())
        index = np.full((labels.size, block), -1)
        slot = np.zeros(labels.size, dtype=int)
        for row, lab in enumerate(inverse):
            index[lab, slot[lab]] = row
            slot[lab] += 1
        return cls(index.ravel(), block)

    @property
    def real(self) -> np.ndarray:
        return self.index >= 0

    def rows(self, values: np.ndarray, fill: float) -> np.ndarray:
        out = values[np.maximum(self.index, 0)].astype(float)
        out[~self.real] = fill
        return out


def _score_sets(x: np.ndarray, speedup: np.ndarray, test: np.ndarray, layout: _Blocks,
                sets: np.ndarray, response: str, chunk: int, clip: bool) -> np.ndarray:
    out = np.empty(len(sets))
    for start in range(0, len(sets), chunk):
        block = sets[start:start + chunk]
        out[start:start + chunk] = cv_errors(x[:, block].transpose(1, 0, 2), speedup, test,
                                             response, block=layout.block, real=layout.real,
                                             clip=clip)
    return out


def random_sets(n_features: int, count: int, k: int = 4, seed: int = 0) -> np.ndarray:
    """``count`` distinct random ``k``-subsets of ``range(n_features)`` (sorted rows); all
    of them when ``count`` reaches ``C(n_features, k)``."""
    total = math.comb(n_features, k)
    if count >= total:
        return np.array(list(itertools.combinations(range(n_features), k)), dtype=int)
    rng = np.random.default_rng(seed)
    found: set[tuple[int, ...]] = set()
    while len(found) < count:
        draw = np.sort(np.argsort(rng.random((count, n_features)), axis=1)[:, :k], axis=1)
        for row in map(tuple, draw.tolist()):
            found.add(row)
            if len(found) == count:
                break
    return np.array(sorted(found), dtype=int)


@dataclass
class SearchResult:
    """The outcome of :func:`search_feature_sets`."""

    features: tuple[str, ...]
    cv_error: float
    response: str
    pool: tuple[str, ...]
    evaluated: int
    seconds: float
    ranking: list[tuple[tuple[str, ...], float]] = field(default_factory=list)


def _pool(sets: np.ndarray, errors: np.ndarray, top: int, size: int) -> list[int]:
    """The ``size`` features most frequent among the ``top`` best sets (stage 1 -> 2)."""
    best = sets[np.argsort(errors, kind="stable")[:top]]
    counts = Counter(best.ravel().tolist())
    return sorted(f for f, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size])


def search_feature_sets(x: np.ndarray, speedup: np.ndarray, groups: Sequence[str] | np.ndarray,
                        names: Sequence[str], *, k: int = 4, n_random: int = 10_000,
                        pool_size: int = 12, top_fraction: float = 0.01, n_splits: int = 100,
                        response: str = "speedup", seed: int = 0, chunk: int = 96,
                        threads: int | None = 1, clip: bool = True,
                        progress: Callable[[str], None] | None = None) -> SearchResult:
    """The seed's two-stage search for the best ``k``-feature interaction model.

    ``x`` holds the normalised training features ``(n, p)``. Stage 1 scores ``n_random``
    random sets of ``k`` (every set when that is at least C(p, k)); stage 2 every set of
    the ``pool_size`` features that occur most often among the best ``top_fraction`` of
    stage 1 (at least 10 sets). Features constant over the training data are left out.
    The best set seen is returned, with the 20 best as ``ranking``. ``threads`` caps the
    BLAS threads (None: the library's default); one is fastest on a small or busy machine.
    ``clip``: see :func:`cv_errors`.
    """
    started = time.perf_counter()
    _check_response(response)
    x = np.asarray(x, dtype=float)
    y = np.asarray(speedup, dtype=float)
    if x.ndim != 2 or x.shape[0] != y.size or x.shape[1] != len(names):
        raise InputError(f"x must be (rows, features) matching speedup and names, got {x.shape}, "
                         f"{y.size} speedups and {len(names)} names")
    live = np.flatnonzero(np.ptp(x, axis=0) > 0)
    if live.size < k:
        raise InputError(f"only {live.size} features vary over the training data; the search "
                         f"needs at least {k}")
    layout = _Blocks.of(np.asarray(groups))
    g = np.repeat(np.unique(np.asarray(groups)), layout.block)
    xs, y = layout.rows(x[:, live], 0.0), layout.rows(y, 1.0)
    test = group_splits(g, n_splits, seed=seed) & layout.real
    stage1 = random_sets(live.size, n_random, k, seed)
    with threadpool_limits(threads, user_api="blas"):
        err1 = _score_sets(xs, y, test, layout, stage1, response, chunk, clip)
    if progress:
        progress(f"stage 1: {len(stage1)} sets, best CV error {np.min(err1):.3f}")
    pool = _pool(stage1, err1, max(10, int(top_fraction * len(stage1))), pool_size)
    stage2 = np.array(list(itertools.combinations(pool, k)), dtype=int)
    with threadpool_limits(threads, user_api="blas"):
        err2 = (_score_sets(xs, y, test, layout, stage2, response, chunk, clip) if len(stage2)
                else np.empty(0))
    if progress:
        progress(f"stage 2: {len(stage2)} sets over {len(pool)} features, best "
                 f"{np.min(err2) if len(err2) else np.nan:.3f}")
    sets = np.concatenate([stage1, stage2]) if len(stage2) else stage1
    errs = np.concatenate([err1, err2])
    order = np.argsort(errs, kind="stable")
    ranking: list[tuple[tuple[str, ...], float]] = []
    for i in order:
        named = tuple(names[live[j]] for j in sets[i])
        if all(named != r[0] for r in ranking):
            ranking.append((named, float(errs[i])))
        if len(ranking) == 20:
            break
    return SearchResult(ranking[0][0], ranking[0][1], response,
                        tuple(names[live[j]] for j in pool), len(sets),
                        time.perf_counter() - started, ranking)
