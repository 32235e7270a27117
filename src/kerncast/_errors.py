"""The exceptions kerncast raises on purpose.

Every error meant for a user says what went wrong and what to do about it, in one
line. The command line turns :class:`InputError` into exit code 2 (bad input) and
every other :class:`KerncastError` into exit code 1 (a failure), with no traceback.
"""

from __future__ import annotations

__all__ = [
    "KerncastError",
    "InputError",
    "ToolchainError",
    "NotFittedError",
]


class KerncastError(Exception):
    """Base class of every error kerncast raises on purpose (exit code 1)."""

    exit_code = 1


class InputError(KerncastError, ValueError):
    """The user's input is wrong: a device, a launch, a file, an argument (exit code 2)."""

    exit_code = 2


class ToolchainError(KerncastError):
    """A compiler or driver that a step needs is missing or failed to run."""


class NotFittedError(KerncastError, AttributeError):
    """A predictor was asked to predict before ``fit`` was called."""
