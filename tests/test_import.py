"""``import kerncast`` stays light: no GPU libraries, no Ray, no matplotlib."""

import os
import subprocess
import sys
from pathlib import Path

import kerncast

HEAVY = ("cupy", "pyopencl", "ray", "matplotlib", "cuda", "pynvml", "sklearn", "pandas")


def test_import_pulls_in_no_optional_dependency():
    code = (
        "import sys, kerncast\n"
        f"heavy = {HEAVY!r}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "print(','.join(loaded))\n"
    )
    src = str(Path(kerncast.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == ""


def test_public_names_resolve_lazily():
    import kerncast

    assert callable(kerncast.occupancy)
    assert kerncast.get_device("h100").compute.sm_count == 132


def test_a_static_prediction_loads_no_learned_model_library():
    """``kerncast predict`` with the static model imports neither scikit-learn nor pandas
    (about a second of start-up between them)."""
    code = (
        "import contextlib, io, sys\n"
        "from kerncast.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['predict', 'corpus:copy_vector', '--size', 'small', '--json']) == 0\n"
        "heavy = ('sklearn', 'pandas', 'scipy', 'matplotlib')\n"
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules} & set(heavy))))\n"
    )
    src = str(Path(kerncast.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == ""
