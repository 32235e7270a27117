"""What a measurement runs: one launch of one kernel, with its arguments and its check.

Every measurement function takes a :class:`Job`: the :class:`kerncast.core.Kernel` the
backend compiles, the :class:`kerncast.core.Launch` it runs (geometry, and the
arguments' names in the kernel's order), the columns that identify its rows, the
buffers' intents and sizes (planned before anything is generated), how to prepare the
host arguments and how to check the outputs. Two producers make jobs:

- :func:`corpus_job`: a corpus kernel at one launch configuration: its prepared inputs
  (shared on disk between configurations), poisoned outputs and NumPy reference;
- :func:`user_job`: a user's own kernel and launch: the launch's arrays (data or
  generated), views as pointers into them, and, where the user gives expected
  outputs (Kernel Tuner's ``answer``), a comparison with those.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kerncast.core import Array, BufferOffset, Kernel, Launch
from kerncast.corpus import CorpusKernel, LaunchConfig

__all__ = ["Job", "ViewOf", "as_job", "corpus_job", "user_job"]


@dataclass(frozen=True)
class ViewOf:
    """A prepared argument that points ``byte_offset`` bytes into the argument ``name``."""

    name: str
    byte_offset: int


@dataclass(frozen=True, eq=False)
class Job:
    """One launch to measure (see the module)."""

    name: str
    kernel: Kernel
    launch: Launch
    columns: Mapping[str, Any]
    intents: Mapping[str, str]
    buffer_sizes: Mapping[str, int]
    prepare: Callable[..., Any]
    problems: Callable[[dict, dict], list[str]]
    where: str
    corpus: tuple[CorpusKernel, LaunchConfig] | None = field(default=None, repr=False)

    def buffers(self, intent: str) -> list[str]:
        """The buffers of one intent (``in``, ``out``, ``inout``), in argument order."""
        return [n for n in self.launch.names if self.intents.get(n) == intent]


def corpus_job(kernel: CorpusKernel, config: LaunchConfig, language: str = "cuda") -> Job:
    """The job of a corpus launch: prepared inputs, poisoned outputs, the reference (the
    source in ``language``, or in the kernel's first language where it has none in it, as
    for the C versions' rows)."""
    from kerncast.measure._prep import load_prepared  # noqa: PLC0415 (cycle: _prep needs jobs' types)
    from kerncast.measure._run import output_problems  # noqa: PLC0415 (cycle: _run takes jobs)

    source, launch = kernel.instance(
        config, language if language in kernel.languages else kernel.languages[0])
    columns = {"kernel": kernel.name, "size": config.size, "config": config.label(),
               "tunables": json.dumps(config.tunables, sort_keys=True),
               "params": json.dumps(config.params, sort_keys=True, default=float)}
    args = [a for a in kernel.spec.args if a.kind == "buffer"]
    return Job(
        name=kernel.name, kernel=source, launch=launch, columns=columns,
        intents={a.name: a.intent for a in args},
        buffer_sizes={a.name: kernel.buffer_elements(a, config) * np.dtype(a.dtype).itemsize
                      for a in args},
        prepare=lambda seed=0, root=None, reference=True: load_prepared(
            kernel, config, seed, root, reference),
        problems=lambda got, want: output_problems(kernel, got, want),
        where=f"{kernel.name} at size {config.size!r}", corpus=(kernel, config))


def _prepared(launch: Launch, answer: Sequence[Any] | None, reference: bool):
    from kerncast.measure._prep import Prepared  # noqa: PLC0415 (cycle: _prep imports corpus helpers)

    values = launch.materialise(generate=True)
    args: dict[str, Any] = {}
    for name, value in zip(launch.names, values):
        if isinstance(value, BufferOffset):
            base = next(n for n, v in zip(launch.names, values) if v is value.array)
            args[name] = ViewOf(base, value.byte_offset)
        elif isinstance(value, bytes):
            args[name] = np.frombuffer(value, np.dtype((np.void, len(value))))[0]
        else:
            args[name] = value
    want = {}
    if reference and answer is not None:
        want = {n: np.asarray(a).reshape(-1) for n, a in zip(launch.names, answer)
                if a is not None}
    return Prepared(args, want)


def _compare(got: dict, want: dict, atol: float) -> list[str]:
    problems = []
    for name, expected in want.items():
        actual = np.asarray(got[name]).reshape(-1)
        if actual.shape != expected.shape:
            problems.append(f"{name}: {actual.size} elements, the answer has {expected.size}")
            continue
        bad = ~np.isclose(actual.astype(np.float64), expected.astype(np.float64), rtol=0,
                          atol=atol)
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            problems.append(f"{name}: {int(bad.sum())} of {bad.size} elements differ from the "
                            f"answer, first at [{first}]: got {actual[first]!r}, expected "
                            f"{expected[first]!r}")
    return problems


def user_job(kernel: Kernel, launch: Launch, *, answer: Sequence[Any] | None = None,
             atol: float = 1e-6) -> Job:
    """The job of a user's own launch. An array whose intent is not given is restored
    before every timed launch (as an ``inout`` buffer); ``answer`` (a list in argument
    order, ``None`` where an argument is not checked) is compared with ``atol``."""
    intents, sizes = {}, {}
    for name, arg in zip(launch.names, launch.args):
        if isinstance(arg, Array):
            intents[name] = arg.intent or "inout"
            sizes[name] = arg.nbytes
    if answer is not None and len(answer) != len(launch.args):
        from kerncast._errors import InputError  # noqa: PLC0415 (only on this mistake)

        raise InputError(f"answer has {len(answer)} entries for {len(launch.args)} arguments; "
                         "give one per argument, None where it is not checked")
    columns = {"kernel": kernel.name, "size": launch.size or "", "config": launch.label(),
               "tunables": json.dumps(dict(launch.params), sort_keys=True, default=str),
               "params": json.dumps({}, sort_keys=True)}
    return Job(name=kernel.name, kernel=kernel, launch=launch, columns=columns,
               intents=intents, buffer_sizes=sizes,
               prepare=lambda seed=0, root=None, reference=True: _prepared(launch, answer,
                                                                            reference),
               problems=lambda got, want: _compare(got, want, atol),
               where=f"{kernel.name} ({launch.label()})")


def as_job(kernel: Job | CorpusKernel, config: LaunchConfig | None = None,
           language: str = "cuda") -> Job:
    """``kernel`` as it is if a job, else the corpus launch ``config`` of it."""
    if isinstance(kernel, Job):
        return kernel
    assert config is not None, "a corpus kernel needs its launch configuration"
    return corpus_job(kernel, config, language)
