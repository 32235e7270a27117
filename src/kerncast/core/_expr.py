"""Safe evaluation of the small arithmetic expressions of specs, launch files and restrictions.

Spec files describe shapes, grids and restrictions as expressions over problem-size
parameters and tunables (``"ceil(n / bx)"``, ``"bx * by <= 1024"``). They are parsed
with :mod:`ast` and evaluated over a whitelist of operators and functions: no
attribute access, no subscripts, no names other than the given variables.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from kerncast._errors import InputError

__all__ = ["evaluate", "names_in"]

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
}


def _ceil(x: float) -> int:
    return int(math.ceil(x))


def _ilog2(x: int) -> int:
    return int(x).bit_length() - 1


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "ceil": _ceil, "floor": lambda x: int(math.floor(x)), "min": min, "max": max,
    "abs": abs, "int": int, "float": float, "sqrt": math.sqrt, "log2": _ilog2,
    "round_up": lambda x, m: -(-int(x) // int(m)) * int(m),
}


@lru_cache(maxsize=4096)
def _parse(text: str) -> ast.Expression:
    try:
        return ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise InputError(f"expression {text!r} is not valid: {exc.msg}") from None


def _eval(node: ast.AST, env: Mapping[str, float]) -> float | int | bool:
    if isinstance(node, ast.Expression):
        return _eval(node.body, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            known = ", ".join(sorted(env)) or "none"
            raise InputError(f"unknown name {node.id!r} (known: {known})")
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, env))
    if isinstance(node, ast.BoolOp):
        values = (_eval(v, env) for v in node.values)
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators):
            right = _eval(comp, env)
            if not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        return _eval(node.body if _eval(node.test, env) else node.orelse, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        func = FUNCTIONS.get(node.func.id)
        if func is not None:
            return func(*(_eval(a, env) for a in node.args))
    raise InputError(f"unsupported construct {ast.dump(node)[:60]}")


def evaluate(text: str | int | float, env: Mapping[str, float]) -> float | int | bool:
    """Evaluate a spec expression over the variables in ``env``.

    Numbers are returned as they are; integral floats become ints, so that shapes
    and grids come out as Python integers.

    Raises
    ------
    InputError
        For a syntax error, an unknown name or a construct outside the whitelist.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return text
    try:
        value = _eval(_parse(str(text)), env)
    except ZeroDivisionError:
        raise InputError(f"expression {text!r} divides by zero") from None
    except InputError as exc:
        raise InputError(f"in expression {text!r}: {exc}") from None
    if isinstance(value, float) and value.is_integer() and not isinstance(value, bool):
        return int(value)
    return value


def names_in(text: str | int | float) -> set[str]:
    """The variable names an expression refers to."""
    if isinstance(text, (int, float)):
        return set()
    tree = _parse(str(text))
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - calls
