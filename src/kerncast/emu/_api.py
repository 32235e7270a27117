"""``emulate``: run a kernel's PTX on the CPU; ``emulate_corpus`` for corpus kernels."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from kerncast._errors import InputError
from kerncast.emu._emulator import Machine
from kerncast.emu._launch import Launch, as_launch, select_blocks
from kerncast.emu._program import Program, build_program
from kerncast.ptx import Function, Module, parse
from kerncast.emu._fround import EXACTNESS

__all__ = ["EmulationResult", "emulate", "emulate_corpus", "DEFAULT_STEP_BUDGET",
           "DEFAULT_BATCH_THREADS"]

DEFAULT_STEP_BUDGET = 50_000_000
"""Warp instructions a launch may execute before the emulator calls it endless."""
DEFAULT_BATCH_THREADS = 32768
"""Threads emulated together in one batch (blocks of a launch run in batches)."""


@dataclass
class EmulationResult:
    """What an emulated launch left behind.

    Attributes
    ----------
    kernel : str
    launch : Launch
    blocks : numpy.ndarray
        Linear indices of the blocks that ran (all of them, or the sample).
    steps : int
        Warp instructions executed (PTX instructions issued per warp).
    thread_steps : int
        Thread instructions executed (active lanes summed over warp instructions).
    batches : int
        How many batches of blocks ran.
    seconds : float
        Wall time of the emulation (translation included).
    trace : kerncast.trace.Trace or None
    problems : list of str
        Output mismatches against the reference (``emulate_corpus`` only).
    over_budget : list of int
        Blocks stopped at ``block_step_budget`` (their outputs are partial).
    """

    kernel: str
    launch: Launch
    blocks: np.ndarray
    steps: int
    thread_steps: int
    batches: int
    seconds: float
    trace: object | None
    problems: list[str] = field(default_factory=list)
    over_budget: list[int] = field(default_factory=list)
    _regions: dict = field(default_factory=dict, repr=False)
    _variables: dict = field(default_factory=dict, repr=False)

    @property
    def outputs(self) -> dict[str, np.ndarray]:
        """Every array argument after the run, by name (new arrays: inputs stay untouched)."""
        out = {}
        for name, region in self._regions.items():
            array = region.array()
            out[name] = array if region.store.writable else array.copy()
        return out

    def output(self, name: str) -> np.ndarray:
        if name not in self._regions:
            raise InputError(f"no array argument {name!r}; the arrays are "
                             f"{', '.join(self._regions) or 'none'}")
        return self.outputs[name]

    @property
    def variables(self) -> dict[str, np.ndarray]:
        """Module ``.global`` variables after the run, as bytes."""
        return {k: r.raw().copy() for k, r in self._variables.items()}

    @property
    def ok(self) -> bool:
        return not self.problems


def _kernel_of(kernel, entry: str | None) -> tuple[Function, Module | None]:
    if isinstance(kernel, str):
        kernel = parse(kernel)
    if isinstance(kernel, Module):
        entries = kernel.entries
        if entry is None:
            if len(entries) != 1:
                names = ", ".join(e.name for e in entries) or "none"
                raise InputError(f"the PTX module has {len(entries)} kernels ({names}); "
                                 "name the one to emulate with entry=")
            return entries[0], kernel
        return kernel.function(entry), kernel
    if isinstance(kernel, Function):
        return kernel, None
    raise InputError(f"cannot emulate a {type(kernel).__name__}; pass a PTX Module, its "
                     "text, or a Function")


def emulate(kernel, launch, args, blocks="all", *, entry: str | None = None,
            step_budget: int = DEFAULT_STEP_BUDGET, trace: bool = True,
            batch_threads: int = DEFAULT_BATCH_THREADS, device=None,
            registers: int | None = None, shared_bytes: int | None = None,
            labels=None, memory_budget: int | None = None,
            inplace: bool = False, stop_when_traced: bool = False,
            exact: bool = True, values: str = "all",
            constants: Mapping[str, np.ndarray] | None = None,
            block_step_budget: int | None = None) -> EmulationResult:
    """Run a kernel's PTX on the CPU with real arguments.

    Parameters
    ----------
    kernel
        A parsed :class:`~kerncast.ptx.Module` (with ``entry`` naming the kernel when
        it has several), PTX text, a :class:`~kerncast.ptx.Function` (calls of
        other functions then need the module), or the kernel's program
        (:func:`build_program`), which runs after its first emulation without being
        built, sliced or checked again.
    launch
        A :class:`Launch`, a corpus ``LaunchConfig``, ``{"grid":..., "block":...,
        "dynamic_shared":...}`` or ``(grid, block[, dynamic_shared])``.
    args
        The kernel's arguments in parameter order, or a dict by parameter name:
        NumPy arrays for pointers (placed in emulated global memory; the same
        array twice is one buffer), numbers for scalars.
    blocks
        ``"all"``, ``"first-round"`` (the first SM's first round of resident blocks
        on ``device`` with ``registers`` per thread and ``shared_bytes`` of shared
        memory per block, by default the PTX's static shared memory plus the launch's
        dynamic shared memory), block indices,
        ``{"first": n}``, ``{"strided": n}`` or ``{"random": n, "seed": s}``.
    step_budget
        Warp instructions allowed before the run is declared endless.
    block_step_budget
        Warp instructions each block may take: a block that takes more is stopped, not
        failed, and listed in the result's ``over_budget`` (to find the blocks that
        finish within a budget, several at once).
    trace
        Record the warp trace (:class:`kerncast.trace.Trace`).
    batch_threads
        Threads emulated together in one batch.
    memory_budget
        Record at most this many lane accesses in the trace (the instruction streams
        are always complete; ``trace.memory_cutoff`` says where the accesses stop).
    inplace
        Let the kernel write into the caller's (writable, contiguous) arrays instead of
        copies: for arguments the caller does not need afterwards.
    stop_when_traced
        Stop as soon as ``memory_budget`` accesses are recorded (the outputs and the
        instruction streams are then partial): to see a block's first addresses only.
        Such a peek also stops, without failing, when ``step_budget`` runs out.
    exact
        Round fused multiply-adds exactly (off: one float64 ``a * b + c`` rounded to the
        format, faster and off by an ulp in rare cases, for runs whose last bits do not
        matter, such as timing traces).
    values
        ``"all"`` computes every instruction's result. ``"needed"`` computes only what
        the trace depends on (a backward slice from branch and exit predicates,
        barrier operands, guards and addresses of memory instructions, through every
        register that feeds them, and through memory where a loaded value is needed):
        the other instructions are recorded in the trace as before, with the same
        lanes, and loads, stores and atomics whose values nothing needs only compute,
        check and record their addresses. The trace equals the full run's; the outputs
        are then meaningless.
    constants
        Values of the module's ``__constant__`` variables by name (Kernel Tuner's
        ``cmem_args``), written over their initializers.

    Returns
    -------
    EmulationResult

    Raises
    ------
    InputError
        Bad arguments or launch; ``UnsupportedInstruction`` before anything runs;
        ``MemoryFault``, ``Deadlock``, ``StepBudgetExceeded``, ``KernelTrap`` while
        running (all ``InputError`` subclasses).
    """
    if values not in ("all", "needed"):
        raise InputError(f"values must be 'all' or 'needed', not {values!r}")
    began = time.perf_counter()
    prebuilt = kernel if isinstance(kernel, Program) else None
    func, module = (prebuilt.kernel, prebuilt.module) if prebuilt else _kernel_of(kernel, entry)
    if not func.is_entry:
        raise InputError(f"{func.name} is a device function, not a kernel (.entry)")
    the_launch = as_launch(launch)
    program = prebuilt or build_program(func, module)
    if isinstance(labels, (list, tuple)) and len(labels) != len(func.params):
        labels = None
    if labels is None and isinstance(args, Mapping):
        labels = [p.name for p in func.params]
    if shared_bytes is None:
        shared_bytes = _static_shared(program) + the_launch.dynamic_shared
    chosen = select_blocks(blocks, the_launch, device=device, registers=registers,
                           shared=int(shared_bytes))
    per_batch = max(1, min(len(chosen), int(batch_threads) // the_launch.padded_threads))
    recorder = None
    if trace:
        from kerncast.trace import TraceBuilder

        recorder = TraceBuilder(func.name, program, the_launch, memory_budget)
    num_sms = _sm_count(device)
    machine = Machine(program, the_launch, args, batch_blocks=per_batch,
                      step_budget=int(step_budget), recorder=recorder, labels=labels,
                      num_sms=num_sms, inplace=inplace,
                      stop_when_traced=stop_when_traced and memory_budget is not None,
                      values=values, constants=dict(constants or {}),
                      block_step_budget=None if block_step_budget is None
                      else int(block_step_budget))

    EXACTNESS.exact, previous = exact, EXACTNESS.exact
    try:
        machine.run(chosen)
    finally:
        EXACTNESS.exact = previous
    result_trace = recorder.finish(machine.steps, machine.thread_steps) if recorder else None
    return EmulationResult(func.name, the_launch, chosen, machine.steps, machine.thread_steps,
                           len(machine.blocks_run), time.perf_counter() - began, result_trace,
                           over_budget=sorted(machine.over_budget),
                           _regions=dict(machine.buffers),
                           _variables=dict(machine.layout.globals))


def _static_shared(program) -> int:
    from kerncast.emu._layout import _pack

    offsets: dict = {}
    return _pack(offsets, program.variables("shared"))


def _sm_count(device) -> int:
    if device is None:
        return 132
    from kerncast.devices import get_device

    return get_device(device).compute.sm_count


def emulate_corpus(kernel_name, size: str = "small", tunables: dict | None = None,
                   language: str = "cuda", blocks="all", *, seed: int = 0,
                   check: bool = True, **options) -> EmulationResult:
    """Compile a corpus kernel, emulate it on generated inputs and check its outputs.

    ``kernel_name`` is a corpus kernel's name (or a ``CorpusKernel``). The outputs
    are compared with the kernel's NumPy reference (when all blocks
    ran and ``check`` is true); mismatches are listed in ``result.problems``.
    """
    from kerncast.corpus import compare_outputs, expected_outputs, get_kernel, make_args
    from kerncast.frontend import compile as compile_source

    kernel = get_kernel(kernel_name) if isinstance(kernel_name, str) else kernel_name
    config = kernel.launch(size, tunables)
    defines = {k: (int(v) if float(v).is_integer() else v) for k, v in config.defines.items()}
    ptx = compile_source(kernel.source_path(language), lang=language, defines=defines).ptx
    module = parse(ptx)
    args = make_args(kernel, config, seed=seed)
    names = [a.name for a in kernel.spec.args]
    values = [args[name] for name in names]
    result = emulate(module, config, values, blocks, entry=kernel.entry, labels=names,
                     **options)
    if check and isinstance(blocks, str) and blocks == "all":
        want = expected_outputs(kernel, args, config)
        result.problems = compare_outputs(kernel, result.outputs, want)
    return result
