"""kerncast.core._jit: functions compiled on use, or None where Numba's JIT is off."""

import numpy as np

from kerncast.core import _jit, jitted


def _total(values):
    out = 0
    for v in values:
        out += v
    return out


def test_compiled_once_and_gives_the_same_result(monkeypatch):
    monkeypatch.setattr(_jit, "_MADE", {})
    compiled = jitted(_total)
    assert compiled is not None and compiled is not _total
    assert jitted(_total) is compiled  # kept
    values = np.arange(1000, dtype=np.int64)
    assert compiled(values) == _total(values) == values.sum()


def test_none_where_the_jit_is_off(monkeypatch):
    import numba

    monkeypatch.setattr(_jit, "_MADE", {})
    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    assert jitted(_total) is None
