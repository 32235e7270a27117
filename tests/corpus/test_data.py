"""Inputs, poisoned outputs and reference checks."""

import numpy as np
import pytest

from kerncast import InputError
from kerncast.corpus import compare_outputs, expected_outputs, get_kernel, make_args


def test_args_follow_the_spec():
    kernel = get_kernel("matmul_naive")
    cfg = kernel.launch("small")
    args = make_args(kernel, cfg, seed=1)
    assert args["a"].dtype == np.float32 and args["a"].size == 48 * 48
    assert np.isnan(args["c"]).all()  # outputs start poisoned
    assert args["n"] == 48 and isinstance(args["n"], np.int32)
    again = make_args(kernel, cfg, seed=1)
    assert np.array_equal(args["a"], again["a"])  # seeded


def test_compare_reports_first_difference():
    kernel = get_kernel("matmul_naive")
    cfg = kernel.launch("small")
    args = make_args(kernel, cfg)
    want = expected_outputs(kernel, args, cfg)
    got = {"c": want["c"].copy()}
    assert compare_outputs(kernel, got, want) == []
    got["c"][5] += 1.0
    (problem,) = compare_outputs(kernel, got, want)
    assert problem.startswith("c: 1 of 2304 elements differ, first at [5]")
    assert compare_outputs(kernel, {"c": args["c"]}, want)  # poisoned output never passes


def test_generator_of_wrong_size_is_named(monkeypatch):
    kernel = get_kernel("matmul_naive")
    from kerncast.corpus import module_of

    mod = module_of(kernel)
    monkeypatch.setattr(mod, "inputs", lambda k, p, r: {"a": np.zeros(3, np.float32),
                                                         "b": np.zeros(3, np.float32)})
    with pytest.raises(InputError, match=r"returned 3 elements for 'a', but the spec's shape gives 2304"):
        make_args(kernel, kernel.launch("small"))
