"""Every launch file of this folder, compiled and emulated whole, against its NumPy reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kerncast.core import load_launch_file
from kerncast.emu import emulate
from kerncast.frontend import build
from tests.userkernels.references import REFERENCES, TOLERANCE, Unordered

pytestmark = pytest.mark.toolchain

HERE = Path(__file__).resolve().parent
LAUNCH_FILES = sorted(HERE.glob("*.toml"))
DEFAULT_TOLERANCE = (1e-5, 1e-6)


def run(path: Path, params: dict | None = None):
    """Compile and emulate the launch file's kernel over all its blocks; the launch, the
    inputs by name (as materialised before the run) and the emulation result."""
    kernel, launch = load_launch_file(path).launch(params)
    unit = build(kernel, "sm_90")
    entry = unit.kernel(kernel.name).entry
    values = launch.materialise(generate=True)
    inputs = dict(zip(launch.names, values))
    result = emulate(unit.module, launch, values, blocks="all", entry=entry,
                     labels=list(launch.names))
    return launch, inputs, result


def compare(name: str, got: np.ndarray, want, tolerance: tuple[float, float]) -> str | None:
    """Why ``got`` is not ``want``, or None."""
    if isinstance(want, Unordered):
        k = want.items.size
        if not np.array_equal(np.sort(got[:k]), np.sort(want.items)):
            return f"{name}[:{k}] holds {np.sort(got[:k])}, want {np.sort(want.items)}"
        if not np.array_equal(got[k:], want.rest):
            return f"{name}[{k}:] was changed: {got[k:]}"
        return None
    want = np.asarray(want).reshape(-1)
    got = got.reshape(-1)
    if got.shape != want.shape:
        return f"{name} has shape {got.shape}, want {want.shape}"
    if got.dtype.kind in "iub":
        bad = np.flatnonzero(got != want.astype(got.dtype))
    else:
        rtol, atol = tolerance
        bad = np.flatnonzero(~np.isclose(got.astype(np.float64), want.astype(np.float64),
                                         rtol=rtol, atol=atol))
    if bad.size:
        i = bad[:5]
        return (f"{name}: {bad.size} of {got.size} elements differ, e.g. at {i.tolist()}: "
                f"got {got[i].tolist()}, want {want[i].tolist()}")
    return None


def check(stem: str, inputs: dict, result) -> list[str]:
    expected = REFERENCES[stem](inputs)
    tolerance = TOLERANCE.get(stem, DEFAULT_TOLERANCE)
    problems = []
    for name, want in expected.items():
        problem = compare(name, result.output(name), want, tolerance)
        if problem:
            problems.append(problem)
    return problems


def test_every_launch_file_has_a_reference():
    assert len(LAUNCH_FILES) >= 14
    assert sorted(p.stem for p in LAUNCH_FILES) == sorted(REFERENCES)


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.stem)
def test_emulated_matches_reference(path: Path):
    launch, inputs, result = run(path)
    assert len(result.blocks) == launch.blocks
    problems = check(path.stem, inputs, result)
    assert not problems, "\n".join(problems)


def _tuned_files() -> list[Path]:
    return [p for p in LAUNCH_FILES if load_launch_file(p).tuning.tune_params]


@pytest.mark.parametrize("path", _tuned_files(), ids=lambda p: p.stem)
def test_every_tuning_configuration(path: Path):
    """Each configuration the restrictions allow compiles with its macros, gets Kernel
    Tuner's grid and block, and computes the same result."""
    tuning = load_launch_file(path).tuning
    configs = tuning.configs()
    assert configs
    for params in configs:
        launch, inputs, result = run(path, params)
        assert launch.block[0] == params["block_size_x"]
        problems = check(path.stem, inputs, result)
        assert not problems, f"{params}: " + "\n".join(problems)
