"""Errors of the emulator: unsupported PTX, faults, deadlocks, endless loops.

Everything the emulator raises for a problem with the kernel or its launch is an
:class:`~kerncast.InputError` (exit code 2): an unsupported instruction is found
when the kernel is translated, before anything runs; a fault, a deadlock or an
exhausted step budget stop the run with a message naming the kernel, the PTX line
and the thread.
"""

from __future__ import annotations

from kerncast._errors import InputError

__all__ = [
    "EmulationError",
    "MemoryFault",
    "Deadlock",
    "StepBudgetExceeded",
    "UnsupportedInstruction",
    "KernelTrap",
]


class UnsupportedInstruction(InputError):
    """The kernel uses an instruction (or a form of one) the emulator does not implement."""

    def __init__(self, message: str, *, line: int = 0, instruction: str = "") -> None:
        self.line = line
        self.instruction = instruction
        super().__init__(message)


class EmulationError(InputError):
    """The emulated kernel went wrong at run time (see the subclasses)."""


class MemoryFault(EmulationError):
    """An out-of-bounds or misaligned memory access.

    Attributes
    ----------
    line : int
        PTX line of the faulting instruction.
    block, thread : tuple of int
        Block index and thread index (x, y, z) of the first faulting thread.
    address : int
        The address it accessed.
    """

    def __init__(self, message: str, *, line: int = 0, block: tuple = (), thread: tuple = (),
                 address: int = 0) -> None:
        self.line, self.block, self.thread, self.address = line, block, thread, address
        super().__init__(message)


class Deadlock(EmulationError):
    """Warps wait at a barrier that the other threads of their block never reach."""


class StepBudgetExceeded(EmulationError):
    """The kernel ran longer than the step budget (usually an endless loop)."""


class KernelTrap(EmulationError):
    """The kernel executed ``trap`` or failed an ``assert``."""


class Fault(Exception):
    """Raised inside instruction closures; the machine turns it into a :class:`MemoryFault`.

    ``position`` indexes the lanes the closure was running on (``lanes[position]``
    is the faulting lane), ``address`` the address it used and ``reason`` what was
    wrong ("out of bounds", "misaligned", ...).
    """

    def __init__(self, lanes, position: int, address: int, reason: str, space: str) -> None:
        super().__init__(reason)
        self.lanes, self.position, self.address = lanes, position, address
        self.reason, self.space = reason, space
        self.pc = -1
