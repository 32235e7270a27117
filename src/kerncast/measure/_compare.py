"""Output checks on the device: the same verdicts as the host check, without copying
gigabytes of outputs back and comparing them in NumPy.

An output is wrong if an element was never written (it still holds the poison: NaN
for floats, the 0xA5/-0x2A2A2A2A pattern for integers, where the reference differs)
or differs from the reference beyond the spec's tolerance (floats compared in float64
with ``|a - e| <= atol + rtol * |e|``, NaN never equal; integers exactly). Large
outputs are checked in chunks so the temporaries stay small.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kerncast.corpus import CorpusKernel
from kerncast.corpus import poison

__all__ = ["device_output_problems"]

CHUNK = 1 << 26


def _host(array) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _first(cp, mask_fn, n: int) -> tuple[int, int]:
    """(count of True, first True index) of a chunked elementwise mask."""
    count, first = 0, -1
    for start in range(0, n, CHUNK):
        mask = mask_fn(slice(start, min(start + CHUNK, n)))
        hits = int(cp.count_nonzero(mask))
        if hits and first < 0:
            first = start + int(cp.argmax(mask))
        count += hits
    return count, first


def _unwritten(cp, name: str, actual, expected) -> str | None:
    marker = poison(np.dtype(actual.dtype), 1)[0]
    if actual.dtype.kind == "f":
        def mask(s):
            return cp.isnan(actual[s]) & ~cp.isnan(expected[s].astype(cp.float64))
    else:
        def mask(s):
            return (actual[s] == marker) & (expected[s] != marker)
    count, first = _first(cp, mask, actual.size)
    if not count:
        return None
    return (f"{name}: {count} of {actual.size} elements never written (still poisoned), "
            f"first at [{first}]")


def _mismatch(cp, name: str, actual, expected, rtol: float, atol: float) -> str | None:
    if actual.dtype.kind == "f" or expected.dtype.kind == "f":
        def mask(s):
            a = actual[s].astype(cp.float64)
            e = expected[s].astype(cp.float64)
            return ~(cp.abs(a - e) <= atol + rtol * cp.abs(e))
    else:
        def mask(s):
            return actual[s] != expected[s]
    count, first = _first(cp, mask, actual.size)
    if not count:
        return None
    got = _host(actual[first:first + 1])[0]
    want = _host(expected[first:first + 1])[0]
    return (f"{name}: {count} of {actual.size} elements differ, first at [{first}]: got "
            f"{got!r}, expected {want!r}")


def device_output_problems(cp, kernel: CorpusKernel, dev_args: dict[str, Any],
                           expected: dict[str, Any]) -> list[str]:
    """Unwritten outputs first, then values outside the tolerance (as the host check)."""
    intents = {a.name: a.intent for a in kernel.spec.args}
    rtol, atol = kernel.spec.check.rtol, kernel.spec.check.atol
    unwritten, wrong = [], []
    for name, want in expected.items():
        actual = dev_args[name].reshape(-1)
        want = want.reshape(-1)
        if actual.size != want.size:
            wrong.append(f"{name}: {actual.size} elements, expected {want.size}")
            continue
        if intents.get(name) == "out":
            found = _unwritten(cp, name, actual, want)
            if found:
                unwritten.append(found)
        found = _mismatch(cp, name, actual, want, rtol, atol)
        if found:
            wrong.append(found)
    return unwritten + wrong
