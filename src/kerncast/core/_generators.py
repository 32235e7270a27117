"""Named generators of array contents: how an argument described without data gets its values.

A generator is written as a call, ``uniform(0, 1)``, ``randint(0, 100)``,
``npy(graph_row_ptr.npy)``, in the CLI, in launch files and in the Python API; every
name is a registered :class:`GeneratorKind`, and :func:`register_generator` adds one.
Values are drawn from the launch's seeded generator, so the same launch always sees the
same data.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerncast._errors import InputError
from kerncast.core._chunked import Chunked, advanced
from kerncast.core._permute import permuted

__all__ = ["GENERATORS", "Generator", "GeneratorKind", "parse_generator", "register_generator"]

Draw = Callable[[np.random.Generator, np.dtype, tuple[int, ...], tuple], np.ndarray]
#: how a generator makes its values a piece at a time (None where it cannot, for that dtype)
ChunkedDraw = Callable[[np.random.Generator, np.dtype, tuple[int, ...], tuple], Chunked | None]
#: values per piece of a generator's chunked values
PIECE = 1 << 20


@dataclass(frozen=True)
class GeneratorKind:
    """One registered generator: its name, the parameters it takes and how it draws;
    ``chunked``, where given, makes the same values a piece at a time."""

    name: str
    params: tuple[str, ...]
    defaults: tuple
    draw: Draw
    help: str
    chunked: ChunkedDraw | None = None

    def bind(self, args: tuple) -> tuple:
        if len(args) > len(self.params):
            raise InputError(f"generator {self.name}({', '.join(self.params)}) takes at most "
                             f"{len(self.params)} values, got {len(args)}")
        missing = len(self.params) - len(self.defaults)
        if len(args) < missing:
            raise InputError(f"generator {self.name} needs {', '.join(self.params[:missing])}; "
                             f"write e.g. {self.name}({', '.join(self.params)})")
        return tuple(args) + self.defaults[len(args) - missing:]


GENERATORS: dict[str, GeneratorKind] = {}


def register_generator(name: str, params: tuple[str, ...], draw: Draw, *,
                       defaults: tuple = (), help: str = "",  # noqa: A002
                       chunked: ChunkedDraw | None = None) -> None:
    """Add a generator usable by name wherever an array is described; ``chunked``, where
    given, makes the values ``draw`` makes, a piece at a time (see
    :class:`~kerncast.core.Chunked`)."""
    GENERATORS[name] = GeneratorKind(name, params, defaults, draw, help, chunked)


@dataclass(frozen=True)
class Generator:
    """A generator with its values bound: ``Generator("uniform", (0.0, 1.0))``."""

    name: str
    args: tuple = ()

    def __post_init__(self) -> None:
        kind = GENERATORS.get(self.name)
        if kind is None:
            raise InputError(f"unknown generator {self.name!r}; the generators are "
                             f"{', '.join(sorted(GENERATORS))} (e.g. uniform(0, 1))")
        object.__setattr__(self, "args", kind.bind(tuple(self.args)))

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"

    def draw(self, rng: np.random.Generator, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """Values of ``dtype`` and ``shape`` (an ``npy`` file must match both)."""
        out = GENERATORS[self.name].draw(rng, np.dtype(dtype), tuple(shape), self.args)
        return np.ascontiguousarray(out, dtype=dtype).reshape(shape)

    def draw_chunked(self, rng: np.random.Generator, dtype: np.dtype,
                     shape: tuple[int, ...]) -> Chunked | np.ndarray:
        """The values :meth:`draw` makes, as a :class:`~kerncast.core.Chunked` array
        where the generator makes them a piece at a time, else drawn whole (flat)."""
        kind = GENERATORS[self.name]
        made = kind.chunked(rng, np.dtype(dtype), tuple(shape), self.args) \
            if kind.chunked is not None else None
        return made if made is not None else self.draw(rng, dtype, shape).reshape(-1)


_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*$", re.S)


def _literal(text: str, whole: str):
    text = text.strip()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        if re.fullmatch(r"[\w./~+-]+", text):  # a bare path or word
            return text
        raise InputError(f"cannot read {text!r} in the generator {whole!r}; give numbers "
                         "or a file name, e.g. uniform(0, 1) or npy(x.npy)") from None


def parse_generator(text: str | Generator) -> Generator:
    """``uniform(0, 1)`` (or a bare name such as ``zeros``) as a :class:`Generator`."""
    if isinstance(text, Generator):
        return text
    match = _CALL.match(str(text))
    if match is None:
        raise InputError(f"cannot read the generator {text!r}; write a name with its values "
                         f"in parentheses, e.g. uniform(0, 1); the generators are "
                         f"{', '.join(sorted(GENERATORS))}")
    name, inner = match.group(1), match.group(2)
    args = () if not inner or not inner.strip() else tuple(
        _literal(part, str(text)) for part in inner.split(","))
    return Generator(name, args)


def _number(value, name: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"generator {name}: {what} must be a number, got {value!r}")
    return value


def _full(value: float) -> Draw:
    return lambda rng, dtype, shape, args: np.full(shape, value, dtype)


def _uniform(rng, dtype, shape, args):
    low, high = (_number(a, "uniform", "the bounds") for a in args)
    if dtype.kind in "iub":
        return rng.integers(int(low), int(high), size=shape, endpoint=False).astype(dtype)
    return rng.uniform(low, high, size=shape)


def _uniform_chunked(rng, dtype, shape, args) -> Chunked | None:
    """Floats as :func:`_uniform` draws them (one 64-bit output each), a piece at a time."""
    if dtype.kind in "iub":
        return None  # integers in a range not a power of two take a varying count of draws
    low, high = (_number(a, "uniform", "the bounds") for a in args)
    size, start = int(np.prod(shape)), advanced(rng, 0)  # the state as the draw finds it
    return Chunked(dtype, size, PIECE, lambda k: advanced(start, k * PIECE).uniform(
        low, high, size=min(PIECE, size - k * PIECE)))


def _normal(rng, dtype, shape, args):
    mean, std = (_number(a, "normal", "mean and std") for a in args)
    return rng.normal(mean, std, size=shape)


def _randint(rng, dtype, shape, args):
    low, high = (int(_number(a, "randint", "the bounds")) for a in args)
    if high <= low:
        raise InputError(f"generator randint({low}, {high}): the upper bound (exclusive) "
                         "must exceed the lower")
    return rng.integers(low, high, size=shape).astype(dtype)


def _permutation(rng, dtype, shape, args):
    return permuted(rng, np.arange(int(np.prod(shape)))).astype(dtype)


def _arange(rng, dtype, shape, args):
    start, step = (_number(a, "arange", "start and step") for a in args)
    return (start + step * np.arange(int(np.prod(shape)))).astype(dtype)


def _arange_chunked(rng, dtype, shape, args) -> Chunked:
    start, step = (_number(a, "arange", "start and step") for a in args)
    size = int(np.prod(shape))
    return Chunked(dtype, size, PIECE, lambda k: start + step * np.arange(
        k * PIECE, min(size, (k + 1) * PIECE)))


def _full_chunked(value: float | None) -> ChunkedDraw:
    return lambda rng, dtype, shape, args: Chunked(
        dtype, int(np.prod(shape)), PIECE,
        lambda k: np.full(min(PIECE, int(np.prod(shape)) - k * PIECE), args[0]
                          if value is None else value, dtype))


def _npy(rng, dtype, shape, args):
    path = Path(str(args[0])).expanduser()
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"generator npy({path}): cannot read the file ({exc}); give a .npy "
                         "file written with numpy.save") from None
    if data.size != int(np.prod(shape)):
        raise InputError(f"generator npy({path}): the file holds {data.size} elements but the "
                         f"argument is described with shape {shape}; describe it as the file "
                         "is, or leave the shape out")
    if data.dtype != dtype:
        raise InputError(f"generator npy({path}): the file holds {data.dtype} but the argument "
                         f"is {dtype}; describe it as {data.dtype} or convert the file")
    return data


register_generator("zeros", (), _full(0), help="all zero", chunked=_full_chunked(0))
register_generator("ones", (), _full(1), help="all one", chunked=_full_chunked(1))
register_generator("full", ("value",), lambda rng, dtype, shape, args: np.full(shape, args[0]),
                   help="every element the value", chunked=_full_chunked(None))
register_generator("uniform", ("low", "high"), _uniform, defaults=(0.0, 1.0),
                   help="uniform in [low, high)", chunked=_uniform_chunked)
register_generator("normal", ("mean", "std"), _normal, defaults=(0.0, 1.0),
                   help="normally distributed")
register_generator("randint", ("low", "high"), _randint, help="integers in [low, high)")
register_generator("permutation", (), _permutation, help="a random permutation of 0..n-1")
register_generator("arange", ("start", "step"), _arange, defaults=(0, 1),
                   help="start, start+step, ...", chunked=_arange_chunked)
register_generator("npy", ("path",), _npy, help="the contents of a .npy file")


def npy_header(path: str | Path) -> tuple[np.dtype, tuple[int, ...]]:
    """The dtype and shape a ``.npy`` file holds, without reading its data."""
    try:
        data = np.load(Path(path).expanduser(), mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path} as a .npy file ({exc})") from None
    return data.dtype, tuple(data.shape)
