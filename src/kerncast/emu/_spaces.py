"""Routing of accesses to the state spaces, including generic addressing.

``resolver(space)`` gives ``resolve(addr, width, sel, cache, write)`` returning a
list of chunks ``(store, byte_offsets, positions, space)``: ``positions`` (None for
all) says which of the accessing lanes a chunk serves; a generic access whose
lanes fall in several windows gives one chunk per window.
"""

from __future__ import annotations

import numpy as np

from kerncast.emu._memory import (
    CONST_WINDOW, LOCAL_WINDOW, PARAM_FRAME_BASE, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SHIFT,
    WINDOWS, GlobalMemory, LaneSpace, UniformSpace,
)

__all__ = ["AddressSpaces", "WINDOW_BASE"]

WINDOW_BASE = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "const": CONST_WINDOW,
               "param": PARAM_WINDOW, "global": 0}
_SHIFT = np.uint64(WINDOW_SHIFT)


def _as_index(sel) -> np.ndarray:
    if isinstance(sel, slice):
        return np.arange(sel.start, sel.stop)
    return sel


class AddressSpaces:
    """The spaces of one launch and batch geometry."""

    def __init__(self, gmem: GlobalMemory, shared: LaneSpace, local: LaneSpace,
                 frames: LaneSpace, kparams: UniformSpace, const: UniformSpace) -> None:
        self.gmem, self.shared, self.local, self.frames = gmem, shared, local, frames
        self.kparams, self.const = kparams, const
        self._by_name = {"global": self._global, "shared": self._lane(shared, "shared"),
                         "local": self._lane(local, "local"), "const": self._uniform(const),
                         "param": self._param}

    def resolver(self, space: str | None):
        if space is None or space == "generic":
            return self._generic
        return self._by_name[space]

    def _global(self, addr, width, sel, cache, write):
        return [(s, o, p, "global") for s, o, p in self.gmem.resolve(addr, width, sel, cache,
                                                                     write)]

    @staticmethod
    def _lane(space: LaneSpace, name: str):
        def resolve(addr, width, sel, cache, write):
            return [(s, o, p, name) for s, o, p in space.resolve(addr, width, sel)]
        return resolve

    @staticmethod
    def _uniform(space: UniformSpace):
        def resolve(addr, width, sel, cache, write):
            return [(s, o, p, space.name) for s, o, p in space.resolve(addr, width, sel,
                                                                        write=write)]
        return resolve

    def _param(self, addr, width, sel, cache, write):
        frame = addr >= np.uint64(PARAM_FRAME_BASE)
        if not frame.any():
            return [(s, o, p, "param") for s, o, p in self.kparams.resolve(addr, width, sel,
                                                                            write=write)]
        if frame.all():
            return [(s, o, p, "param") for s, o, p in self.frames.resolve(addr, width, sel)]
        out = []
        idx = _as_index(sel)
        for part, space in ((~frame, self.kparams), (frame, self.frames)):
            pos = np.flatnonzero(part)
            chunks = space.resolve(addr[pos], width, idx[pos], write=write) \
                if space is self.kparams else space.resolve(addr[pos], width, idx[pos])
            out += [(s, o, pos, "param") for s, o, _ in chunks]
        return out

    def _generic(self, addr, width, sel, cache, write):
        win = addr >> _SHIFT
        lo, hi = int(win.min()), int(win.max())
        if lo == hi:
            name = WINDOWS.get(lo)
            if name is None:
                return self._global(addr, width, sel, cache, write)
            sub = addr - np.uint64(WINDOW_BASE[name])
            return self.resolver(name)(sub, width, sel, cache, write)
        out = []
        idx = _as_index(sel)
        for value in np.unique(win):
            pos = np.flatnonzero(win == value)
            name = WINDOWS.get(int(value))
            part = addr[pos]
            if name is None:
                chunks = self._global(part, width, idx[pos], cache, write)
            else:
                part = part - np.uint64(WINDOW_BASE[name])
                chunks = self.resolver(name)(part, width, idx[pos], cache, write)
            for store, off, inner, space in chunks:
                out.append((store, off, pos if inner is None else pos[inner], space))
        return out

    def window_of(self, addr: np.ndarray) -> np.ndarray:
        """The space name of every generic address (as an object array)."""
        win = (addr >> _SHIFT).astype(np.int64)
        names = np.array(["global"] * len(win), dtype=object)
        for value, name in WINDOWS.items():
            names[win == value] = name
        return names
