"""What ``predict``, ``sweep`` and ``measure`` are asked about: a corpus kernel, a source file
with its launch on the command line, or a launch file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kerncast._errors import InputError
from kerncast.core import Kernel, Tuning, UserKernel, load_launch_file, parse_args

__all__ = ["SOURCE_SUFFIXES", "Target", "parse_config", "target_of"]

SOURCE_SUFFIXES = (".cu", ".cuh", ".cl", ".ptx")

KernelOpt = Annotated[str | None, typer.Option(
    "--kernel", "-k", help="For a source file: the kernel (entry) to predict.")]
GridOpt = Annotated[str | None, typer.Option(
    help="For a source file: the grid in blocks, e.g. 4096 or 64,64.")]
BlockOpt = Annotated[str | None, typer.Option(
    help="For a source file: the block in threads, e.g. 256 or 16,16.")]
SmemOpt = Annotated[int, typer.Option(
    "--smem", help="For a source file: dynamic shared memory per block, in bytes.")]
ArgOpt = Annotated[list[str] | None, typer.Option(
    "--arg", "-a", help="For a source file: one kernel argument in order, e.g. "
    "n=int32:1048576, x=float32[1048576]:uniform(0,1), p=view:x+16, s=struct:float32=2,int32=7 "
    "(see docs/OWN_KERNEL.md).")]
CompilerOpt = Annotated[str, typer.Option(
    help="For a source file: auto, nvrtc or nvcc (CUDA); clang (OpenCL).")]
OptionOpt = Annotated[list[str] | None, typer.Option(
    "--option", "-X", help="A compiler option, repeatable: -X=--use_fast_math "
    "-X=-maxrregcount=32.")]
DefineOpt = Annotated[list[str] | None, typer.Option(
    "--define", "-D", help="A macro NAME=VALUE, repeatable.")]


def _scalar(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_config(items: list[str] | None, option: str = "--config") -> dict[str, Any]:
    """``NAME=VALUE`` pairs (integers, numbers, true/false or words); for ``--config`` an
    item may hold several, comma-separated (``bx=256,vec=4``, as sweeps print them). A
    ``--define`` value keeps its commas."""
    out: dict[str, Any] = {}
    pieces = [p for item in items or [] for p in (item.split(",") if option == "--config"
                                                  else [item])]
    for item in pieces:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InputError(f"{option} {item!r} is not NAME=VALUE; e.g. {option} tile=32")
        out[name.strip()] = _scalar(value)
    return out


def _dims(text: str | None, what: str) -> list[int] | None:
    if text is None:
        return None
    try:
        values = [int(p) for p in text.replace("x", ",").split(",") if p.strip()]
    except ValueError:
        values = []
    if not values:
        raise InputError(f"--{what} {text!r} is not one to three integers, e.g. --{what} "
                         "64,64")
    return values


class Target:
    """A kernel and how to make its launches: the corpus (``corpus`` set) or one's own."""

    def __init__(self, corpus: str | None = None, space: Any = None) -> None:
        self.corpus, self.space = corpus, space

    @property
    def own(self) -> bool:
        return self.space is not None

    def instance(self, params: dict[str, Any]) -> tuple:
        return self.space.instance(params)


def target_of(kernel: str, *, entry: str | None = None, grid: str | None = None,
              block: str | None = None, smem: int = 0, args: list[str] | None = None,
              compiler: str = "auto", options: list[str] | None = None,
              defines: list[str] | None = None, lang: str | None = None) -> Target:
    """The target of a command's KERNEL argument and its launch options."""
    path = Path(kernel)
    own_options = any(v for v in (entry, grid, block, args, options, defines)) or smem
    if path.suffix == ".toml":
        if own_options:
            raise InputError(f"{kernel} is a launch file: it holds the kernel, grid, block and "
                             "arguments; change them there (or pass a source file instead)")
        return Target(space=load_launch_file(path))
    if path.suffix not in SOURCE_SUFFIXES:
        if own_options:
            raise InputError(f"{kernel!r} is not a source file (.cu, .cl, .ptx) or a launch "
                             "file (.toml); --kernel, --grid, --block and --arg describe a "
                             "launch of a source file")
        return Target(corpus=kernel)
    if not path.is_file():
        raise InputError(f"no such file: {kernel}")
    missing = [o for o, v in (("--kernel", entry), ("--grid", grid), ("--block", block))
               if not v]
    if missing:
        raise InputError(f"{kernel}: give {', '.join(missing)} (and each argument with --arg), "
                         f"e.g. --kernel saxpy --grid 4096 --block 256 --arg n=int32:1048576; "
                         "or write a launch file: kerncast new DIR")
    parsed, names = parse_args(list(args or []), base=Path.cwd())
    source = Kernel.of(str(entry), path, language=lang, compiler=compiler,
                       options=tuple(options or ()),
                       defines=parse_config(defines, "--define"))
    user = UserKernel(source, Tuning(), dict(zip(names, parsed)), grid=_dims(grid, "grid"),
                      block=_dims(block, "block"), smem_args={"size": smem})
    return Target(space=user)
