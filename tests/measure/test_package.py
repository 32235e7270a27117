"""The measure package: light to import, callable, and its public names."""

import os
import subprocess
import sys
from pathlib import Path

import kerncast


def test_importing_measure_loads_no_gpu_library_nor_pandas():
    code = ("import sys, kerncast.measure\n"
            "heavy = ('cupy', 'pyopencl', 'cuda', 'pynvml', 'pandas')\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in heavy)))\n")
    src = str(Path(kerncast.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    assert out.stdout.strip() == ""


def test_kerncast_measure_is_callable_either_way():
    import kerncast.measure as package
    from kerncast.measure import measure

    assert callable(package) and callable(measure) and callable(kerncast.measure)
    assert package.TimingPolicy().min_reps == 5
    for name in package.__all__:
        assert getattr(package, name) is not None, name
