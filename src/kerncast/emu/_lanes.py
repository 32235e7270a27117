"""Lane sets: which threads of a batch an instruction runs on.

A :class:`Lanes` is either a slice of the batch's lanes (``mask`` None: every lane
in it is active), a slice with a boolean ``mask`` (the instruction computes over
the whole slice and writes only the masked lanes; cheap when most lanes are
active), or an index array (``sl`` is the array of active lanes; used when few
lanes of a wide range are active). ``sel`` is the compressed selection (a slice or
an index array) for instructions that must touch only active lanes: memory
accesses and warp collectives.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Lanes", "make_writer"]


class Lanes:
    __slots__ = ("sl", "mask", "n", "ids", "full", "_idx", "_blend")

    def __init__(self, sl, ids: np.ndarray, mask: np.ndarray | None = None, n: int = -1) -> None:
        self.sl, self.mask, self.ids = sl, mask, ids
        if n < 0:
            if mask is not None:
                n = int(np.count_nonzero(mask))
            elif isinstance(sl, slice):
                n = sl.stop - sl.start
            else:
                n = len(sl)
        self.n = n
        self.full = mask is None and isinstance(sl, slice)
        self._idx = None
        self._blend = None

    @property
    def idx(self) -> np.ndarray:
        """The active lanes as an index array."""
        idx = self._idx
        if idx is None:
            sl = self.sl
            if not isinstance(sl, slice):
                idx = sl
            elif self.mask is None:
                idx = self.ids[sl]
            else:
                idx = np.flatnonzero(self.mask) + sl.start
            self._idx = idx
        return idx

    def blend(self, itemsize: int) -> tuple[np.ndarray, np.ndarray]:
        """``(mask, ~mask)`` as all-ones/all-zeros integers of ``itemsize`` bytes."""
        cache = self._blend
        if cache is None:
            cache = self._blend = {}
        pair = cache.get(itemsize)
        if pair is None:
            dt = _BITS[itemsize]
            ones = np.negative(self.mask.view(np.int8), dtype=_SIGNED[itemsize]).view(dt)
            pair = cache[itemsize] = (ones, ~ones)
        return pair

    @property
    def sel(self):
        """The active lanes as a slice (when all of one are active) or an index array."""
        return self.sl if self.mask is None else self.idx

    def restrict(self, keep: np.ndarray) -> Lanes:
        """The lanes of this set where ``keep`` (a boolean array over ``sl``) holds."""
        sl = self.sl
        if not isinstance(sl, slice):
            return Lanes(sl[keep], self.ids)
        mask = keep if self.mask is None else keep & self.mask
        n = int(np.count_nonzero(mask))
        width = sl.stop - sl.start
        if n * 4 >= width:
            return Lanes(sl, self.ids, mask, n)
        return Lanes(np.flatnonzero(mask) + sl.start, self.ids, None, n)


_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
         8: np.dtype(np.uint64)}
_SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
           8: np.dtype(np.int64)}


def make_writer(array: np.ndarray):
    """``write(lanes, value)``: store ``value`` (computed over ``lanes.sl``) into active lanes.

    With a lane mask the new bits are blended in without branches
    (``old & ~m | new & m``): irregular masks make ``np.copyto(where=)`` slow.
    """
    setitem = array.__setitem__
    dtype = array.dtype
    size = dtype.itemsize
    bits = array.view(_BITS[size])
    bits_dtype = _BITS[size]
    and_, or_ = np.bitwise_and, np.bitwise_or

    def write(lanes: Lanes, value) -> None:
        mask = lanes.mask
        if mask is None:
            setitem(lanes.sl, value)
            return
        value = np.asarray(value)
        if value.dtype != dtype:
            value = value.astype(dtype)
        ones, zeros = lanes.blend(size)
        target = bits[lanes.sl]
        and_(target, zeros, out=target)
        or_(target, and_(value.view(bits_dtype), ones), out=target)

    return write
