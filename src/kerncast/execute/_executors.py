"""Executors: map a function over items, results streaming back as they finish.

Every executor takes a module-level function (picklable), a list of items and an object
every item shares (sent to each worker once, not with every item), calls
``fn(shared, item)`` and yields ``(index, result)`` in the order the items finish; an item
whose function raised, or whose worker died twice, yields a :class:`Failed` naming the
error, so a caller records it as a row and nothing is lost.

=========  ===============================================================================
serial     in this process, one item after the other
pool       a local process pool (``workers``, default every core); processes are spawned,
           so a worker starts clean; a worker that dies breaks the pool: the unfinished
           items run again one at a time, so the one that kills its worker is known, and
           it is tried once more, then recorded as failed
ray        tasks on a Ray cluster (``address``, default a local one started on demand with
           ``workers`` CPUs); each task is retried once by Ray if its worker dies
=========  ===============================================================================

Given ``gpus`` (device indices or UUIDs), an executor runs one worker per GPU, each pinned
to its device: a pool worker takes one GPU as it starts (``CUDA_VISIBLE_DEVICES``, with
``CUDA_DEVICE_ORDER=PCI_BUS_ID`` so that an index means the same GPU to CUDA and to NVML),
and its own slice of the cores;
on Ray each GPU is a resource and each task asks for one, so Ray pins the worker.

Given ``slices`` instead (work measured on a CPU), each of ``workers`` workers measures on
its own equal slice of this machine's cores: a pool worker keeps only its slice (CPU
affinity); a Ray task asks for a slice's worth of CPUs. Either way the thread pools of
the worker's children (math libraries, PoCL's) are sized to the slice, and
:data:`CORES_VARIABLE` tells the measuring code how many cores its device has.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, Protocol

from kerncast._errors import InputError, ToolchainError

__all__ = ["CORES_VARIABLE", "EXECUTORS", "Executor", "Failed", "PoolExecutor", "RayExecutor",
           "SerialExecutor", "get_executor", "pin_cores", "pin_gpu", "register_executor",
           "slice_cores"]


@dataclass(frozen=True)
class Failed:
    """An item that did not produce a result: the error, as text."""

    error: str


class Executor(Protocol):
    """Runs ``fn`` over ``items``; see the module."""

    name: str
    workers: int
    gpus: tuple[str, ...]
    slices: bool

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any = None
            ) -> Iterator[tuple[int, Any]]: ...


def _error(exc: BaseException) -> Failed:
    return Failed(f"{type(exc).__name__}: {exc}")


class SerialExecutor:
    """Every item in this process, in order."""

    name = "serial"

    def __init__(self, workers: int | None = None, gpus: Sequence[str] | None = None,
                 slices: bool = False, **_: Any):
        self.workers = 1
        self.gpus = tuple(gpus or ())[:1]
        self.slices = slices  # one slice: the whole machine

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any = None
            ) -> Iterator[tuple[int, Any]]:
        if self.gpus:
            pin_gpu(self.gpus[0])
        yield from self._map(fn, items, shared)

    def _map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any
             ) -> Iterator[tuple[int, Any]]:
        for index, item in enumerate(items):
            try:
                yield index, fn(shared, item)
            except Exception as exc:  # noqa: BLE001 (an item's failure is a row)
                yield index, _error(exc)


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: The threads PoCL's CPU device runs a kernel on (its compute units).
POCL_THREADS = "POCL_MAX_PTHREAD_COUNT"
#: Set in a worker that measures on a slice of the cores: how many cores it has.
CORES_VARIABLE = "KERNCAST_CPU_CORES"


def pin_gpu(gpu: str, share: tuple[int, int] | None = None) -> None:
    """Make ``gpu`` (an index in PCI bus order, or a UUID) the only GPU this process and
    its children see; call it before anything starts CUDA. With ``share`` ``(i, n)``, the
    process also keeps only the i-th of n equal slices of this machine's cores, and the
    math libraries of its children a quarter of them each, so that the workers of several
    GPUs do not slow each other's timing loops down."""
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    if share is None or not hasattr(os, "sched_setaffinity"):
        return
    mine = _slice(*share)
    if mine:
        os.sched_setaffinity(0, mine)
        for name in THREAD_VARIABLES:
            os.environ[name] = str(max(1, len(mine) // 4))


def _slice(index: int, count: int) -> list[int]:
    """The i-th of ``count`` equal slices of the cores this process may use (empty where
    there are fewer cores than slices)."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        list(range(os.cpu_count() or 1))
    step = len(cores) // count
    return cores[index * step:(index + 1) * step]


def slice_cores(count: int) -> int:
    """The cores in each of ``count`` equal slices of this machine's; an input error
    where that leaves none."""
    cores = _cores() // max(1, count)
    if cores < 1:
        raise InputError(f"{count} slices of {_cores()} cores leave none to each; give at "
                         f"most {_cores()}")
    return cores


def pin_cores(index: int, count: int, *, affinity: bool = True) -> int:
    """Make this process (and its children) measure on the i-th of ``count`` equal slices
    of this machine's cores: the thread pools of math libraries and PoCL sized to it,
    :data:`CORES_VARIABLE` set to it and, with ``affinity``, the process kept on those
    cores. Returns the slice's cores."""
    slice_cores(count)
    mine = _slice(index, count)
    if affinity and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, mine)
    for name in (*THREAD_VARIABLES, POCL_THREADS, CORES_VARIABLE):
        os.environ[name] = str(len(mine))
    return len(mine)


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)


class PoolExecutor:
    """A local pool of spawned processes (see the module)."""

    name = "pool"

    def __init__(self, workers: int | None = None, gpus: Sequence[str] | None = None,
                 slices: bool = False, **_: Any):
        self.gpus = tuple(str(g) for g in gpus or ())
        self.slices = slices and not self.gpus
        self.workers = len(self.gpus) if self.gpus else max(1, int(workers or _cores()))

    def _pool(self, shared: Any, workers: int) -> ProcessPoolExecutor:
        context = get_context("spawn")
        free = context.Queue()
        places: Sequence[str | None] = self.gpus or [None] * self.workers
        for index, gpu in enumerate(places[:workers]):
            free.put((gpu, (index, workers if self.gpus else self.workers)))
        pinned = bool(self.gpus) or self.slices
        return ProcessPoolExecutor(workers, mp_context=context, initializer=_keep,
                                   initargs=(shared, free if pinned else None))

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any = None
            ) -> Iterator[tuple[int, Any]]:
        """After a worker dies, the items that had not finished run again in a pool of one
        worker, in order, so that the one that kills it is known: it is tried once more,
        then recorded as failed."""
        pending, workers = list(range(len(items))), self.workers
        deaths: dict[int, int] = {}
        while pending:
            pool = self._pool(shared, workers)
            futures = {pool.submit(_call, fn, items[i]): i for i in pending}
            broken: list[int] = []
            try:
                while futures:
                    done, _ = wait(futures, return_when=FIRST_COMPLETED)
                    for future in done:
                        index = futures.pop(future)
                        result = _outcome(future)
                        if isinstance(result, BrokenProcessPool):
                            broken.append(index)
                        else:
                            yield index, result
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            pending = sorted(broken)
            if pending and workers == 1:  # in order, alone: the first unfinished one died
                culprit = pending[0]
                deaths[culprit] = deaths.get(culprit, 0) + 1
                if deaths[culprit] > 1:
                    pending.pop(0)
                    yield culprit, Failed("its worker died twice running it")
            workers = 1


_SHARED: list[Any] = [None]  # what a pool worker's items share (set as it starts)


def _keep(shared: Any, free_places: Any = None) -> None:
    """A pool worker starts: keep what its items share and take a free GPU, or a free
    slice of the cores (``None`` for the GPU)."""
    _SHARED[0] = shared
    if free_places is not None:
        gpu, share = free_places.get(timeout=60)
        if gpu is None:
            pin_cores(*share)
        else:
            pin_gpu(gpu, share)


def _call(fn: Callable[[Any, Any], Any], item: Any) -> Any:
    return fn(_SHARED[0], item)


def _apply(fn: Callable[[Any, Any], Any], shared: Any, item: Any) -> Any:
    return fn(shared, item)


def _apply_pinned(fn: Callable[[Any, Any], Any], shared: Any, item: Any) -> Any:
    """On a Ray worker that Ray gave one GPU: keep the PCI bus order for the children."""
    os.environ["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    return fn(shared, item)


def _apply_sliced(fn: Callable[[Any, Any], Any], shared: Any, item: Any, slices: int) -> Any:
    """On a Ray worker that Ray gave a slice's worth of CPUs: size the thread pools to it
    (Ray counts the CPUs; it does not pin them)."""
    pin_cores(0, slices, affinity=False)
    return fn(shared, item)


def _outcome(future: Future) -> Any:
    try:
        return future.result()
    except BrokenProcessPool as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 (an item's failure is a row)
        return _error(exc)


class RayExecutor:
    """Tasks on a Ray cluster (see the module)."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None,
                 gpus: Sequence[str] | None = None, slices: bool = False, **_: Any):
        try:
            import ray  # noqa: PLC0415 (an optional dependency)
        except ImportError:
            raise ToolchainError("Ray is not installed: pip install 'kerncast[ray]' (or "
                                 "choose --executor pool)") from None
        self._ray = ray
        self.gpus = tuple(str(g) for g in gpus or ())
        if not ray.is_initialized():
            options: dict[str, Any] = {"address": address} if address else \
                {"num_cpus": max(int(workers or _cores()), len(self.gpus))}
            if self.gpus and not address:
                pin_gpu(",".join(self.gpus))  # the local cluster's GPUs are these
                options["num_gpus"] = len(self.gpus)
            ray.init(include_dashboard=False, log_to_driver=False,
                     ignore_reinit_error=True, **options)
        if self.gpus and ray.cluster_resources().get("GPU", 0) < 1:
            raise InputError("the Ray cluster has no GPU resources; start its nodes with "
                             "--num-gpus, or leave --gpus out")
        self.workers = len(self.gpus) if self.gpus else \
            int(workers or ray.cluster_resources().get("CPU", 1))
        self.slices = slices and not self.gpus

    def map(self, fn: Callable[[Any, Any], Any], items: Sequence[Any], shared: Any = None
            ) -> Iterator[tuple[int, Any]]:
        ray = self._ray
        common = ray.put(shared)  # stored once; each task reads it from the object store
        if self.slices:
            cpus = max(1, int(ray.cluster_resources().get("CPU", 1)) // self.workers)
            task = ray.remote(max_retries=1, num_cpus=cpus)(_apply_sliced)
            refs = {task.remote(fn, common, item, self.workers): index
                    for index, item in enumerate(items)}
        else:
            task = ray.remote(max_retries=1, num_cpus=1, num_gpus=1 if self.gpus else 0)(
                _apply_pinned if self.gpus else _apply)
            refs = {task.remote(fn, common, item): index for index, item in enumerate(items)}
        while refs:
            done, _ = ray.wait(list(refs), num_returns=1)
            for ref in done:
                index = refs.pop(ref)
                try:
                    yield index, ray.get(ref)
                except Exception as exc:  # noqa: BLE001 (a task's failure is a row)
                    cause = getattr(exc, "cause", None) or exc
                    yield index, _error(cause)


EXECUTORS: dict[str, Callable[..., Executor]] = {}


def register_executor(name: str, factory: Callable[..., Executor]) -> None:
    """Make ``factory(workers=, address=, gpus=, slices=)`` the executor called ``name``."""
    EXECUTORS[name] = factory


for _name, _factory in (("serial", SerialExecutor), ("pool", PoolExecutor),
                        ("ray", RayExecutor)):
    register_executor(_name, _factory)


def get_executor(name: str = "serial", *, workers: int | None = None,
                 address: str | None = None, gpus: Sequence[str] | None = None,
                 slices: bool = False) -> Executor:
    """The executor ``name`` with ``workers`` (and a Ray cluster's ``address``); with
    ``gpus``, one worker per GPU, pinned to it; with ``slices``, each worker on its own
    slice of the cores."""
    factory = EXECUTORS.get(name)
    if factory is None:
        raise InputError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")
    if workers is not None and int(workers) < 1:
        raise InputError(f"--workers {workers}: give 1 or more")
    if address is not None and name != "ray":
        raise InputError("--address names a Ray cluster; use it with --executor ray")
    if gpus is not None and name == "serial" and len(gpus) > 1:
        raise InputError(f"--executor serial runs on one GPU, not {len(gpus)}; choose "
                         "--executor pool (one process per GPU) or ray")
    if slices and name == "serial" and (workers or 1) > 1:
        raise InputError(f"--executor serial measures on the whole machine, not on {workers} "
                         "slices; choose --executor pool or ray")
    if slices and workers:
        slice_cores(int(workers))
    return factory(workers=workers, address=address, gpus=gpus, slices=slices)
