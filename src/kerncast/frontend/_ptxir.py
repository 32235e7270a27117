"""The bridge to kerncast's PTX parser (``kerncast.ptx``), used when it is there.

The frontend needs only kernel signatures, which ``_ptxscan`` reads on its own;
where ``kerncast.ptx.parse`` exists its parameters are preferred (it understands
every PTX form), and the scan stays the fallback.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from kerncast._errors import KerncastError
from kerncast.frontend._ptxscan import Param

__all__ = ["parser", "params_from_module"]


def parser() -> Callable[[str], Any] | None:
    """``kerncast.ptx.parse`` if the PTX parser has landed, else ``None``."""
    try:
        module = importlib.import_module("kerncast.ptx")
    except ImportError:
        return None
    parse = getattr(module, "parse", None)
    return parse if callable(parse) else None


def _param(index: int, p: Any) -> Param:
    ptype = str(p.type).lstrip(".")
    size = int(p.size)
    count = int(getattr(p, "count", 1) or 1)
    align = getattr(p, "align", None) or (size // max(count, 1) or 1)
    return Param(index=index, name=str(p.name), type=ptype, size=size, align=int(align),
                 count=count, space=getattr(p, "ptr_space", None))


def params_from_module(ptx: str) -> dict[str, tuple[Param, ...]] | None:
    """Parameters per entry from ``kerncast.ptx``; ``None`` where the parser is absent
    or cannot read this module (the caller falls back to the signature scan)."""
    parse = parser()
    if parse is None:
        return None
    try:
        module = parse(ptx)
        return {f.name: tuple(_param(i, p) for i, p in enumerate(f.params))
                for f in module.entries}
    except (KerncastError, AttributeError, TypeError, ValueError):
        return None
