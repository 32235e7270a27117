"""Memory of an emulated launch: global buffers, shared, local, const and param space.

Addresses
---------
Global buffers live at aligned addresses of a 64-bit space starting at
``GLOBAL_BASE``, each followed by a gap at least as large as itself, so that an
access past the end of a buffer faults instead of landing in the next one. Pointer
parameters get these addresses. The other spaces have their own, small, address
ranges (shared: the block's bytes from 0; local: the thread's bytes from 0; const:
the module's constant bank; param: the kernel parameters from 0 and the per-thread
call parameters from ``PARAM_FRAME_BASE``), and a *window* in the generic space:
``cvta`` adds the window base, ``cvta.to`` subtracts it, and a generic access is
routed by the window its address falls in (global where it falls in none).

Every store is an array of bytes (padded to 16) with typed views made on demand.
Buffers passed by the caller are used without a copy until the kernel first writes
them (copy on write), so the caller's arrays are never modified. A buffer of at least
:data:`PARTIAL_BYTES` is then copied a chunk at a time, each chunk as an access first
touches it: an emulation of a few blocks that sorts or updates a buffer of gigabytes in
place copies the chunks its blocks reach, not the buffer. A
:class:`~kerncast.core.Chunked` array (generated values) is made the same way, a chunk
at a time as accesses reach it.
"""

from __future__ import annotations

import bisect

import numpy as np

from kerncast.core import Chunked, lazy_zeros
from kerncast.emu._errors import Fault

__all__ = [
    "GLOBAL_BASE", "SHARED_WINDOW", "LOCAL_WINDOW", "CONST_WINDOW", "PARAM_WINDOW",
    "PARAM_FRAME_BASE", "WINDOW_SHIFT", "Store", "Region", "GlobalMemory", "LaneSpace",
    "UniformSpace", "AccessCache",
]

WINDOW_SHIFT = 40
SHARED_WINDOW = 0x50 << WINDOW_SHIFT
LOCAL_WINDOW = 0x51 << WINDOW_SHIFT
CONST_WINDOW = 0x52 << WINDOW_SHIFT
PARAM_WINDOW = 0x53 << WINDOW_SHIFT
GLOBAL_BASE = 0x70 << WINDOW_SHIFT
PARAM_FRAME_BASE = 1 << 24
WINDOWS = {0x50: "shared", 0x51: "local", 0x52: "const", 0x53: "param"}
_ALIGN = 256
_MIN_GAP = 1 << 16
#: a caller's buffer at least this large is copied on write a chunk at a time
PARTIAL_BYTES = 16 << 20
#: bytes of one such chunk: 2 ** CHUNK_SHIFT
CHUNK_SHIFT = 16


def _padded(nbytes: int) -> int:
    return max(16, -(-nbytes // 16) * 16)


class Store:
    """Bytes of one memory object with cached typed views; copy on first write.

    A large store (:data:`PARTIAL_BYTES`) copied on write keeps the bytes it was made
    from in ``source`` and which chunks it holds in ``filled``: every access to it must
    first :meth:`touch` its offsets, and :meth:`complete` copies what is left (``filled``
    is None once it holds every byte). A store made from a caller's array keeps that
    array in ``origin`` until it is first written."""

    __slots__ = ("data", "views", "writable", "source", "filled", "origin")

    def __init__(self, data: np.ndarray, writable: bool) -> None:
        self.data, self.views, self.writable = data, {}, writable
        self.source: np.ndarray | None = None
        self.filled: np.ndarray | None = None
        self.origin: np.ndarray | None = None

    @classmethod
    def zeros(cls, nbytes: int) -> Store:
        return cls(np.zeros(_padded(nbytes), np.uint8), True)

    @classmethod
    def chunked(cls, array: Chunked) -> Store:
        """The bytes of a :class:`~kerncast.core.Chunked` array, each chunk made as an
        access first touches it (on zero pages the operating system gives as written)."""
        data = lazy_zeros(_padded(array.nbytes), np.uint8)
        store = cls(data, True)
        store.source = array
        store.filled = np.zeros(-(-data.size >> CHUNK_SHIFT), bool)
        return store

    @classmethod
    def wrap(cls, array: np.ndarray, inplace: bool = False) -> Store:
        """Bytes of a caller's array, shared (read-only) while they fit the padding rule;
        with ``inplace`` the kernel writes into the caller's array itself."""
        flat = np.ascontiguousarray(array).reshape(-1)
        raw = flat.view(np.uint8)
        if raw.size % 16 == 0 and raw.size:
            if inplace and flat.flags.writeable and np.shares_memory(flat, array):
                return cls(raw, True)
            view = raw[:]
            view.flags.writeable = False
            store = cls(view, False)
        else:
            data = np.zeros(_padded(raw.size), np.uint8)
            data[:raw.size] = raw
            store = cls(data, True)
        store.origin = flat
        return store

    def view(self, dtype: np.dtype) -> np.ndarray:
        view = self.views.get(dtype)
        if view is None:
            view = self.views[dtype] = self.data.view(dtype)
        return view

    def make_writable(self) -> None:
        self.origin = None
        if self.writable:
            return
        if self.data.size >= PARTIAL_BYTES:
            # the operating system gives the zeros' pages as chunks are written
            self.source, self.data = self.data, np.zeros(self.data.size, np.uint8)
            self.filled = np.zeros(-(-self.data.size >> CHUNK_SHIFT), bool)
        else:
            self.data = self.data.copy()
        self.views = {}
        self.writable = True

    def touch(self, off: np.ndarray, width: int) -> None:
        """Copy in the chunks that ``width``-byte accesses at byte offsets ``off`` reach
        and the store does not hold yet."""
        filled = self.filled
        if filled is None or not len(off):
            return
        lo, hi = int(off.min()) >> CHUNK_SHIFT, (int(off.max()) + width - 1) >> CHUNK_SHIFT
        if filled[lo:hi + 1].all():
            return
        shift = np.uint64(CHUNK_SHIFT)
        chunks = np.unique(np.concatenate([off >> shift, (off + np.uint64(width - 1)) >> shift]))
        chunks = chunks.astype(np.int64)
        self._fill(chunks[~filled[chunks]])

    def complete(self) -> None:
        """Copy in every chunk not held yet: the store then holds all its bytes."""
        if self.filled is not None:
            self._fill(np.flatnonzero(~self.filled))
            self.source = self.filled = None

    def _fill(self, chunks: np.ndarray) -> None:
        assert self.source is not None and self.filled is not None
        for c in chunks.tolist():
            lo, hi = c << CHUNK_SHIFT, min((c + 1) << CHUNK_SHIFT, self.data.size)
            self.data[lo:hi] = self.source[lo:hi]
        self.filled[chunks] = True


class Region:
    """One global buffer (or module ``.global`` variable) at ``base``."""

    __slots__ = ("name", "base", "base64", "nbytes", "store", "dtype", "shape", "limits")

    def __init__(self, name: str, base: int, nbytes: int, store: Store, dtype, shape) -> None:
        self.name, self.base, self.nbytes, self.store = name, base, nbytes, store
        self.base64 = np.uint64(base)
        self.dtype, self.shape = np.dtype(dtype), shape
        self.limits = {w: nbytes - w for w in (1, 2, 4, 8, 16, 32)}

    @property
    def end(self) -> int:
        return self.base + self.nbytes

    def raw(self) -> np.ndarray:
        """The buffer's bytes (a view of the store, which first copies in all it lacks)."""
        self.store.complete()
        return self.store.data[:self.nbytes]

    def array(self) -> np.ndarray:
        """The buffer's contents in its own dtype and shape (a view of the store)."""
        raw = self.raw()
        return raw.view(self.dtype).reshape(self.shape)

    def unwritten(self) -> np.ndarray | None:
        """The caller's array the buffer was made from (flat), while nothing has written
        the buffer; else None."""
        return self.store.origin


class AccessCache:
    """Per instruction: the region its last access hit (most hit the same one again)."""

    __slots__ = ("region",)

    def __init__(self) -> None:
        self.region: Region | None = None


def _position(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0])


def _fits(offsets: np.ndarray, width: int, limit: int) -> bool:
    """Whether every offset is at most ``limit`` and a multiple of ``width``, decided
    from their bitwise or (at least their maximum) in one pass: False is not a
    fault, only a reason to check lane by lane."""
    bits = int(np.bitwise_or.reduce(offsets))
    return bits <= limit and not bits & (width - 1)


def check_aligned(offsets: np.ndarray, width: int, sel, base: int, space: str) -> None:
    """Raise a :class:`Fault` for the first lane whose offset is not a multiple of ``width``."""
    if width > 1 and int(np.bitwise_or.reduce(offsets)) & (width - 1):
        bad = offsets & np.uint64(width - 1)
        if bad.any():
            pos = _position(bad != 0)
            raise Fault(sel, pos, base + int(offsets[pos]),
                        f"misaligned {width}-byte access", space)


class GlobalMemory:
    """All global buffers of a launch, by address."""

    def __init__(self, inplace: bool = False) -> None:
        self.regions: list[Region] = []
        self._bases: list[int] = []
        self._next = GLOBAL_BASE
        self.inplace = inplace

    def add(self, name: str, array: np.ndarray | Chunked | None = None,
            nbytes: int = 0) -> Region:
        """Place a buffer (the caller's array, shared until written; a chunked array, made
        as it is reached) or ``nbytes`` of zeros."""
        if isinstance(array, Chunked):
            store = Store.chunked(array)
            nbytes, dtype, shape = array.nbytes, array.dtype, array.shape
        elif array is not None:
            store = Store.wrap(array, self.inplace)
            nbytes, dtype, shape = array.nbytes, array.dtype, array.shape
        else:
            store, dtype, shape = Store.zeros(nbytes), np.uint8, (nbytes,)
        base = self._next
        region = Region(name, base, nbytes, store, dtype, shape)
        span = -(-max(nbytes, 1) // _ALIGN) * _ALIGN
        self._next = base + span + max(_MIN_GAP, span)
        self._next = -(-self._next // _ALIGN) * _ALIGN
        self.regions.append(region)
        self._bases.append(base)
        return region

    def find(self, address: int) -> Region | None:
        """The region holding ``address``, or None."""
        k = bisect.bisect_right(self._bases, address) - 1
        if k >= 0:
            region = self.regions[k]
            if address < region.base + max(region.nbytes, 1):
                return region
        return None

    def nearest(self, address: int) -> str:
        """A phrase naming the buffer nearest to ``address`` (for fault messages)."""
        if not self.regions:
            return "no global buffers exist"
        best = min(self.regions, key=lambda r: 0 if r.base <= address < r.end else
                   min(abs(address - r.base), abs(address - r.end)))
        if best.base <= address < best.end:
            return f"inside buffer {best.name} ({best.nbytes} bytes at {best.base:#x})"
        if address >= best.end:
            return (f"{address - best.end} bytes past the end of buffer {best.name} "
                    f"({best.nbytes} bytes at {best.base:#x})")
        return (f"{best.base - address} bytes before buffer {best.name} "
                f"({best.nbytes} bytes at {best.base:#x})")

    def resolve(self, addr: np.ndarray, width: int, sel, cache: AccessCache, write: bool):
        """``[(store, byte offsets, positions or None)]`` for global addresses ``addr``.

        Raises
        ------
        Fault
            For the first lane whose access is out of bounds or misaligned.
        """
        region = cache.region
        if region is not None:
            off = addr - region.base64
            if _fits(off, width, region.limits[width]):
                return [(_opened(region.store, off, width, write), off, None)]
            if int(off.max()) <= region.limits[width]:
                check_aligned(off, width, sel, region.base, "global")
                return [(_opened(region.store, off, width, write), off, None)]
        region = self.find(int(addr.min()))
        if region is not None:
            off = addr - region.base64
            if int(off.max()) <= region.limits[width]:
                cache.region = region
                check_aligned(off, width, sel, region.base, "global")
                return [(_opened(region.store, off, width, write), off, None)]
        return self._scattered(addr, width, sel, write)

    def _scattered(self, addr: np.ndarray, width: int, sel, write: bool):
        """Lanes that hit several buffers (or none: a fault)."""
        bases = np.array(self._bases, dtype=np.uint64)
        which = np.searchsorted(bases, addr, side="right").astype(np.int64) - 1
        ok = which >= 0
        limits = np.array([r.nbytes for r in self.regions], dtype=np.int64)
        off = np.zeros(addr.shape, np.int64)
        off[ok] = (addr[ok] - bases[which[ok]]).astype(np.int64)
        ok &= (off >= 0) & (off + width <= limits[np.maximum(which, 0)])
        if not ok.all():
            pos = _position(~ok)
            raise Fault(sel, pos, int(addr[pos]), f"out-of-bounds {width}-byte access", "global")
        chunks = []
        for k in np.unique(which):
            positions = np.flatnonzero(which == k)
            region = self.regions[int(k)]
            part = off[positions].astype(np.uint64)
            check_aligned(part, width, sel, region.base, "global")
            chunks.append((_opened(region.store, part, width, write), part, positions))
        return chunks


def _opened(store: Store, off: np.ndarray, width: int, write: bool) -> Store:
    """``store``, made writable for a write, holding the bytes ``width``-byte accesses at
    ``off`` reach (see :meth:`Store.touch`)."""
    if write:
        store.make_writable()
    if store.filled is not None:
        store.touch(off, width)
    return store


class LaneSpace:
    """Space with one private area per lane or per block: shared, local, call params.

    ``lane_base[lane]`` is the byte offset of the lane's area in ``store`` (its
    block's shared memory, or its own local or parameter frame); an address is an
    offset into that area, checked against ``size``.
    """

    def __init__(self, name: str, size: int, lane_base: np.ndarray, copies: int,
                 origin: int = 0) -> None:
        self.name, self.size, self.origin = name, size, origin
        self.stride = _padded(size) if size else 0
        self.store = Store.zeros(max(self.stride * copies, 16))
        self.lane_base = lane_base
        self.limits = {w: size - w for w in (1, 2, 4, 8, 16, 32)}

    def reset(self) -> None:
        self.store.data.fill(0)

    def resolve(self, addr: np.ndarray, width: int, sel, cache=None, write: bool = False):
        off = addr - np.uint64(self.origin) if self.origin else addr
        if _fits(off, width, self.limits[width]):
            return [(self.store, self.lane_base[sel] + off, None)]
        if int(off.max()) > self.limits[width]:
            bad = off > np.uint64(max(self.limits[width], 0)) if self.limits[width] >= 0 else \
                np.ones(off.shape, bool)
            pos = _position(bad)
            raise Fault(sel, pos, int(addr[pos]), f"out-of-bounds {width}-byte access "
                        f"(the {self.name} area holds {self.size} bytes)", self.name)
        check_aligned(off, width, sel, self.origin, self.name)
        return [(self.store, self.lane_base[sel] + off, None)]


class UniformSpace:
    """Space with one area for every thread: kernel parameters, the constant bank."""

    def __init__(self, name: str, data: bytes | np.ndarray, writable: bool = False) -> None:
        raw = np.frombuffer(bytes(data), np.uint8) if not isinstance(data, np.ndarray) else data
        self.name, self.size = name, raw.size
        buf = np.zeros(_padded(raw.size), np.uint8)
        buf[:raw.size] = raw
        self.store = Store(buf, writable)
        self.limits = {w: self.size - w for w in (1, 2, 4, 8, 16, 32)}

    def resolve(self, addr: np.ndarray, width: int, sel, cache=None, write: bool = False):
        if write:
            pos = 0
            raise Fault(sel, pos, int(addr[pos]), f"store to read-only {self.name} space",
                        self.name)
        if int(addr.max()) > self.limits[width]:
            bad = addr > np.uint64(max(self.limits[width], 0))
            pos = _position(bad) if bad.any() else 0
            raise Fault(sel, pos, int(addr[pos]), f"out-of-bounds {width}-byte access "
                        f"(the {self.name} space holds {self.size} bytes)", self.name)
        check_aligned(addr, width, sel, 0, self.name)
        return [(self.store, addr, None)]
