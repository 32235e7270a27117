"""kerncast.execute: the work that fans out (sweeps, evaluations) run serially, on a local
process pool, or on a Ray cluster, chosen by name from one registry.

>>> from kerncast.execute import get_executor
>>> from operator import mul
>>> sorted(r for _, r in get_executor("serial").map(mul, [-2, 1], shared=3))
[-6, 3]
"""

from kerncast.execute._executors import (
    CORES_VARIABLE, EXECUTORS, Executor, Failed, PoolExecutor, RayExecutor, SerialExecutor,
    get_executor, pin_cores, pin_gpu, register_executor, slice_cores,
)

__all__ = ["CORES_VARIABLE", "EXECUTORS", "Executor", "Failed", "PoolExecutor", "RayExecutor",
           "SerialExecutor", "get_executor", "pin_cores", "pin_gpu", "register_executor",
           "slice_cores"]
