"""Every corpus kernel runs for real: OpenCL on PoCL, and the C versions under gcc."""

import pytest

from kerncast.measure._job import corpus_job
from kerncast.corpus import compare_outputs, expected_outputs, list_kernels, make_args
from kerncast.corpus._cversion import run_c

KERNELS = list_kernels()
OPENCL = [k for k in KERNELS if "opencl" in k.languages]


def _configs(kernel):
    space = kernel.launches("small")
    default = kernel.launch("small")
    picks = {default.label(): default, space[0].label(): space[0], space[-1].label(): space[-1]}
    return list(picks.values())


@pytest.mark.parametrize("kernel", OPENCL, ids=lambda k: k.name)
def test_opencl_kernel_matches_reference_on_pocl(pocl, kernel):
    for config in _configs(kernel):
        args = make_args(kernel, config, seed=3)
        want = expected_outputs(kernel, args, config)
        got = pocl.run_once(corpus_job(kernel, config, "opencl"), args)
        assert compare_outputs(kernel, got, want) == [], config.label()


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_c_version_builds_runs_and_matches(kernel):
    result = run_c(kernel, kernel.launch("small"), seed=5)
    assert result.ok, result.message
    assert result.roi_seconds > 0
