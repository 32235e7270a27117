"""Output helpers shared by the commands: Rich tables for people, JSON for scripts."""

from __future__ import annotations

import json
import math
import sys
from contextlib import nullcontext
from typing import Any

from pathlib import Path

from rich.console import Console

from kerncast._errors import InputError

__all__ = ["console", "err_console", "print_json", "status", "writable_dir", "writable_parent"]

#: piped output is read by programs and people alike: no table is cut to 80 columns
_WIDE = 400
console = Console(highlight=False, soft_wrap=True,
                  width=None if sys.stdout.isatty() else _WIDE)
err_console = Console(stderr=True, highlight=False, soft_wrap=True,
                      width=None if sys.stderr.isatty() else _WIDE)


def status(text: str, quiet: bool) -> Any:
    """A spinner saying ``text`` (its ``update`` reports progress), or none for ``--json``."""
    return nullcontext() if quiet else console.status(text, spinner="dots")


def writable_dir(path: Path) -> Path:
    """``path`` as a directory that exists and can be written, made where missing; checked
    before long work, so that a command does not fail at its end."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".kerncast-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise InputError(f"cannot write into {path} ({exc.strerror or exc}); choose a "
                         "directory you can write") from None
    return path


def writable_parent(path: Path) -> Path:
    """``path``, once its directory exists and can be written (see :func:`writable_dir`)."""
    writable_dir(path.parent)
    if path.is_dir():
        raise InputError(f"{path} is a directory; name a file to write")
    return path


def _default(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "item"):  # NumPy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def print_json(obj: Any) -> None:
    """Write ``obj`` as indented JSON to standard output (NaN and inf become null)."""
    text = json.dumps(_clean(json.loads(json.dumps(obj, default=_default))), indent=2)
    sys.stdout.write(text + "\n")
