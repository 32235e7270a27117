"""The bridge to kerncast's PTX parser (``kerncast.ptx``), used when it is there.

The frontend needs only kernel signatures, which ``_ptxscan`` reads on its own;
where ``kerncast.ptx.parse`` exists its parameters are preferred (it understands
every PTX form), and the scan stays the fallback.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from kerncast.frontend._ptxscan import Param

__all__ = ["params_from_module", "parse_quietly", "parser"]


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


def parse_quietly(ptx: str) -> Any | None:
    """``kerncast.ptx.parse(ptx)``, or ``None`` where the parser is absent or fails.

    A failure here never stops a compile (the signature scan suffices for it); it
    surfaces, with the parser's own message, when the IR is asked for.
    """
    parse = parser()
    if parse is None:
        return None
    try:
        return parse(ptx)
    except Exception:  # noqa: BLE001 (see above)
        return None


def params_from_module(module: Any | None) -> dict[str, tuple[Param, ...]] | None:
    """Parameters per entry of a parsed module; ``None`` where there is no module or it
    does not have the expected shape (the caller falls back to the signature scan)."""
    if module is None:
        return None
    try:
        return {f.name: tuple(_param(i, p) for i, p in enumerate(f.params))
                for f in module.entries}
    except (AttributeError, TypeError, ValueError):
        return None
