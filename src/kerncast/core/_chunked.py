"""Arrays whose values are made a piece at a time, as a reader reaches them.

A prediction emulates a few blocks of a launch; when its trace depends on the values of
its arrays, only the parts of them those blocks read need values. A :class:`Chunked`
array describes ``size`` values of ``dtype`` made ``per`` at a time by a function of
the piece's index, so that the emulator asks for the pieces its accesses reach
(:class:`kerncast.emu.GlobalMemory`) and the rest is never made. Everything else (a run
on a GPU, a reference check) takes :meth:`Chunked.materialise`: the same values, whole.

The pieces of a seeded generator stay the values a whole draw gives when the draw
consumes a fixed number of the bit generator's outputs per value: :func:`advanced` starts
a piece's draws where the whole draw would have reached them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np

__all__ = ["CHUNKED_BYTES", "Chunked", "advanced", "chunked_together", "stream_words"]

#: arrays of at least this many bytes are handed to an emulation as pieces; smaller ones
#: are made whole (a piece's bookkeeping costs more than the values)
CHUNKED_BYTES = 16 << 20
#: pieces a chunked array (or a group made together) keeps made, most recent last
KEPT_PIECES = 4


class Chunked:
    """``size`` values of ``dtype``; ``piece(k)`` makes values ``k * per`` up to
    ``min((k + 1) * per, size)`` (as an array of that length, in any numeric dtype: it is
    converted). The last few pieces made are kept."""

    __slots__ = ("dtype", "size", "per", "_piece", "_kept")

    def __init__(self, dtype, size: int, per: int, piece: Callable[[int], np.ndarray]) -> None:
        if per < 1 or size < 0:
            raise ValueError(f"a chunked array needs per >= 1 and size >= 0, got {per}, {size}")
        self.dtype, self.size, self.per = np.dtype(dtype), int(size), int(per)
        self._piece = piece
        self._kept: OrderedDict[int, np.ndarray] = OrderedDict()

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.size,)

    @property
    def ndim(self) -> int:
        return 1

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def pieces(self) -> int:
        return -(-self.size // self.per)

    def piece(self, k: int) -> np.ndarray:
        """Values of piece ``k`` (kept among the last :data:`KEPT_PIECES` made)."""
        found = self._kept.get(k)
        if found is not None:
            self._kept.move_to_end(k)
            return found
        want = min(self.per, self.size - k * self.per)
        if not 0 <= k < self.pieces:
            raise IndexError(f"piece {k} of a chunked array of {self.pieces} pieces")
        made = np.ascontiguousarray(self._piece(k), dtype=self.dtype).reshape(-1)
        if made.size != want:
            raise ValueError(f"piece {k} of a chunked array made {made.size} values, not {want}")
        self._kept[k] = made
        while len(self._kept) > KEPT_PIECES:
            self._kept.popitem(last=False)
        return made

    def values(self, start: int, stop: int) -> np.ndarray:
        """Values ``start`` up to ``stop`` (clipped to the array)."""
        start, stop = max(0, int(start)), min(self.size, int(stop))
        if stop <= start:
            return np.empty(0, self.dtype)
        first, last = start // self.per, (stop - 1) // self.per
        parts = [self.piece(k) for k in range(first, last + 1)]
        joined = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return joined[start - first * self.per:stop - first * self.per]

    def byte_range(self, lo: int, hi: int) -> np.ndarray:
        """Bytes ``lo`` up to ``hi`` of the values (zeros past their end), as uint8."""
        item = self.dtype.itemsize
        out = np.zeros(max(0, hi - lo), np.uint8)
        first, last = lo // item, min(self.size, -(-hi // item))
        if last > first:
            raw = self.values(first, last).view(np.uint8)
            skip = lo - first * item
            take = min(len(out), raw.size - skip)
            out[:take] = raw[skip:skip + take]
        return out

    def __getitem__(self, span: slice) -> np.ndarray:
        """Bytes of a ``lo:hi`` slice (what a copy-on-touch store reads from its source)."""
        if not isinstance(span, slice) or span.step not in (None, 1):
            raise TypeError("a chunked array is read by byte slices lo:hi")
        return self.byte_range(span.start or 0, self.nbytes if span.stop is None else span.stop)

    def materialise(self) -> np.ndarray:
        """Every value, as one array."""
        out = np.empty(self.size, self.dtype)
        for k in range(self.pieces):
            out[k * self.per:(k + 1) * self.per] = self._piece(k)
        return out

    def __repr__(self) -> str:
        return f"Chunked({self.dtype.name}[{self.size}], {self.pieces} pieces of {self.per})"


def chunked_together(arrays: dict[str, tuple[np.dtype, int, int]],
                     make: Callable[[int], dict[str, np.ndarray]]) -> dict[str, Chunked]:
    """Chunked arrays made by one function: ``make(k)`` gives piece ``k`` of every array
    named in ``arrays`` (name: (dtype, size, values per piece of that array)), and the
    last :data:`KEPT_PIECES` of its results are kept for all of them."""
    kept: OrderedDict[int, dict[str, np.ndarray]] = OrderedDict()

    def made(k: int) -> dict[str, np.ndarray]:
        found = kept.get(k)
        if found is None:
            found = kept[k] = make(k)
            while len(kept) > KEPT_PIECES:
                kept.popitem(last=False)
        else:
            kept.move_to_end(k)
        return found

    def part(name: str) -> Callable[[int], np.ndarray]:
        return lambda k: made(k)[name]

    return {name: Chunked(dtype, size, count, part(name))
            for name, (dtype, size, count) in arrays.items()}


def advanced(rng: np.random.Generator, draws: int) -> np.random.Generator:
    """A generator in the state ``rng`` reaches after ``draws`` more 64-bit outputs of its
    bit generator (``rng`` itself is left as it is), its buffered 32-bit half kept: the
    values a draw of fixed consumption makes from there are those a longer draw from
    ``rng`` makes at that point. The bit generator must support ``advance``: PCG64, as
    ``numpy.random.default_rng`` makes."""
    source = rng.bit_generator
    if not isinstance(source, np.random.PCG64):
        raise TypeError(f"{type(source).__name__} cannot be advanced; use default_rng")
    state = source.state
    bits = np.random.PCG64()
    bits.state = state
    bits.advance(int(draws))
    bits.state = {**bits.state, "has_uint32": state["has_uint32"], "uinteger": state["uinteger"]}
    return np.random.Generator(bits)


def stream_words(rng: np.random.Generator, first: int, count: int) -> np.ndarray:
    """``count`` 32-bit words of ``rng``'s bit generator stream from word ``first`` on (a
    64-bit output gives two, its low half first, as ``random_raw(...).view(np.uint32)``
    and an unbuffered draw of 32-bit integers read them), ``rng`` left as it is."""
    raw = advanced(rng, first // 2).bit_generator.random_raw((first % 2 + count + 1) // 2)
    return raw.view(np.uint32)[first % 2:first % 2 + count]
