"""Kernel arguments as a user gives them: arrays with or without data, scalars, structs, views.

Every argument of a :class:`~kerncast.core.Launch` is one of these:

- :class:`Array`: a buffer; real data (a NumPy array) or a description (dtype, shape
  and a :class:`~kerncast.core.Generator`, zeros when none is named);
- :class:`Scalar`: a number or a ``bool``, of a NumPy dtype or the parameter's own type;
- :class:`Struct`: a struct passed by value, as the bytes of its C layout;
- :class:`View`: a pointer into another array argument, ``offset`` elements in.

:func:`as_argument` turns what a user passes (NumPy arrays and scalars, Python numbers,
bytes, structured scalars) into them. :class:`BufferOffset` is a view with its array
materialised: what the emulator and the measurement backends receive for it. An emulation
may receive a generated array as a :class:`~kerncast.core.Chunked` one, made as its
accesses reach it.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kerncast._errors import InputError
from kerncast.core._chunked import CHUNKED_BYTES, Chunked
from kerncast.core._generators import Generator, parse_generator

__all__ = ["ARG_DTYPES", "Argument", "Array", "BufferOffset", "Scalar", "Struct", "View",
           "as_argument", "as_dtype"]

ARG_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
              "float16", "float32", "float64")


def as_dtype(value: Any, what: str = "dtype") -> np.dtype:
    """A NumPy dtype of a kernel argument, or an error naming the ones allowed."""
    if isinstance(value, np.dtype) and value.kind == "V":
        return value
    if isinstance(value, str) and value.strip() not in ARG_DTYPES:
        dtype = None  # only the names listed: NumPy reads many strings as other types
    else:
        try:
            dtype = np.dtype(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError):
            dtype = None
    if dtype is None or dtype.name not in ARG_DTYPES:
        raise InputError(f"{what} {value!r} is not a kernel argument type; use one of "
                         f"{', '.join(ARG_DTYPES)}")
    return dtype


class Source(Protocol):
    """Anything that draws an array's values: a :class:`Generator`, or the corpus's inputs."""

    def draw(self, rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        ...


#: arrays of at least this many bytes are mapped from the operating system's zero pages
LAZY_BYTES = 1 << 20


def lazy_zeros(size: int, dtype: np.dtype) -> np.ndarray:
    """A writable array of zeros whose pages exist only once touched. ``np.zeros`` gives
    that only while the C library maps large blocks afresh; after a large block is freed
    it serves the next from its heap and clears every byte first."""
    dtype = np.dtype(dtype)
    nbytes = int(size) * dtype.itemsize
    if nbytes < LAZY_BYTES:
        return np.zeros(size, dtype)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype)


@dataclass(frozen=True, eq=False)
class Array:
    """A buffer argument: ``data``, or ``dtype`` and ``shape`` filled by ``generator``.

    ``intent`` (``in``, ``out``, ``inout``) is optional; an output needs no values.
    """

    dtype: np.dtype
    shape: tuple[int, ...]
    generator: Source | None = None
    data: np.ndarray | None = None
    intent: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", as_dtype(self.dtype, "array dtype"))
        shape = (self.shape,) if isinstance(self.shape, (int, np.integer)) else self.shape
        try:
            shape = tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            raise InputError(f"array shape {self.shape!r} is not a list of integers") from None
        if not shape or any(s < 0 for s in shape):
            raise InputError(f"array shape {shape} needs at least one dimension, none negative")
        object.__setattr__(self, "shape", shape)
        if isinstance(self.generator, str):
            object.__setattr__(self, "generator", parse_generator(self.generator))
        if self.intent not in (None, "in", "out", "inout"):
            raise InputError(f"array intent {self.intent!r} is not in, out or inout")

    @classmethod
    def of(cls, data: np.ndarray, intent: str | None = None) -> Array:
        """An argument holding ``data`` (real values, used as they are)."""
        data = np.asarray(data)
        if data.ndim == 0:
            raise InputError("a 0-d array is a scalar; pass it as a number")
        return cls(data.dtype, data.shape, data=data, intent=intent)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def values(self, rng: np.random.Generator, generate: bool = True,
               data: bool = True, chunked: bool = False) -> np.ndarray | Chunked:
        """The array to run with: the data (read-only), generated values, or zeros
        (lazily allocated: only the pages touched are materialised); zeros in place of
        the data too where ``data`` is false. With ``chunked``, generated values of at
        least :data:`~kerncast.core._chunked.CHUNKED_BYTES` come as a :class:`Chunked`
        array where the generator can make them a piece at a time (an emulation reads
        only the pieces its blocks reach)."""
        if self.data is not None and data:
            view = np.ascontiguousarray(self.data).reshape(-1).view()
            view.flags.writeable = False
            return view
        if generate and self.generator is not None and self.intent != "out":
            draw_chunked = getattr(self.generator, "draw_chunked", None)
            if chunked and draw_chunked is not None and self.nbytes >= CHUNKED_BYTES:
                made = draw_chunked(rng, self.dtype, self.shape)
                return made if isinstance(made, Chunked) else made.reshape(-1)
            return self.generator.draw(rng, self.dtype, self.shape).reshape(-1)
        return lazy_zeros(self.size, self.dtype)

    def describe(self) -> str:
        gen = "data" if self.data is not None else str(self.generator or "zeros")
        return f"{self.dtype.name}[{'x'.join(map(str, self.shape))}] {gen}"


@dataclass(frozen=True)
class Scalar:
    """A scalar argument; ``dtype`` None takes the kernel parameter's own type."""

    value: bool | int | float
    dtype: np.dtype | None = None

    def __post_init__(self) -> None:
        if self.dtype is not None:
            dtype = as_dtype(self.dtype, "scalar dtype")
            object.__setattr__(self, "dtype", dtype)
            if dtype.kind in "iu":
                info = np.iinfo(dtype)
                if not isinstance(self.value, (int, np.integer, float)) or \
                        float(self.value) != int(self.value):
                    raise InputError(f"scalar {self.value!r} is not a whole number for "
                                     f"{dtype.name}")
                if not info.min <= int(self.value) <= info.max:
                    raise InputError(f"scalar {self.value!r} does not fit {dtype.name} "
                                     f"({info.min} to {info.max})")
            try:
                dtype.type(self.value)
            except (TypeError, ValueError, OverflowError):
                raise InputError(f"scalar {self.value!r} is not a {dtype.name}") from None

    def values(self) -> Any:
        return self.value if self.dtype is None else self.dtype.type(self.value)

    def describe(self) -> str:
        return f"{self.dtype.name if self.dtype is not None else 'scalar'} {self.value!r}"


@dataclass(frozen=True)
class Struct:
    """A struct passed by value: the bytes of its C layout."""

    raw: bytes

    @classmethod
    def of(cls, value: Any) -> Struct:
        """From a NumPy structured scalar (``np.void``), a 0-d structured array or bytes."""
        if isinstance(value, (bytes, bytearray, memoryview)):
            return cls(bytes(value))
        if isinstance(value, (np.void, np.ndarray)) and np.asarray(value).dtype.kind == "V":
            return cls(np.asarray(value).tobytes())
        raise InputError(f"cannot pass {type(value).__name__} as a struct; give a NumPy "
                         "structured scalar (with align=True for the C layout) or its bytes")

    @classmethod
    def pack(cls, fields: list[tuple[str, str, Any]]) -> Struct:
        """The C layout (natural alignment) of ``[(name, dtype, value), ...]``."""
        try:
            dtype = np.dtype([(n, as_dtype(t, f"struct field {n}")) for n, t, _ in fields],
                             align=True)
        except (TypeError, ValueError) as exc:
            raise InputError(f"cannot lay out the struct ({exc})") from None
        value = np.zeros((), dtype)
        for name, _, v in fields:
            value[name] = v
        return cls(value.tobytes())

    def values(self) -> bytes:
        return self.raw

    def describe(self) -> str:
        return f"struct of {len(self.raw)} bytes"


@dataclass(frozen=True, eq=False)
class View:
    """A pointer ``offset`` elements into the array argument ``of`` (its name, index, or
    the NumPy array passed for it): ``J + cols + 1`` in C is ``View("J", cols + 1)``."""

    of: str | int | np.ndarray
    offset: int = 0

    def describe(self) -> str:
        target = "an array" if isinstance(self.of, np.ndarray) else repr(self.of)
        return f"view of {target} at +{self.offset}"


@dataclass(frozen=True, eq=False)
class BufferOffset:
    """A materialised view: a pointer ``byte_offset`` bytes into ``array``."""

    array: np.ndarray | Chunked
    byte_offset: int


Argument = Array | Scalar | Struct | View


def as_argument(value: Any) -> Argument:
    """What a user passes, as an :data:`Argument`."""
    if isinstance(value, (Array, Scalar, Struct, View)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Struct.of(value)
    if isinstance(value, (np.void, np.ndarray)) and value.dtype.kind == "V":
        return Struct.of(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return Scalar(value[()].item(), value.dtype)
        return Array.of(value)
    if isinstance(value, np.generic):
        return Scalar(value.item(), value.dtype)
    if isinstance(value, (bool, int, float)):
        return Scalar(value)
    if isinstance(value, Generator):
        raise InputError("a generator alone is no argument; describe the array: "
                         "kerncast.Array('float32', n, 'uniform(0, 1)')")
    raise InputError(f"cannot pass a {type(value).__name__} to a kernel; give a NumPy array, "
                     "a number, a kerncast.Array description, a kerncast.View or a struct")
