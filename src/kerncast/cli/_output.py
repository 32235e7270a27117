"""Output helpers shared by the commands: Rich tables for people, JSON for scripts."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from rich.console import Console

__all__ = ["console", "err_console", "print_json"]

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


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
