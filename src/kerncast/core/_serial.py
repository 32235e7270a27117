"""A kernel and launch written as JSON-ready data, and read back: to hand one's own launch
to another process (the one Nsight Compute profiles). Arrays with data are written as
``.npy`` files into a folder the caller keeps while the other process runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kerncast._errors import InputError
from kerncast.core._args import Array, Scalar, Struct, View
from kerncast.core._generators import Generator, parse_generator
from kerncast.core._kernel import Kernel
from kerncast.core._launch import Launch

__all__ = ["kernel_from_dict", "kernel_to_dict", "launch_from_dict", "launch_to_dict"]


def kernel_to_dict(kernel: Kernel) -> dict[str, Any]:
    """The kernel as JSON-ready data."""
    return {"name": kernel.name, "text": kernel.text,
            "path": None if kernel.path is None else str(kernel.path.resolve()),
            "language": kernel.language, "compiler": kernel.compiler,
            "options": list(kernel.options), "defines": dict(kernel.defines),
            "include_dirs": [str(p.resolve()) for p in kernel.include_dirs]}


def kernel_from_dict(data: dict[str, Any]) -> Kernel:
    return Kernel(data["name"], text=data["text"], path=data["path"] and Path(data["path"]),
                  language=data["language"], compiler=data["compiler"],
                  options=tuple(data["options"]), defines=data["defines"],
                  include_dirs=tuple(Path(p) for p in data["include_dirs"]))


def _arg(arg: Any, index: int, folder: Path) -> dict[str, Any]:
    if isinstance(arg, Array):
        out: dict[str, Any] = {"kind": "array", "dtype": arg.dtype.name, "shape": list(arg.shape),
                               "intent": arg.intent}
        if arg.data is not None:
            path = folder / f"arg{index}.npy"
            np.save(path, np.ascontiguousarray(arg.data))
            out["data"] = str(path)
        elif isinstance(arg.generator, Generator):
            out["generator"] = str(arg.generator)
        elif arg.generator is not None:
            raise InputError(f"argument {index}: its generator ({arg.generator}) cannot be "
                             "handed to another process; give the data or a named generator")
        return out
    if isinstance(arg, Scalar):
        return {"kind": "scalar", "value": arg.value,
                "dtype": None if arg.dtype is None else arg.dtype.name}
    if isinstance(arg, Struct):
        return {"kind": "struct", "hex": arg.raw.hex()}
    if isinstance(arg, View):
        if isinstance(arg.of, np.ndarray):
            raise InputError(f"argument {index}: a view of an array object cannot be handed to "
                             "another process; name the array it points into")
        return {"kind": "view", "of": arg.of, "offset": arg.offset}
    raise InputError(f"argument {index} ({type(arg).__name__}) cannot be written")


def launch_to_dict(launch: Launch, folder: str | Path) -> dict[str, Any]:
    """The launch as JSON-ready data; arrays with data go to ``folder`` as ``.npy`` files."""
    folder = Path(folder)
    return {"grid": list(launch.grid), "block": list(launch.block),
            "dynamic_shared": launch.dynamic_shared, "names": list(launch.names),
            "params": {k: (v.item() if isinstance(v, np.generic) else v)
                       for k, v in launch.params.items()},
            "size": launch.size, "seed": launch.seed,
            "args": [_arg(a, i, folder) for i, a in enumerate(launch.args)],
            "constants": {name: _constant(name, value, folder)
                          for name, value in launch.constants.items()}}


def _constant(name: str, value: np.ndarray, folder: Path) -> str:
    path = folder / f"const_{name}.npy"
    np.save(path, value)
    return str(path)


def _read(data: dict[str, Any]) -> Any:
    kind = data["kind"]
    if kind == "array":
        if "data" in data:
            return Array.of(np.load(data["data"], allow_pickle=False), intent=data["intent"])
        gen = parse_generator(data["generator"]) if data.get("generator") else None
        return Array(data["dtype"], tuple(data["shape"]), gen, intent=data["intent"])
    if kind == "scalar":
        return Scalar(data["value"], data["dtype"])
    if kind == "struct":
        return Struct(bytes.fromhex(data["hex"]))
    return View(data["of"], data["offset"])


def launch_from_dict(data: dict[str, Any]) -> Launch:
    """A launch written by :func:`launch_to_dict`."""
    return Launch(tuple(data["grid"]), tuple(data["block"]), data["dynamic_shared"],
                  args=tuple(_read(a) for a in data["args"]), names=tuple(data["names"]),
                  params=data["params"], size=data["size"], seed=data["seed"],
                  constants={k: np.load(v, allow_pickle=False)
                             for k, v in data["constants"].items()})
