"""Which configurations of a launch space a sweep predicts: Kernel Tuner's strategies,
with the static model in place of runs on a GPU.

``brute_force``
    Every configuration the restrictions allow (the default).
``random_sample``
    ``max_fevals`` configurations (or a ``fraction`` of the space) drawn at random,
    without repeats, from ``seed``.
``greedy_ils``
    Greedy iterated local search: from a random configuration, predict its neighbours
    (``neighbor="Hamming"``: every configuration that differs in one parameter;
    ``"adjacent"``: one parameter moved to the value next to it in its list), move to
    the best of them while it is faster, and start again from a random configuration
    not yet predicted when none is; until ``max_fevals`` configurations are predicted
    (default 100) or the space is spent.

A configuration that fails to build or predict is a row with its error and an infinite
time; the search goes on past it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kerncast._errors import InputError

__all__ = ["STRATEGIES", "Search", "config_key", "search"]

STRATEGIES = ("brute_force", "random_sample", "greedy_ils")
NEIGHBOURS = ("Hamming", "adjacent")
#: ``greedy_ils`` predicts this many configurations where ``max_fevals`` is not given.
DEFAULT_FEVALS = 100
_OPTIONS = {"max_fevals", "fraction", "neighbor", "seed"}

#: Predictions of a batch of configurations, a row each with ``seconds``.
Evaluate = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def config_key(config: Mapping[str, Any]) -> str:
    """One configuration as a key (its parameters, sorted)."""
    return json.dumps(dict(config), sort_keys=True, default=str)


@dataclass(frozen=True)
class Search:
    """A strategy and its options, checked (see the module)."""

    strategy: str = "brute_force"
    max_fevals: int | None = None
    fraction: float | None = None
    neighbor: str = "Hamming"
    seed: int = 0

    @classmethod
    def of(cls, strategy: str | None = None,
           options: Mapping[str, Any] | None = None) -> Search:
        """From Kernel Tuner's ``strategy`` and ``strategy_options``."""
        name = strategy or "brute_force"
        if name not in STRATEGIES:
            raise InputError(f"unknown strategy {name!r}; kerncast sweeps with "
                             f"{', '.join(STRATEGIES)}")
        opts = dict(options or {})
        unknown = sorted(set(opts) - _OPTIONS)
        if unknown:
            raise InputError(f"strategy option(s) {', '.join(unknown)} not known; give "
                             f"{', '.join(sorted(_OPTIONS))}")
        fevals, fraction = opts.get("max_fevals"), opts.get("fraction")
        if fevals is not None and (not isinstance(fevals, int) or fevals < 1):
            raise InputError(f"max_fevals={fevals!r}: give the number of configurations to "
                             "predict, 1 or more")
        if fraction is not None and not (isinstance(fraction, (int, float))
                                         and 0 < fraction <= 1):
            raise InputError(f"fraction={fraction!r}: give a share of the space in (0, 1]")
        if name == "random_sample" and fevals is None and fraction is None:
            raise InputError("random_sample needs max_fevals (a number of configurations) "
                             "or fraction (a share of the space)")
        neighbor = opts.get("neighbor", "Hamming")
        if neighbor not in NEIGHBOURS:
            raise InputError(f"neighbor={neighbor!r}: choose {' or '.join(NEIGHBOURS)}")
        return cls(name, fevals, fraction, neighbor, int(opts.get("seed", 0)))

    def budget(self, space: int) -> int:
        """How many configurations of a space of ``space`` it predicts at most."""
        if self.strategy == "brute_force":
            return space
        if self.max_fevals is not None:
            return min(space, self.max_fevals)
        if self.fraction is not None:
            return min(space, max(1, math.ceil(self.fraction * space)))
        return min(space, DEFAULT_FEVALS)


def search(plan: Search, configs: Sequence[dict[str, Any]],
           tune_params: Mapping[str, Sequence[Any]],
           evaluate: Evaluate) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(configuration, row) for every configuration ``plan`` predicts, in the order it
    predicted them; ``configs`` is the space (the restrictions applied)."""
    budget = plan.budget(len(configs))
    if plan.strategy == "brute_force":
        chosen = list(configs)
        return list(zip(chosen, evaluate(chosen)))
    rng = np.random.default_rng(plan.seed)
    if plan.strategy == "random_sample":
        chosen = [configs[i] for i in sorted(rng.choice(len(configs), budget, replace=False))]
        return list(zip(chosen, evaluate(chosen)))
    return _greedy_ils(plan, configs, tune_params, evaluate, budget, rng)


def _greedy_ils(plan: Search, configs: Sequence[dict[str, Any]],
                tune_params: Mapping[str, Sequence[Any]], evaluate: Evaluate, budget: int,
                rng: np.random.Generator) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    space = {config_key(c): c for c in configs}
    done: dict[str, dict[str, Any]] = {}
    order: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def run(batch: list[dict[str, Any]]) -> None:
        for config, row in zip(batch, evaluate(batch)):
            done[config_key(config)] = row
            order.append((config, row))

    while len(done) < budget:
        left = [k for k in space if k not in done]
        if not left:
            break
        current = space[left[int(rng.integers(len(left)))]]
        run([current])
        while len(done) < budget:
            near = [n for n in _neighbours(current, tune_params, plan.neighbor)
                    if config_key(n) in space and config_key(n) not in done]
            if not near:
                break
            batch = near[:budget - len(done)]
            run(batch)
            best = min(batch, key=lambda n: _seconds(done.get(config_key(n))))
            if _seconds(done.get(config_key(best))) >= _seconds(done[config_key(current)]):
                break
            current = best
    return order


def _seconds(row: Mapping[str, Any] | None) -> float:
    return math.inf if row is None else float(row.get("seconds", math.inf))


def _neighbours(config: Mapping[str, Any], tune_params: Mapping[str, Sequence[Any]],
                kind: str) -> Iterator[dict[str, Any]]:
    for name, values in tune_params.items():
        values = list(values)
        if config.get(name) not in values:
            continue
        at = values.index(config[name])
        steps = [at - 1, at + 1] if kind == "adjacent" else range(len(values))
        for i in steps:
            if 0 <= i < len(values) and i != at:
                yield {**config, name: values[i]}
