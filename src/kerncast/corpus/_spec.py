"""The corpus spec: what a kernel takes, how it is launched and tuned, how it is checked.

One ``spec.toml`` per application directory describes its kernels. The file is
validated when the corpus loads; every problem names the file and the field::

    corpus spec kernels/matmul/spec.toml: kernels[0] (matmul_naive).launch.grid:
    the grid covers 48 x 64 threads at size 'small' with bx=16, by=16, but the
    kernel needs 64 x 64 (launch.covers); fix the grid formula
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kerncast._errors import InputError
from kerncast.core import evaluate

__all__ = [
    "Application",
    "Arg",
    "CorpusKernel",
    "LaunchConfig",
    "SIZE_NAMES",
    "load_application",
]

DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64")
SIZE_NAMES = ("small", "medium", "large")
LANGUAGES = ("cuda", "opencl")
CATEGORIES = (
    "micro-benchmark", "dense-linear-algebra", "stencil", "reduction-scan-histogram",
    "sorting", "irregular", "dynamic-programming", "science-finance",
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Arg(_Model):
    """One kernel parameter, in the order of the kernel's signature."""

    name: str
    kind: Literal["buffer", "scalar"]
    dtype: str
    shape: str | int | None = Field(default=None, description="elements, for buffers")
    intent: Literal["in", "out", "inout"] | None = None
    value: str | int | float | None = Field(default=None, description="for scalars")

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, v: str) -> str:
        if v not in DTYPES:
            raise ValueError(f"dtype {v!r} is not one of {', '.join(DTYPES)}")
        return v


class Launch(_Model):
    block: list[str | int] = Field(min_length=1, max_length=3)
    grid: list[str | int] = Field(min_length=1, max_length=3)
    covers: list[str | int] | None = Field(
        default=None, description="threads needed per dimension; null for grid-stride kernels"
    )
    dynamic_shared: str | int = 0


class Check(_Model):
    outputs: list[str] = Field(min_length=1)
    rtol: float = Field(default=0.0, ge=0)
    atol: float = Field(default=0.0, ge=0)


class KernelSpec(_Model):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    entry: str
    description: str
    languages: list[Literal["cuda", "opencl"]] = Field(min_length=1)
    tags: list[str] = []
    sizes: dict[str, dict[str, int | float]]
    derived: dict[str, str] = Field(default_factory=dict, description="names computed from a size")
    args: list[Arg] = Field(min_length=1)
    launch: Launch
    tunables: dict[str, list[int]] = Field(default_factory=dict)
    defaults: dict[str, int] = Field(default_factory=dict)
    restrictions: list[str] = []
    defines: dict[str, str | int] = Field(default_factory=dict)
    check: Check
    roi: str | None = Field(default=None, description="the C version's region-of-interest function")


class ApplicationSpec(_Model):
    application: str = Field(pattern=r"^[a-z0-9][a-z0-9_]*$")
    title: str
    category: Literal[CATEGORIES]  # type: ignore[valid-type]
    description: str
    references: list[str] = []
    kernels: list[KernelSpec] = Field(min_length=1)


@dataclass(frozen=True)
class LaunchConfig:
    """One point of a kernel's launch space at one problem size."""

    size: str
    params: dict[str, int | float]
    tunables: dict[str, int]
    grid: tuple[int, ...]
    block: tuple[int, ...]
    dynamic_shared: int
    defines: dict[str, int | float]

    @property
    def threads_per_block(self) -> int:
        return int(np.prod(self.block))

    @property
    def blocks(self) -> int:
        return int(np.prod(self.grid))

    def label(self) -> str:
        return _label(self.tunables)


def _label(tunables: dict[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(tunables.items())) or "default"


@dataclass(frozen=True)
class CorpusKernel:
    """A corpus kernel with its application's files; built by :func:`load_application`."""

    spec: KernelSpec
    app: Application
    index: int

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def entry(self) -> str:
        return self.spec.entry

    @property
    def languages(self) -> list[str]:
        return list(self.spec.languages)

    def source_path(self, language: str) -> Path:
        """The kernel's CUDA (``.cu``) or OpenCL (``.cl``) source file."""
        if language not in self.spec.languages:
            raise InputError(
                f"kernel {self.name} has no {language} version; it has "
                f"{', '.join(self.spec.languages)}"
            )
        return self.app.directory / f"{self.app.name}.{'cu' if language == 'cuda' else 'cl'}"

    @property
    def c_path(self) -> Path:
        return self.app.directory / f"{self.app.name}.c"

    def size_params(self, size: str) -> dict[str, int | float]:
        """Problem-size parameters, with the spec's derived names added."""
        if size not in self.spec.sizes:
            raise InputError(
                f"kernel {self.name} has no size {size!r}; its sizes are "
                f"{', '.join(self.spec.sizes)}"
            )
        params = dict(self.spec.sizes[size])
        for name, expr in self.spec.derived.items():
            params[name] = evaluate(expr, params)
        return params

    def tunable_space(self) -> list[dict[str, int]]:
        """Every combination of tunable values that the restrictions allow."""
        names = sorted(self.spec.tunables)
        combos = [dict(zip(names, vals))
                  for vals in itertools.product(*(self.spec.tunables[n] for n in names))]
        return [c for c in combos if not self._broken(c)]

    def _broken(self, tunables: dict[str, int]) -> list[str]:
        """The restrictions ``tunables`` break."""
        return [r for r in self.spec.restrictions if not evaluate(r, tunables)]

    def launch(self, size: str, tunables: dict[str, int] | None = None) -> LaunchConfig:
        """The launch at ``size`` with ``tunables`` (the spec's defaults where omitted)."""
        chosen = {**self.spec.defaults, **(tunables or {})}
        for name, value in chosen.items():
            allowed = self.spec.tunables.get(name)
            if allowed is None:
                raise InputError(f"kernel {self.name} has no tunable {name!r}; its tunables "
                                 f"are {', '.join(self.spec.tunables) or 'none'}")
            if value not in allowed:
                raise InputError(f"{name}={value} is not allowed for {self.name}; choose one "
                                 f"of {allowed}")
        if broken := self._broken(chosen):
            raise InputError(f"{_label(chosen)} breaks {self.name}'s restriction "
                             f"{broken[0]!r}; choose "
                             f"a configuration it allows ('kerncast corpus show {self.name}' "
                             f"lists the tunables and restrictions)")
        env = {**self.size_params(size), **chosen}
        grid = tuple(int(evaluate(g, env)) for g in self.spec.launch.grid)
        block = tuple(int(evaluate(b, env)) for b in self.spec.launch.block)
        return LaunchConfig(
            size=size, params=self.size_params(size), tunables=chosen, grid=grid, block=block,
            dynamic_shared=int(evaluate(self.spec.launch.dynamic_shared, env)),
            defines={k: evaluate(v, env) for k, v in self.spec.defines.items()},
        )

    def launches(self, size: str) -> list[LaunchConfig]:
        """The whole launch space at one size."""
        return [self.launch(size, t) for t in self.tunable_space()]

    def instance(self, config: LaunchConfig, language: str = "cuda", seed: int = 0) -> tuple:
        """(:class:`~kerncast.core.Kernel`, :class:`~kerncast.core.Launch`) of ``config``:
        what every layer below the corpus takes (see :func:`kerncast.corpus.corpus_instance`)."""
        from kerncast.corpus._data import corpus_instance  # noqa: PLC0415 (cycle: _data imports _spec)

        return corpus_instance(self, config, language, seed)

    def arg_env(self, config: LaunchConfig) -> dict[str, int | float]:
        """Names available to argument expressions: size, tunables, grid and block."""
        env = {**config.params, **config.tunables}
        for axis, (g, b) in enumerate(zip(config.grid, config.block)):
            env[f"grid_{'xyz'[axis]}"] = g
            env[f"block_{'xyz'[axis]}"] = b
        return env

    def buffer_elements(self, arg: Arg, config: LaunchConfig) -> int:
        return int(evaluate(arg.shape, self.arg_env(config)))

    def buffer_bytes(self, config: LaunchConfig) -> int:
        """Bytes of all the launch's buffers together."""
        return sum(self.buffer_elements(a, config) * np.dtype(a.dtype).itemsize
                   for a in self.spec.args if a.kind == "buffer")

    def scalar_value(self, arg: Arg, config: LaunchConfig) -> int | float:
        return evaluate(arg.value, self.arg_env(config))


@dataclass(frozen=True)
class Application:
    """An application directory: spec, sources, generator and reference module."""

    name: str
    directory: Path
    spec: ApplicationSpec
    kernels: tuple[CorpusKernel, ...] = field(default=())


def _fail(path: Path, where: str, message: str) -> InputError:
    return InputError(f"corpus spec {path}: {where}: {message}")


def _read(path: Path) -> ApplicationSpec:
    try:
        raw = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise _fail(path, "file", f"cannot be read as TOML ({exc})") from None
    try:
        return ApplicationSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise _fail(path, loc, first["msg"]) from None


def load_application(directory: Path, *, whole_space: bool = True) -> Application:
    """Load and validate one application directory of the corpus; with ``whole_space``,
    every launch configuration of every size is checked too (the most costly check)."""
    path = directory / "spec.toml"
    spec = _read(path)
    if spec.application != directory.name:
        raise _fail(path, "application", f"{spec.application!r} differs from the directory "
                    f"name {directory.name!r}")
    app = Application(name=spec.application, directory=directory, spec=spec)
    kernels = tuple(CorpusKernel(spec=k, app=app, index=i) for i, k in enumerate(spec.kernels))
    object.__setattr__(app, "kernels", kernels)
    from kerncast.corpus._validate import validate_kernel  # noqa: PLC0415 (cycle)

    for kernel in kernels:
        validate_kernel(kernel, path, whole_space=whole_space)
    return app
