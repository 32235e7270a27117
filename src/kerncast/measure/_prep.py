"""Inputs and reference outputs, prepared once per (kernel, size) where the launch does not matter.

Generating inputs and running the NumPy reference can take seconds at size
``large``, far longer than timing a launch. Most kernels' inputs and outputs do not
depend on the launch configuration; :func:`sharing` finds out by comparing them at
size ``small`` across the whole launch space (cheap), and :func:`prepare_unit` then
writes them once per (kernel, size) to a scratch directory as ``.npy`` files (per
configuration only where they differ). Campaigns run it in a process pool ahead of
the GPU work; :func:`load_prepared` reads the files back (or computes inline when
there are none).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from kerncast.corpus import CorpusKernel, LaunchConfig, expected_outputs, make_args
from kerncast.corpus import poison

__all__ = ["Prepared", "Sharing", "load_prepared", "prepare", "prepare_unit", "sharing"]


@dataclass
class Prepared:
    """Host arguments of one launch (outputs poisoned) and the reference outputs."""

    args: dict[str, object]
    want: dict[str, np.ndarray]
    # Identify the prepared files (kernel, size, inputs tag, expected tag), so that a
    # backend can keep their device copies across the configurations that share them.
    key: tuple | None = None

    def buffer_bytes(self) -> int:
        return sum(v.nbytes for v in self.args.values() if isinstance(v, np.ndarray))


@dataclass(frozen=True)
class Sharing:
    """Which configurations get the same inputs and the same reference outputs.

    ``inputs`` and ``reference`` map every configuration label to a class number:
    configurations of one class share the prepared files.
    """

    inputs: dict[str, int]
    reference: dict[str, int]

    def tags(self, label: str) -> tuple[str, str]:
        return f"inputs-c{self.inputs[label]}", f"expected-c{self.reference[label]}"


def prepare(kernel: CorpusKernel, config: LaunchConfig, seed: int = 0,
            reference: bool = True) -> Prepared:
    """Generate the arguments (and compute the reference) for one launch, inline."""
    args = make_args(kernel, config, seed)
    return Prepared(args, expected_outputs(kernel, args, config) if reference else {})


def _input_names(kernel: CorpusKernel) -> list[str]:
    return [a.name for a in kernel.spec.args if a.kind == "buffer" and a.intent != "out"]


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        np.asarray(a[k]).shape == np.asarray(b[k]).shape and np.array_equal(a[k], b[k], equal_nan=True)
        for k in a)


def _classify(items: list[tuple[str, dict]]) -> dict[str, int]:
    """Class numbers of labelled array sets: equal sets get the same class."""
    reps: list[dict] = []
    out = {}
    for label, arrays in items:
        for number, rep in enumerate(reps):
            if _same(rep, arrays):
                out[label] = number
                break
        else:
            out[label] = len(reps)
            reps.append(arrays)
    return out


def _probe(kernel: CorpusKernel, seed: int) -> Sharing:
    """Compare inputs and references across the launch space at the medium size (the
    small one may hide differences that only show with several blocks per launch)."""
    size = "medium" if "medium" in kernel.spec.sizes else next(iter(kernel.spec.sizes))
    ins, outs = [], []
    for config in kernel.launches(size):
        args = make_args(kernel, config, seed)
        ins.append((config.label(), {n: args[n] for n in _input_names(kernel)}))
        outs.append((config.label(), expected_outputs(kernel, args, config)))
    inputs = _classify(ins)
    refs = _classify(outs)
    # a reference class never spans two input classes
    pairs = {(inputs[label], refs[label]) for label in inputs}
    numbered = {pair: k for k, pair in enumerate(sorted(pairs))}
    return Sharing(inputs, {label: numbered[(inputs[label], refs[label])] for label in inputs})


_SHARING: dict[tuple[str, str, int], Sharing] = {}


def sharing(kernel: CorpusKernel, seed: int = 0) -> Sharing:
    """Classes of configurations that share inputs and reference outputs."""
    key = (str(kernel.app.directory), kernel.name, seed)
    if key not in _SHARING:
        _SHARING[key] = _probe(kernel, seed)
    return _SHARING[key]


def _unit_dir(root: Path, kernel: CorpusKernel, size: str) -> Path:
    return Path(root) / kernel.name / size


def _save_all(directory: Path, arrays: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        np.save(directory / f"{name}.npy", np.asarray(array))


def prepare_unit(kernel: CorpusKernel, size: str, configs: list[LaunchConfig], root: str | Path,
                 seed: int = 0) -> Path:
    """Write inputs and references of ``configs`` (all at ``size``) under ``root``: one
    copy per class of configurations that share them."""
    share = sharing(kernel, seed)
    unit = _unit_dir(Path(root), kernel, size)
    done: set[str] = set()
    for config in configs:
        in_tag, out_tag = share.tags(config.label())
        if in_tag in done and out_tag in done:
            continue
        args = make_args(kernel, config, seed)
        if in_tag not in done:
            _save_all(unit / in_tag, {n: args[n] for n in _input_names(kernel)})
            done.add(in_tag)
        if out_tag not in done:
            _save_all(unit / out_tag, expected_outputs(kernel, args, config))
            done.add(out_tag)
        del args
    manifest = {"seed": seed, "configs": {c.label(): list(share.tags(c.label())) for c in configs}}
    tmp = unit / ".manifest.json.tmp"
    tmp.write_text(json.dumps(manifest))
    os.replace(tmp, unit / "manifest.json")
    return unit


def _load_dir(directory: Path) -> dict[str, np.ndarray]:
    return {p.stem: np.load(p, mmap_mode="r") for p in sorted(directory.glob("*.npy"))}


@lru_cache(maxsize=8)
def _poisoned(dtype: str, count: int) -> np.ndarray:
    """A read-only poisoned buffer, shared by the configurations of a unit (uploads copy it)."""
    array = poison(np.dtype(dtype), count)
    array.flags.writeable = False
    return array


def load_prepared(kernel: CorpusKernel, config: LaunchConfig, seed: int = 0,
                  root: str | Path | None = None, reference: bool = True) -> Prepared:
    """The prepared arguments of one launch: from ``root`` if prepared there, else inline.

    With ``reference=False`` (sampled runs, energy loops, profiling) no reference is
    computed and ``want`` is empty.
    """
    unit = _unit_dir(Path(root), kernel, config.size) if root else None
    manifest_path = unit / "manifest.json" if unit else None
    if manifest_path is None or not manifest_path.exists():
        return prepare(kernel, config, seed, reference)
    try:
        manifest = json.loads(manifest_path.read_text())
        tags = manifest["configs"].get(config.label())
        if manifest["seed"] != seed or tags is None:
            return prepare(kernel, config, seed, reference)
        in_tag, out_tag = tags
        inputs = _load_dir(unit / in_tag)
        want = _load_dir(unit / out_tag) if reference else {}
        for name in [a.name for a in kernel.spec.args if a.kind == "buffer" and a.intent != "out"]:
            np.asarray(inputs[name][:1])  # a truncated file fails here, not in the run
    except (OSError, ValueError, KeyError, TypeError, EOFError):
        return prepare(kernel, config, seed, reference)  # a damaged unit: prepared again
    args: dict[str, object] = {}
    for arg in kernel.spec.args:
        if arg.kind == "scalar":
            args[arg.name] = np.dtype(arg.dtype).type(kernel.scalar_value(arg, config))
        elif arg.intent == "out":
            args[arg.name] = _poisoned(arg.dtype, kernel.buffer_elements(arg, config))
        else:
            args[arg.name] = np.ascontiguousarray(inputs[arg.name])
    key = (kernel.name, config.size, seed, str(unit), in_tag, out_tag if reference else None)
    return Prepared(args, {k: np.asarray(v) for k, v in want.items()}, key)
