"""A launch described in text: ``--arg`` values on the command line, and launch files (TOML).

One argument, on the command line (``--arg NAME=SPEC``) or as one string of a launch
file's ``args`` list:

==============================  ==============================================
``int32:1048576``               a scalar of a type (``bool:true`` too)
``float32[1048576]``            an array of zeros
``float32[1024,1024]:uniform``  an array drawn by a generator (``uniform(0, 1)``,
                                ``normal``, ``randint(0, 9)``, ``permutation``, ...)
``int32[4097]:npy(rows.npy)``   an array read from a ``.npy`` file
``npy:rows.npy``                the same, dtype and shape taken from the file
``view:J+129``                  a pointer 129 elements into the array ``J``
``struct:float32=2,int32=7``    a struct by value, fields in order (C layout)
==============================  ==============================================

A launch file names the source and the launch; paths in it are relative to the file::

    kernel = "saxpy"
    source = "saxpy.cu"
    grid = [4096]
    block = [256]
    args = ["n=int32:1048576", "a=float32:2", "x=float32[1048576]:uniform(-1, 1)",
            "y=float32[1048576]"]

Kernel Tuner's way works too: ``problem_size``, ``[params]`` (the configuration),
``[tune_params]`` (the values a sweep tries), ``restrictions``, ``grid_div_x``...,
``block_size_names``, instead of ``grid`` and ``block``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kerncast._errors import InputError
from kerncast.core._args import Argument, Array, Scalar, Struct, View, as_dtype
from kerncast.core._expr import evaluate
from kerncast.core._generators import Generator, npy_header, parse_generator
from kerncast.core._kernel import Kernel
from kerncast.core._launch import Launch
from kerncast.core._tuning import Tuning

__all__ = ["LaunchFile", "build_launch", "load_launch_file", "parse_arg", "parse_args",
           "user_launch"]

_ARRAY = re.compile(r"^\s*(\w+)\s*\[([^\]]*)\]\s*(?::(.*))?$", re.S)
_NAMED = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)(.*)$", re.S)
_VIEW = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\+\s*(.+))?$")
_KEYS = {"kernel", "source", "language", "compiler", "options", "defines", "include_dirs",
         "grid", "block", "dynamic_shared", "seed", "args", "problem_size", "params",
         "tune_params", "restrictions", "grid_div_x", "grid_div_y", "grid_div_z",
         "block_size_names", "answer"}


def _int(text: str, env: Mapping[str, Any], what: str) -> int:
    text = str(text).strip()
    try:
        value = evaluate(text, dict(env)) if not text.lstrip("-").isdigit() else int(text)
    except InputError as exc:
        raise InputError(f"{what} {text!r}: {exc}") from None
    if isinstance(value, float) and not value.is_integer():
        raise InputError(f"{what} {text!r} is not a whole number")
    return int(value)


def _scalar(type_name: str, text: str, spec: str) -> Scalar:
    dtype = as_dtype(type_name, f"argument {spec!r}: type")
    text = text.strip()
    if dtype.kind == "b":
        if text.lower() not in ("true", "false", "1", "0"):
            raise InputError(f"argument {spec!r}: a bool is true or false, not {text!r}")
        return Scalar(text.lower() in ("true", "1"), dtype)
    try:
        value: int | float = float(text) if dtype.kind == "f" else int(text, 0)
    except ValueError:
        raise InputError(f"argument {spec!r}: {text!r} is not a {dtype.name}") from None
    return Scalar(value, dtype)


def _struct(text: str, spec: str) -> Struct:
    fields = []
    for i, part in enumerate(p for p in text.split(",") if p.strip()):
        type_name, sep, value = part.partition("=")
        if not sep:
            raise InputError(f"argument {spec!r}: struct field {part!r} is not TYPE=VALUE, "
                             "e.g. struct:float32=2.5,int32=7")
        fields.append((f"f{i}", type_name.strip(), _scalar(type_name, value, spec).value))
    if not fields:
        raise InputError(f"argument {spec!r}: a struct needs at least one TYPE=VALUE field")
    return Struct.pack(fields)


def _npy_array(path: Path) -> Array:
    dtype, shape = npy_header(path)
    return Array(dtype, shape or (1,), generator=Generator("npy", (str(path),)))


def _resolve(generator: Generator, base: Path | None, spec: str) -> Generator:
    if generator.name != "npy":
        return generator
    path = Path(str(generator.args[0])).expanduser()
    if base is not None and not path.is_absolute():
        path = base / path
    if not path.is_file():
        raise InputError(f"argument {spec!r}: no such .npy file: {path}; paths are relative to "
                         "the launch file")
    return Generator("npy", (str(path),))


def parse_arg(spec: str, env: Mapping[str, Any] | None = None,
              base: Path | None = None) -> tuple[str | None, Argument]:
    """One ``[NAME=]SPEC`` (see the module) as its name (None where not given) and argument;
    shapes may be expressions over ``env`` (parameters and earlier scalars); ``base`` is
    where relative ``.npy`` paths start."""
    env = env or {}
    name = None
    match = _NAMED.match(spec)
    if match and not spec.strip().startswith(("view:", "struct:", "npy:")):
        name, body = match.group(1), match.group(2).strip()
    else:
        body = spec.strip()
    kind, sep, rest = body.partition(":")
    if body.startswith("view:"):
        view = _VIEW.match(rest)
        if view is None:
            raise InputError(f"argument {spec!r}: write a view as view:ARRAY+OFFSET, e.g. "
                             "view:J+129")
        offset = _int(view.group(2), env, f"argument {spec!r}: offset") if view.group(2) else 0
        return name, View(view.group(1), offset)
    if body.startswith("struct:"):
        return name, _struct(rest, spec)
    if body.startswith("npy:"):
        path = Path(rest.strip()).expanduser()
        return name, _npy_array(base / path if base and not path.is_absolute() else path)
    array = _ARRAY.match(body)
    if array is not None:
        dtype = as_dtype(array.group(1), f"argument {spec!r}: type")
        shape = tuple(_int(s, env, f"argument {spec!r}: shape") for s in
                      array.group(2).split(",") if s.strip())
        gen = array.group(3)
        generator = _resolve(parse_generator(gen), base, spec) if gen and gen.strip() else None
        return name, Array(dtype, shape, generator=generator)
    if sep:
        return name, _scalar(kind, rest, spec)
    raise InputError(f"cannot read the argument {spec!r}; write TYPE:VALUE for a scalar "
                     "(int32:1024), TYPE[SHAPE][:GENERATOR] for an array "
                     "(float32[1024]:uniform(0, 1)), npy:FILE, view:ARRAY+OFFSET or "
                     "struct:TYPE=VALUE,...")


def parse_args(specs: list[str], env: Mapping[str, Any] | None = None,
               base: Path | None = None) -> tuple[tuple[Argument, ...], tuple[str, ...]]:
    """Arguments and their names (``argN`` where unnamed); a scalar's name can stand in
    the shapes of later arguments."""
    scope = dict(env or {})
    args, names = [], []
    for i, spec in enumerate(specs):
        if not isinstance(spec, str):
            raise InputError(f"argument {i} must be a string such as 'n=int32:1024', got "
                             f"{spec!r}")
        name, arg = parse_arg(spec, scope, base)
        name = name or f"arg{i}"
        if name in names:
            raise InputError(f"two arguments are named {name!r}; name each once")
        if isinstance(arg, Scalar):
            scope[name] = arg.value
        args.append(arg)
        names.append(name)
    return tuple(args), tuple(names)


@dataclass(frozen=True)
class LaunchFile:
    """What a launch file holds: the kernel, the tuning and the arguments as written."""

    path: Path
    kernel: Kernel
    tuning: Tuning
    raw: Mapping[str, Any] = field(default_factory=dict)

    def configs(self) -> list[dict[str, Any]]:
        """The configurations a sweep predicts: every combination of ``[tune_params]`` the
        restrictions allow (with ``[params]`` for the parameters not tuned), or the file's
        one configuration."""
        fixed = dict(self.raw.get("params", {}))
        if not self.tuning.tune_params:
            return [fixed]
        return [{**fixed, **c} for c in self.tuning.configs()]

    def instance(self, params: Mapping[str, Any] | None = None) -> tuple[Kernel, Launch]:
        """The same as :meth:`launch`."""
        return self.launch(params)

    def launch(self, params: Mapping[str, Any] | None = None) -> tuple[Kernel, Launch]:
        """The kernel as compiled for ``params`` (the file's ``[params]`` where omitted) and
        its launch."""
        return build_launch(self.kernel, self.tuning, self.raw, {**self.raw.get("params", {}),
                                                                **(params or {})},
                            base=self.path.parent, where=str(self.path))


def build_launch(kernel: Kernel, tuning: Tuning, raw: Mapping[str, Any],
                 params: Mapping[str, Any], base: Path | None = None,
                 where: str = "the launch") -> tuple[Kernel, Launch]:
    """The kernel and launch of ``params`` from a launch file's entries ``raw``: the grid
    and block given, or Kernel Tuner's from the problem size; the arguments parsed with
    the parameters in scope."""
    specs = raw.get("args", [])
    if not isinstance(specs, list):
        raise InputError(f"{where}: args must be a list of strings such as 'n=int32:1024'")
    tuning.check(params)
    args, names = parse_args(specs, params, base)
    grid = [_int(g, params, f"{where}: grid") for g in _dims(raw["grid"])] if "grid" in raw \
        else None
    block = [_int(b, params, f"{where}: block") for b in _dims(raw["block"])] \
        if "block" in raw else None
    shared = _int(raw.get("dynamic_shared", 0), params, f"{where}: dynamic_shared")
    return user_launch(kernel, tuning, params, args, names=names, grid=grid, block=block,
                       dynamic_shared=shared, seed=int(raw.get("seed", 0)))


def user_launch(kernel: Kernel, tuning: Tuning, params: Mapping[str, Any], args: Any, *,
                names: tuple[str, ...] = (), grid: Any = None, block: Any = None,
                dynamic_shared: int = 0, seed: int = 0,
                constants: Mapping[str, Any] | None = None) -> tuple[Kernel, Launch]:
    """The kernel as compiled for ``params`` and its launch: ``grid`` and ``block`` where
    given, else Kernel Tuner's from the tuning's problem size (see
    :class:`~kerncast.core.Tuning`); ``args`` a list of values or a name-to-value mapping;
    ``constants`` the values of ``__constant__`` variables by name.

    Raises
    ------
    InputError
        Where a restriction excludes ``params``, or the launch or an argument is malformed.
    """
    tuning.check(params)
    if isinstance(args, Mapping):
        names, args = tuple(args), tuple(args.values())
    launch = Launch(grid if grid is not None else tuning.grid(params),
                    block if block is not None else tuning.block(params), dynamic_shared,
                    args=tuple(args or ()), names=tuple(names), params=params, seed=seed,
                    constants=constants or {})
    if tuning.tune_params or params or tuning.problem_size:
        kernel = tuning.kernel(kernel, params, launch.grid, launch.block)
    return kernel, launch


def _dims(value: Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def load_launch_file(path: str | Path) -> LaunchFile:
    """Read and check a launch file (see the module)."""
    path = Path(path).expanduser()
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"no such launch file: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the launch file {path} ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path} is not valid TOML ({exc}); see 'kerncast new' for a "
                         "commented template") from None
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise InputError(f"{path}: unknown key {unknown[0]!r}; a launch file takes "
                         f"{', '.join(sorted(_KEYS))}")
    for key in ("kernel", "source"):
        if not isinstance(raw.get(key), str):
            raise InputError(f"{path}: '{key}' must name the kernel's entry and its source "
                             'file, e.g. kernel = "saxpy" and source = "saxpy.cu"')
    if "grid" in raw and "problem_size" in raw:
        raise InputError(f"{path}: give the launch's grid or Kernel Tuner's problem_size (the "
                         "grid derived from it), not both")
    if "grid" not in raw and "problem_size" not in raw:
        raise InputError(f"{path}: give the launch's grid (grid = [4096]) or Kernel Tuner's "
                         "problem_size")
    source = path.parent / raw["source"]
    kernel = Kernel.of(raw["kernel"], source, language=raw.get("language"),
                       compiler=raw.get("compiler", "auto"), options=raw.get("options", ()),
                       defines=raw.get("defines", {}),
                       include_dirs=tuple(path.parent / d for d in raw.get("include_dirs", ())))
    tuning = Tuning.of(raw.get("problem_size"), raw.get("tune_params"),
                       restrictions=raw.get("restrictions"), grid_div_x=raw.get("grid_div_x"),
                       grid_div_y=raw.get("grid_div_y"), grid_div_z=raw.get("grid_div_z"),
                       block_size_names=raw.get("block_size_names"))
    return LaunchFile(path, kernel, tuning, raw)
