"""One kernel launch set up on a backend: compiled, checked, uploaded, restorable.

The experiments beside ``times`` (sampled runs, energy loops, profiled launches)
all need the same preparation: compile, refuse launches the device cannot run or
sizes that do not fit, upload one copy of the inputs and a pristine copy of every
``inout`` buffer. :class:`LaunchSession` does it and turns each problem into a
:class:`Failure` carrying the row status.
"""

from __future__ import annotations

from typing import Any

from kerncast.measure._backend import Backend, CompileError, DeviceMemoryError, LaunchError
from kerncast.measure._job import Job, ViewOf, as_job
from kerncast.measure._prep import Prepared
from kerncast.measure._run import TooLarge, check_launchable, plan_input_sets
from kerncast.measure._timing import TimingPolicy

__all__ = ["Failure", "LaunchSession", "upload_args"]


def upload_args(backend: Backend, args: dict[str, Any]) -> dict[str, Any]:
    """Device copies of ``args``: arrays uploaded, scalars passed on, and each
    :class:`~kerncast.measure.ViewOf` a pointer into its array's device copy."""
    dev = backend.upload({n: v for n, v in args.items() if not isinstance(v, ViewOf)})
    for name, value in args.items():
        if isinstance(value, ViewOf):
            dev[name] = backend.offset(dev[value.name], value.byte_offset)
    return dev


class Failure(Exception):
    """A measurement that ends in a failure row."""

    def __init__(self, status: str, error: str):
        super().__init__(error)
        self.status, self.error = status, error


class LaunchSession:
    """Compile and upload one launch; restore its inout buffers on demand.

    Use as a context manager; failures raise :class:`Failure`.
    """

    def __init__(self, backend: Backend, kernel: Any, config: Any = None, *,
                 prepared: Prepared | None = None, seed: int = 0, prep_dir: str | None = None):
        self.job: Job = as_job(kernel, config, backend.language)
        self.backend, self.launch = backend, self.job.launch
        self._prepared, self._seed, self._prep_dir = prepared, seed, prep_dir
        self.compiled = None
        self.dev: dict[str, Any] = {}
        self.pristine: dict[str, Any] = {}
        self.inout = self.job.buffers("inout")

    @property
    def resources(self) -> dict:
        return self.compiled.resources.columns() if self.compiled is not None else {}

    def __enter__(self) -> LaunchSession:
        try:
            self.compiled = self.backend.compile(self.job.kernel)
        except CompileError as exc:
            raise Failure("compile_failed", str(exc)) from None
        problem = check_launchable(self.backend, self.launch, self.compiled)
        if problem:
            raise Failure("invalid_config", problem)
        try:
            plan_input_sets(self.backend, self.job, None, TimingPolicy(), rotate=False)
        except TooLarge as exc:
            raise Failure("too_large", str(exc)) from None
        prepared = self._prepared or self.job.prepare(self._seed, self._prep_dir,
                                                      reference=False)
        self.prepared = prepared
        try:
            self.pristine = self.backend.upload({n: prepared.args[n] for n in self.inout})
            self.dev = upload_args(self.backend, prepared.args)
        except DeviceMemoryError as exc:
            self.close()
            raise Failure("out_of_memory", str(exc)) from None
        except LaunchError as exc:
            self.close()
            raise Failure("launch_failed", str(exc)) from None
        return self

    def restore(self) -> None:
        """Enqueue the copies that put every inout buffer back to its initial contents."""
        for name in self.inout:
            self.backend.copy(self.dev[name], self.pristine[name])

    def close(self) -> None:
        self.backend.free(self.dev)
        self.backend.free(self.pristine)

    def __exit__(self, *exc) -> None:
        self.close()
