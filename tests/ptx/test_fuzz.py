"""Mutation fuzzing of real PTX: parse succeeds or raises PTXSyntaxError, nothing else.

10,000 mutated inputs in all (four tests of 2,500, so that ``pytest -n 2`` spreads
them): character insertions, deletions and replacements, token swaps, truncation,
line duplication and deletion, applied to kernels from the committed compiler
output. A module that parses must also survive the analyses and print back to the
same instructions.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kerncast.ptx import (
    Address, Function, ParamList, PTXSyntaxError, Symbol, SymbolRef, Variable, parse, summarize,
    to_ptx,
)
from tests.ptx._util import DATA


def _raw_function(lines: list[str], start: int) -> str:
    """The text of a function definition from its first line to its closing brace."""
    depth, opened = 0, False
    for end in range(start - 1, len(lines)):
        code = lines[end].split("//")[0]
        depth += code.count("{") - code.count("}")
        opened |= "{" in code
        if opened and depth == 0:
            return "".join(lines[start - 1:end + 1])
    raise AssertionError("unbalanced function text")


def _symbols(func: Function) -> set[str]:
    names = set()
    for instr in func.instructions:
        for op in instr.operands:
            items = op.items if isinstance(op, ParamList) else (op,)
            for item in items:
                base = item.base if isinstance(item, Address) else item
                if isinstance(base, Symbol):
                    names.add(base.name)
    return names


def _seeds() -> list[str]:
    """Small modules: one function each as the compiler wrote it, after the module
    variables and function declarations it refers to (so that its names resolve)."""
    seeds = []
    for name in ("stress_sm90.ptx", "stress_cl_sm80.ptx", "halfs_sm80.ptx",
                 "handwritten_sm90.ptx", "stress_lineinfo_sm90.ptx", "advanced_sm90.ptx"):
        text = (DATA / name).read_text()
        module = parse(text)
        lines = text.splitlines(keepends=True)
        for func in module.functions:
            if func.is_declaration or len(func.instructions) >= 120:
                continue
            used = _symbols(func)
            for var in module.variables:
                if var.name in used:
                    used.update(r.name for r in var.flat_init if isinstance(r, SymbolRef))
            items = tuple(replace(item, body=None) if isinstance(item, Function) else item
                          for item in module.items
                          if isinstance(item, (Function, Variable)) and item.name in used
                          and item.name != func.name)
            prefix = to_ptx(replace(module, items=items, files={}))
            seeds.append(prefix + _raw_function(lines, func.line))
    return seeds


SEEDS = _seeds()
PIECES = list("abxyz0189%$._@!{}[]()<>,;:+-*/|&^~ \n\t\"#=") + [
    ".reg", ".b32", "%r1", "%p1", "bra", "ret;", "//", "/*", "0f3F800000", "0x", "%tid.x", "_",
    ".param", "@%p1", "[%rd1+4]", "{%f1, %f2}", "$L__BB0_1", ".shared", "0d"]

_mutation = st.tuples(st.integers(0, 6), st.floats(0, 1), st.floats(0, 1),
                      st.sampled_from(PIECES), st.integers(1, 40))


def _mutate(text: str, op: int, a: float, b: float, piece: str, length: int) -> str:
    pos = int(a * len(text))
    if op == 0:
        return text[:pos] + piece + text[pos:]
    if op == 1:
        return text[:pos] + text[pos + length:]
    if op == 2:
        return text[:pos] + piece + text[pos + 1:]
    if op == 3:
        return text[:pos]
    lines = text.splitlines(keepends=True)
    i, j = int(a * len(lines)), int(b * len(lines))
    if op == 4 and lines:
        lines.insert(i, lines[min(j, len(lines) - 1)])
        return "".join(lines)
    if op == 5:
        parts = re.split(r"(\s+|[,;\[\]{}])", text)
        i, j = int(a * len(parts)) % len(parts), int(b * len(parts)) % len(parts)
        parts[i], parts[j] = parts[j], parts[i]
        return "".join(parts)
    return "".join(lines[:i] + lines[i + 1:])


def _check(text: str) -> None:
    try:
        module = parse(text)
    except PTXSyntaxError as err:
        assert err.line >= 1 and err.column >= 1, err
        assert not err.reason.startswith("internal"), err
        return
    for func in module.functions:
        if not func.is_declaration:
            summarize(func)
    again = parse(to_ptx(module))
    assert [f.instructions for f in again.functions] == [f.instructions for f in module.functions]


def _fuzz(seed: int, mutations: list) -> None:
    text = SEEDS[seed % len(SEEDS)]
    for mutation in mutations:
        text = _mutate(text, *mutation)
    _check(text)


def test_seeds_parse_cleanly():
    assert len(SEEDS) >= 30
    for text in SEEDS:
        _check(text)
        parse(text)


_SETTINGS = settings(max_examples=2_500, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_INPUT = (st.integers(0, 10_000), st.lists(_mutation, min_size=1, max_size=4))


@pytest.mark.parametrize("part", range(4))
def test_mutated_ptx_raises_only_ptx_syntax_errors(part):
    @_SETTINGS
    @given(*_INPUT)
    def run(seed, mutations):
        _fuzz(seed + part * 7919, mutations)

    run()
