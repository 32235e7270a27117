"""Inputs, references and output checks of corpus kernels.

Every application directory holds a Python module ``<app>.py`` with two functions::

    def inputs(kernel: str, params: dict, rng: numpy.random.Generator) -> dict[str, ndarray]
        # every "in" and "inout" buffer of the kernel, at exactly its spec shape
    def reference(kernel: str, args: dict, params: dict) -> dict[str, ndarray]
        # the expected contents of the kernel's checked outputs, computed with NumPy

``params`` holds the size parameters, the tunables and ``grid_x``/``block_x``... of the
launch, so that layouts that depend on the launch (partial sums per block) can be
generated and checked. ``inputs()`` may give a buffer as a
:class:`~kerncast.core.Chunked` array, made a piece at a time with the values a whole
draw would have (:func:`~kerncast.core.advanced`): an emulation of a few blocks then
makes only the pieces they read, and anything else the whole buffer. A module whose
inputs for a launch reuse arrays it made for another launch of the same problem
(``KEEPS_PROBLEM = True``; the radix-sort pass's keys, whose offsets follow the tile)
has the last launch's inputs kept while it makes the next; other inputs go first.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.core import CHUNKED_BYTES, Array, Chunked, Kernel, Launch, Scalar
from kerncast.corpus._spec import CorpusKernel, LaunchConfig

__all__ = ["POISON", "CorpusInputs", "compare_outputs", "corpus_instance", "expected_outputs",
           "make_args", "module_of"]

POISON = {"f": np.nan, "i": -0x2A2A2A2A, "u": 0xA5A5A5A5}


@lru_cache(maxsize=None)
def _load_module(path: Path) -> ModuleType:
    name = f"kerncast_corpus_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import the corpus module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    for func in ("inputs", "reference"):
        if not callable(getattr(module, func, None)):
            raise InputError(f"corpus module {path} lacks the function {func}()")
    return module


def module_of(kernel: CorpusKernel) -> ModuleType:
    """The application's generator and reference module."""
    return _load_module(kernel.app.directory / f"{kernel.app.name}.py")


def poison(dtype: np.dtype, count: int) -> np.ndarray:
    """An output buffer filled with a value no correct kernel writes by accident."""
    dtype = np.dtype(dtype)
    fill = POISON[dtype.kind]
    if dtype.kind == "u":
        fill = fill & ((1 << (8 * dtype.itemsize)) - 1)
    elif dtype.kind == "i":
        fill = max(fill, -(1 << (8 * dtype.itemsize - 1)))
    return np.full(count, fill, dtype=dtype)


def params_of(kernel: CorpusKernel, config: LaunchConfig) -> dict:
    return kernel.arg_env(config)


def make_args(kernel: CorpusKernel, config: LaunchConfig, seed: int = 0,
              poison_outputs: bool = True, params: dict | None = None,
              chunked: bool = False) -> dict[str, object]:
    """All arguments of one launch: generated inputs, poisoned outputs, scalars.

    Without ``poison_outputs`` the outputs are zeros, which the operating system
    materialises only where they are touched (what an emulation of a few blocks wants).
    ``params`` is what the generator is given (default :func:`params_of` the launch).
    A generator may return a buffer as a :class:`~kerncast.core.Chunked` array (made a
    piece at a time); with ``chunked`` such a buffer of at least
    :data:`~kerncast.core.CHUNKED_BYTES` is kept so, else it is made whole.

    Raises
    ------
    InputError
        If the generator misses a buffer or returns one of the wrong size or dtype.
    """
    rng = np.random.default_rng(seed)
    params = params_of(kernel, config) if params is None else params
    generated = module_of(kernel).inputs(kernel.name, params, rng)
    args: dict[str, object] = {}
    for arg in kernel.spec.args:
        if arg.kind == "scalar":
            args[arg.name] = np.dtype(arg.dtype).type(kernel.scalar_value(arg, config))
            continue
        count = kernel.buffer_elements(arg, config)
        if arg.intent == "out":
            args[arg.name] = (poison(np.dtype(arg.dtype), count) if poison_outputs
                              else np.zeros(count, dtype=arg.dtype))
            continue
        if arg.name not in generated:
            raise InputError(f"the generator of {kernel.name} returned no buffer {arg.name!r}; "
                             f"inputs() must return every 'in' and 'inout' buffer")
        value = generated[arg.name]
        if isinstance(value, Chunked) and not (chunked and value.nbytes >= CHUNKED_BYTES):
            value = value.materialise()
        args[arg.name] = _conform(kernel, arg.name, value, arg.dtype, count)
    return args


def _conform(kernel: CorpusKernel, name: str, value, dtype: str,
             count: int) -> np.ndarray | Chunked:
    array = value if isinstance(value, Chunked) else \
        np.ascontiguousarray(np.asarray(value)).reshape(-1)
    if array.dtype != np.dtype(dtype):
        raise InputError(f"the generator of {kernel.name} returned {name!r} as {array.dtype}, "
                         f"but the spec says {dtype}")
    if array.size != count:
        raise InputError(f"the generator of {kernel.name} returned {array.size} elements for "
                         f"{name!r}, but the spec's shape gives {count}")
    return array


def expected_outputs(kernel: CorpusKernel, args: dict, config: LaunchConfig) -> dict[str, np.ndarray]:
    """The NumPy reference's outputs for ``args``, which it sees as read-only views."""
    frozen = {k: (_read_only(v) if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    result = module_of(kernel).reference(kernel.name, frozen, params_of(kernel, config))
    missing = [o for o in kernel.spec.check.outputs if o not in result]
    if missing:
        raise InputError(f"the reference of {kernel.name} returned no {', '.join(missing)}")
    return {o: np.asarray(result[o]).reshape(-1) for o in kernel.spec.check.outputs}


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


#: Elements compared at once: float64 copies of this many stay in a core's cache, where
#: whole arrays of a large launch (1 GB and more) took seconds to convert and compare.
_CHUNK = 1 << 18


def _not_close(actual: np.ndarray, expected: np.ndarray, rtol: float,
               atol: float) -> np.ndarray:
    """``~np.isclose(actual, expected, rtol, atol)`` in float64 (NaN never close, equal
    infinities close), a chunk at a time."""
    bad = np.empty(actual.size, dtype=bool)
    for start in range(0, actual.size, _CHUNK):
        a = actual[start:start + _CHUNK].astype(np.float64)
        e = expected[start:start + _CHUNK].astype(np.float64)
        with np.errstate(invalid="ignore"):
            close = np.abs(a - e) <= atol + rtol * np.abs(e)
        close &= np.isfinite(a) & np.isfinite(e)
        close |= a == e
        np.logical_not(close, out=bad[start:start + _CHUNK])
    return bad


def compare_outputs(kernel: CorpusKernel, got: dict, want: dict) -> list[str]:
    """Describe every checked output that differs from the reference (empty if all match)."""
    problems = []
    rtol, atol = kernel.spec.check.rtol, kernel.spec.check.atol
    for name, expected in want.items():
        actual = np.asarray(got[name]).reshape(-1)
        if actual.shape != expected.shape:
            problems.append(f"{name}: {actual.size} elements, expected {expected.size}")
            continue
        if expected.dtype.kind == "f" or actual.dtype.kind == "f":
            bad = _not_close(actual, expected, rtol, atol)
        else:
            bad = actual != expected
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            problems.append(f"{name}: {int(bad.sum())} of {bad.size} elements differ, first at "
                            f"[{first}]: got {actual[first]!r}, expected {expected[first]!r}")
    return problems


class _Reads(dict):
    """A launch's params that record which of them a generator reads (``read``; None
    once it has looked at all of them, by iterating or copying)."""

    def __init__(self, params: dict) -> None:
        super().__init__(params)
        self.read: set | None = set()

    def _saw(self, key: Any) -> None:
        if self.read is not None:
            self.read.add(key)

    def __getitem__(self, key: Any) -> Any:
        self._saw(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._saw(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self._saw(key)
        return super().__contains__(key)

    def _everything(self) -> None:
        self.read = None

    def __iter__(self):
        self._everything()
        return super().__iter__()

    def keys(self):  # type: ignore[override]
        self._everything()
        return super().keys()

    def values(self):  # type: ignore[override]
        self._everything()
        return super().values()

    def items(self):  # type: ignore[override]
        self._everything()
        return super().items()

    def copy(self) -> dict:
        self._everything()
        return dict(super().items())


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@dataclass
class _Kept:
    """Inputs generated for one launch, and what they rest on: the kernel and seed, the
    input buffers' sizes, the launch's params and the names the generator read (None:
    all), and the problem size's params."""

    kernel: tuple
    sizes: dict[str, int]
    read: set | None
    params: dict
    args: dict
    problem: dict

    def serves(self, kernel: tuple, sizes: dict[str, int], params: dict) -> bool:
        if kernel != self.kernel or sizes != self.sizes:
            return False
        keys = self.read if self.read is not None else set(params) | set(self.params)
        return _same({k: params[k] for k in keys if k in params},
                     {k: self.params[k] for k in keys if k in self.params})


class CorpusInputs:
    """The generated inputs of one corpus launch as an array generator (see
    :class:`kerncast.core.Array`): the application's ``inputs()`` runs once per launch
    and each array argument takes its buffer, read-only. The last inputs generated are
    kept, with the params the generator read to make them, and serve every later launch
    of the same kernel, seed and input buffer sizes whose params agree on those: a sweep over
    launch configurations generates a problem's inputs once, unless its generator reads
    a tunable that changes (the outputs' sizes may change: they are not generated)."""

    _kept: list[_Kept] = []

    def __init__(self, kernel: CorpusKernel, config: LaunchConfig, name: str, seed: int) -> None:
        self.kernel, self.config, self.name, self.seed = kernel, config, name, seed

    def _inputs(self) -> dict:
        kernel = (str(self.kernel.app.directory), self.kernel.name, self.seed)
        # the input buffers' sizes: outputs are never generated, and their sizes often
        # follow the launch (partial results per block)
        sizes = {a.name: self.kernel.buffer_elements(a, self.config)
                 for a in self.kernel.spec.args if a.kind != "scalar" and a.intent != "out"}
        params = params_of(self.kernel, self.config)
        for kept in self._kept:
            if kept.serves(kernel, sizes, params):
                return kept.args
        problem = dict(self.config.params)  # the problem size's, not the launch's
        reuses = getattr(module_of(self.kernel), "KEEPS_PROBLEM", False)
        if not (reuses and any(kept.kernel == kernel and _same(kept.problem, problem)
                               for kept in self._kept)):
            self._kept.clear()  # the last problem's inputs go before the next are made
        reads = _Reads(params)
        args = make_args(self.kernel, self.config, seed=self.seed, poison_outputs=False,
                         params=reads, chunked=True)
        self._kept[:] = [_Kept(kernel, sizes, reads.read, dict(params), args, problem)]
        return args

    def draw(self, rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        args = self._inputs()
        value = args[self.name]
        if isinstance(value, Chunked):  # made whole once, and kept so
            value = args[self.name] = value.materialise()
        return _read_only(value)

    def draw_chunked(self, rng: np.random.Generator, dtype: np.dtype,
                     shape: tuple[int, ...]) -> np.ndarray | Chunked:
        """The buffer as :meth:`draw` gives it, or as a :class:`~kerncast.core.Chunked`
        array where the application's generator makes it a piece at a time."""
        value = self._inputs()[self.name]
        return value if isinstance(value, Chunked) else _read_only(value)

    def __str__(self) -> str:
        return f"corpus inputs of {self.kernel.name}"


def corpus_instance(kernel: CorpusKernel, config: LaunchConfig, language: str = "cuda",
                    seed: int = 0) -> tuple[Kernel, Launch]:
    """The :class:`~kerncast.core.Kernel` and :class:`~kerncast.core.Launch` of one corpus
    launch: the source in ``language`` with the launch's defines, and its arguments
    (arrays drawn from the application's generator, outputs zeros, scalars typed)."""
    source = Kernel(kernel.entry, path=kernel.source_path(language), language=language,
                    defines=dict(config.defines))
    args: list = []
    for arg in kernel.spec.args:
        if arg.kind == "scalar":
            args.append(Scalar(kernel.scalar_value(arg, config), np.dtype(arg.dtype)))
        else:
            gen = None if arg.intent == "out" else CorpusInputs(kernel, config, arg.name, seed)
            args.append(Array(np.dtype(arg.dtype), (kernel.buffer_elements(arg, config),),
                              generator=gen, intent=arg.intent))
    launch = Launch(config.grid, config.block, config.dynamic_shared, args=tuple(args),
                    names=tuple(a.name for a in kernel.spec.args), params=config.tunables,
                    size=config.size, seed=seed)
    return source, launch
