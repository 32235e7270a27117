"""Resources of many translation units from one ptxas run
(:func:`kerncast.frontend.assemble_resources`)."""

from __future__ import annotations

import pytest

from kerncast.frontend import _cache, _process, assemble_resources, compile

from .conftest import SAXPY_CU
from .test_ptxas import CONSTANTS_CU, SPILLS_CU

#: kernels with shared memory and a barrier, spills under a register cap, and several
#: kernels in one module
SOURCES = {
    "saxpy.cu": SAXPY_CU,
    "scaled.cu": SAXPY_CU.replace("2.0f", "3.0f"),
    "two.cu": """\
extern "C" __global__ void first(float* x) { x[threadIdx.x] += 1.0f; }
extern "C" __global__ void second(float* x, int n) {
  __shared__ float s[256];
  s[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  for (int k = 1; k < n; k++) x[threadIdx.x] += s[(threadIdx.x + k) & 255];
}
""",
    "spills.cu": SPILLS_CU,
}


def _units(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path))
    return [compile(text, lang="cuda", name=name) for name, text in SOURCES.items()]


def _alone(unit, arch: str = "sm_90") -> dict:
    unit._resources.clear()
    unit._use_cache = False
    try:
        return unit.resources(arch)
    finally:
        unit._use_cache = True


@pytest.mark.toolchain
def test_one_ptxas_run_gives_each_unit_its_own_resources(have_cuda, tmp_path, monkeypatch):
    units = _units(tmp_path, monkeypatch)
    calls = []
    real = _process.run_tool
    monkeypatch.setattr(_process, "run_tool", lambda args, **kw: calls.append(args) or
                        real(args, **kw))
    assert assemble_resources(units, "sm_90") == len(units)
    assert len(calls) == 1
    batched = [unit.resources("sm_90") for unit in units]  # from the disk cache
    assert len(calls) == 1
    assert batched == [_alone(unit) for unit in units]
    assert batched[3]["spills"].spill_stores > 0 and batched[2]["second"].barriers == 1


@pytest.mark.toolchain
def test_units_in_the_cache_or_with_module_data_are_left_alone(have_cuda, tmp_path,
                                                               monkeypatch):
    units = _units(tmp_path, monkeypatch)
    units[0].resources("sm_90")
    data = compile(CONSTANTS_CU, lang="cuda", name="constants.cu")  # __constant__ coef
    assert assemble_resources([*units, data], "sm_90") == len(units) - 1
    assert not _cache.holds("ptxas", data._ptxas_key(_tool(), "sm_90"))
    assert data.resources("sm_90")["uses_all"].module_cmem.get(3) == 256


@pytest.mark.toolchain
def test_a_batch_ptxas_rejects_is_left_to_each_unit(have_cuda, tmp_path, monkeypatch):
    from kerncast import InputError
    from kerncast.frontend import module_header

    units = _units(tmp_path, monkeypatch)
    header = "\n".join(module_header(units[0].ptx))  # the same: one batch
    broken = compile(header + "\n.visible .entry broken()\n{\n    frobnicate.u32 %r1;\n}\n",
                     lang="ptx", name="broken.ptx")
    assert assemble_resources([*units, broken], "sm_90") == 0
    assert [unit.resources("sm_90") for unit in units] == [_alone(unit) for unit in units]
    with pytest.raises(InputError, match="ptxas rejected broken.ptx"):
        broken.resources("sm_90")


def _tool():
    from kerncast.frontend import find_ptxas

    return find_ptxas()
