"""The strategies that choose which configurations a sweep predicts."""

from __future__ import annotations

import itertools
import math

import pytest

from kerncast import InputError
from kerncast.models import Search
from kerncast.models._search import config_key, search

TUNE = {"x": [1, 2, 3, 4, 5, 6, 7, 8], "y": [1, 2, 3, 4, 5, 6, 7, 8]}
SPACE = [dict(zip(TUNE, values)) for values in itertools.product(*TUNE.values())]


def _bowl(config):  # one minimum, at x=6, y=3
    return (config["x"] - 6) ** 2 + (config["y"] - 3) ** 2 + 1.0


class Counted:
    """An evaluation that records every configuration it was asked for."""

    def __init__(self, cost=_bowl):
        self.cost, self.asked = cost, []

    def __call__(self, batch):
        self.asked.extend(config_key(c) for c in batch)
        return [{"seconds": self.cost(c)} for c in batch]


@pytest.mark.parametrize("strategy, options, message", [
    ("annealing", {}, "unknown strategy 'annealing'"),
    ("random_sample", {}, "random_sample needs max_fevals"),
    ("greedy_ils", {"max_fevals": 0}, "max_fevals=0"),
    ("random_sample", {"fraction": 1.5}, "fraction=1.5"),
    ("greedy_ils", {"neighbor": "diagonal"}, "neighbor='diagonal'"),
    ("greedy_ils", {"max_evals": 3}, "strategy option(s) max_evals not known"),
])
def test_a_bad_strategy_or_option_is_named(strategy, options, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Search.of(strategy, options)


def test_brute_force_predicts_every_configuration_in_order():
    evaluate = Counted()
    pairs = search(Search.of(), SPACE, TUNE, evaluate)
    assert [c for c, _ in pairs] == SPACE and len(evaluate.asked) == 64


def test_random_sample_draws_distinct_configurations_from_its_seed():
    plan = Search.of("random_sample", {"max_fevals": 10, "seed": 3})
    first = [config_key(c) for c, _ in search(plan, SPACE, TUNE, Counted())]
    again = [config_key(c) for c, _ in search(plan, SPACE, TUNE, Counted())]
    other = [config_key(c) for c, _ in search(Search.of("random_sample", {"max_fevals": 10}),
                                              SPACE, TUNE, Counted())]
    assert first == again and first != other
    assert len(set(first)) == 10 and set(first) <= {config_key(c) for c in SPACE}
    assert len(search(Search.of("random_sample", {"fraction": 0.25}), SPACE, TUNE,
                      Counted())) == 16


@pytest.mark.parametrize("neighbor", ["Hamming", "adjacent"])
def test_greedy_ils_finds_the_minimum_within_its_budget_and_asks_nothing_twice(neighbor):
    evaluate = Counted()
    plan = Search.of("greedy_ils", {"max_fevals": 40, "neighbor": neighbor, "seed": 1})
    pairs = search(plan, SPACE, TUNE, evaluate)
    assert len(pairs) == len(evaluate.asked) <= 40
    assert len(set(evaluate.asked)) == len(evaluate.asked)
    assert min(row["seconds"] for _, row in pairs) == 1.0  # the bowl's bottom


def test_greedy_ils_stays_inside_the_space_and_goes_past_failures():
    inside = [c for c in SPACE if c["x"] + c["y"] <= 10]  # a restriction
    failing = {config_key(c) for c in inside if c["x"] == 5}

    def cost(config):
        return math.inf if config_key(config) in failing else _bowl(config)

    evaluate = Counted(cost)
    pairs = search(Search.of("greedy_ils", {"max_fevals": 30}), inside, TUNE, evaluate)
    assert set(evaluate.asked) <= {config_key(c) for c in inside}
    assert len(pairs) == 30
    assert min(row["seconds"] for _, row in pairs) == 1.0


def test_greedy_ils_stops_when_the_space_is_spent():
    small = SPACE[:5]
    pairs = search(Search.of("greedy_ils", {"max_fevals": 50}), small, TUNE, Counted())
    assert sorted(config_key(c) for c, _ in pairs) == sorted(config_key(c) for c in small)
