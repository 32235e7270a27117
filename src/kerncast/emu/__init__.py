"""kerncast.emu: the SIMT emulator that runs a kernel's PTX on the CPU.

``emulate(kernel, launch, args, blocks="all")`` executes the kernel with NumPy,
vectorised over the lanes of every warp (and of every warp standing at the same
instruction), with GPGPU-Sim style reconvergence stacks, and returns the outputs
and the warp trace (:mod:`kerncast.trace`). ``emulate_corpus(name, size)`` runs a
corpus kernel on its generated inputs and checks the outputs against its NumPy
reference.
"""

from kerncast.emu._api import (
    DEFAULT_BATCH_THREADS, DEFAULT_STEP_BUDGET, EmulationResult, emulate, emulate_corpus,
)
from kerncast.emu._errors import (
    Deadlock, EmulationError, KernelTrap, MemoryFault, StepBudgetExceeded,
    UnsupportedInstruction,
)
from kerncast.emu._launch import Launch, as_launch, select_blocks
from kerncast.emu._program import Program, build_program

__all__ = [
    "DEFAULT_BATCH_THREADS", "DEFAULT_STEP_BUDGET", "Deadlock", "EmulationError",
    "EmulationResult", "KernelTrap", "Launch", "MemoryFault", "Program",
    "StepBudgetExceeded", "UnsupportedInstruction", "as_launch", "build_program", "emulate",
    "emulate_corpus", "select_blocks",
]
