"""The exceptions kerncast raises on purpose.

Every error meant for a user says what went wrong and what to do about it, in one
line. The command line turns :class:`InputError` into exit code 2 (bad input) and
every other :class:`KerncastError` into exit code 1 (a failure), with no traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "KerncastError",
    "InputError",
    "ToolchainError",
    "NotFittedError",
    "unknown_name",
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


def unknown_name(what: str, name: str, known: Iterable[str]) -> InputError:
    """The error for a name no registry holds: the close ones, then every known one."""
    names = sorted(known)
    close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return InputError(f"unknown {what} {name!r}; {hint}the known {what}s are: "
                      f"{', '.join(names)}")
