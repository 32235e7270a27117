"""XAPP's 39 microarchitecture-independent features (Table 1 of the seed), by name.

The names follow the seed: ``ilp32`` ... ``ilp16384`` are the instructions per cycle of
an idealised machine whose only limits are data dependences and a window of W
instructions; ``ilpRate`` is ``ilp16384 / ilp32``; the mix is the fraction of dynamic
operations of each class; ``locStride*`` and ``gStride*`` are the probabilities that
the address difference between consecutive instances of one static load/store (local)
or of any two consecutive loads/stores (global) is 0, 1-8, 9-128 or more bytes;
``memInt`` and ``pages`` are unique 64-byte blocks and 4 KiB pages per dynamic
operation; ``coldRef`` the fraction of references that touch a 64-byte block for the
first time; ``reuseDist4`` the fraction whose reuse distance (distinct blocks touched
since the last touch of the same block) is under 4; ``Lbdiv<W>`` / ``Gbdiv<W>`` the
fraction of groups of W consecutive outcomes of one branch (local) or of all branches
(global) that do not all go the same way.
"""

from __future__ import annotations

__all__ = ["BDIV_WINDOWS", "FEATURES", "ILP_WINDOWS"]

ILP_WINDOWS: tuple[int, ...] = (32, 256, 2048, 16384)
BDIV_WINDOWS: tuple[int, ...] = (16, 32, 64, 128, 256, 512, 1024)

FEATURES: tuple[str, ...] = (
    *(f"ilp{w}" for w in ILP_WINDOWS),
    "mem", "ctrl", "arith", "fp",
    "locStride0", "locStride8", "locStride128", "locStrideOther",
    "gStride0", "gStride8", "gStride128", "gStrideOther",
    "memInt", "pages", "coldRef", "reuseDist4", "ilpRate",
    "mul", "div", "rem", "spf",
    *(f"Lbdiv{w}" for w in BDIV_WINDOWS),
    *(f"Gbdiv{w}" for w in BDIV_WINDOWS),
)
assert len(FEATURES) == 39
