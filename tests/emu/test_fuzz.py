"""Mutation fuzzing of the emulator: a mutated kernel that parses either runs or raises
kerncast's own errors, never a foreign exception (a NumPy ``MemoryError``, an
``IndexError``, a ``KeyError``...).

2,000 mutants in all (two tests of 1,000, so that ``pytest -n 2`` spreads them), from the
parser fuzz's seeds, with its line and token mutations (duplicated, swapped or deleted
lines and tokens: most mutants still parse); each parsed kernel runs one or two blocks of 32 threads
with a 4 KiB buffer for every pointer-sized parameter and small numbers for the others,
within a step budget.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kerncast._errors import KerncastError
from kerncast.emu import emulate
from kerncast.ptx import PTXSyntaxError, parse
from tests.ptx.test_fuzz import PIECES, SEEDS, _mutate

# mutations of whole lines and tokens (duplicate, swap, delete) mostly keep the syntax,
# so that most mutants reach the emulator
_mutation = st.tuples(st.sampled_from([4, 5, 6]), st.floats(0, 1), st.floats(0, 1),
                      st.sampled_from(PIECES), st.integers(1, 40))

_SETTINGS = settings(max_examples=1_000, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _arguments(kernel) -> list:
    args: list = []
    for param in kernel.params:
        if param.type in ("u64", "b64", "s64") and not param.dims:
            args.append(np.zeros(1024, np.float32))
        elif param.dims or param.type in ("f64",):
            args.append(0.5)
        else:
            args.append(3)
    return args


def _run(text: str, grid: int) -> None:
    try:
        module = parse(text)
    except PTXSyntaxError:
        return
    for kernel in module.entries:
        try:
            emulate(module, ((grid, 1, 1), (32, 1, 1)), _arguments(kernel), entry=kernel.name,
                    trace=False, step_budget=20_000)
        except KerncastError:
            pass  # kerncast's own: a fault, a missing instruction, the budget


@pytest.mark.parametrize("part", range(2))
def test_mutated_kernels_raise_only_kerncasts_errors(part):
    @_SETTINGS
    @given(st.integers(0, 10_000), st.lists(_mutation, min_size=1, max_size=3),
           st.integers(1, 2))
    def run(seed, mutations, grid):
        text = SEEDS[(seed + part * 7919) % len(SEEDS)]
        for mutation in mutations:
            text = _mutate(text, *mutation)
        _run(text, grid)

    run()


def test_cp_async_wait_group_with_its_count_is_a_no_op():
    # found by the fuzz: ``cp.async.wait_group 0;`` took its count for a copy's operands
    from tests.ptx._util import kernel

    text = kernel("\tcp.async.commit_group;\n\tcp.async.wait_group 0;\n\tret;")
    result = emulate(text, ((1, 1, 1), (32, 1, 1)), [3], trace=False)
    assert result.ok
