"""Kernel Tuner's cache files: kerncast's predictions in, Kernel Tuner's measurements out.

Kernel Tuner (the Python auto-tuner) stores benchmark results in a JSON cache file
(``tune_kernel(..., cache=FILE)``). This package

* writes kerncast's predicted times as such a file (:func:`write_cache`), so that Kernel
  Tuner's simulation mode and its search strategies run on predictions instead of a GPU:
  ``tune_kernel(name, source, size, args, tune_params, simulation_mode=True,
  cache=FILE)``;
* reads the files Kernel Tuner wrote, closed or left open by a stopped run
  (:func:`read_cache`), into a :class:`KTCache` with one row per configuration;
* scores predictions against measured times (:func:`score`, :func:`compare`): MAPE,
  Spearman rank correlation and top-1/5/10 regret.

>>> from kerncast.tuner import compare, read_cache, write_cache
>>> measured = read_cache("vector_add_A100.json")                     # doctest: +SKIP
>>> write_cache("pred.json", kernel_name="vector_add",
...             device_name=measured.device_name,
...             problem_size=measured.problem_size,
...             tune_params=measured.tune_params, rows=rows)          # doctest: +SKIP
>>> compare(read_cache("pred.json"), measured)["regret_top1_pct"]     # doctest: +SKIP

File format: :mod:`kerncast.tuner._cache`. Metric definitions: :mod:`kerncast.tuner._score`.
"""

from kerncast.tuner._cache import FAILURES, KTCache, cache_key, read_cache, write_cache
from kerncast.tuner._score import TOP_K, compare, score

__all__ = [
    "FAILURES",
    "TOP_K",
    "KTCache",
    "cache_key",
    "compare",
    "read_cache",
    "score",
    "write_cache",
]
