"""SASS issue slots: executed SASS per issued PTX instruction, by PTX line, and what
the pipeline charges for them."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from kerncast.ptx import InstrClass
from kerncast.sim._pipeline import K_ALU, K_MEM, Op
from kerncast.sim._sassissue import charge_sass_issue
from kerncast.trace import _sasscode

needs_tools = pytest.mark.skipif(bool(_sasscode.missing_tools()),
                                 reason="needs ptxas and nvdisasm")
FMA, ALU, LSU = 1, 0, 6  # PIPES.index("fma"), ("alu"), ("lsu")


def _program(*classes):
    return SimpleNamespace(items=[SimpleNamespace(iclass=c.value) for c in classes])


def test_charges_follow_the_sass_per_pipe():
    machine = SimpleNamespace(measured_whole=frozenset({"fp32_div"}))
    fma = Op(K_ALU, FMA, 1.0, 1, 4.0, (0,), (1,))
    add = Op(K_ALU, ALU, 1.0, 1, 5.0, (1,), (2,))
    load = Op(K_MEM, LSU, 1.0, 1, 0.0, (2,), (3,))
    div = Op(K_ALU, FMA, 8.0, 8, 57.0, (3,), (4,))
    program = _program(InstrClass.FP32, InstrClass.INT, InstrClass.LD_GLOBAL,
                       InstrClass.FP32_DIV)
    out = charge_sass_issue([fma, add, load, div], {0: 0.5, 1: 0.5, 2: 2.0, 3: 12.0},
                            program, machine)
    # half of the fma's executions were folded away: half the slots and pipe time
    assert (out[0].slots, out[0].issue, out[0].latency) == (0.5, 0.5, 4.0)
    # the integer rate is calibrated per PTX instruction, ptxas's folding included
    assert (out[1].slots, out[1].issue) == (0.5, 1.0)
    # a load's address arithmetic takes scheduler slots, not the load/store path
    assert (out[2].slots, out[2].issue) == (2.0, 1.0)
    # a sequence calibrated whole keeps its calibration
    assert out[3] == div
    # more SASS than PTX takes slots, not more of the PTX instruction's pipe
    assert charge_sass_issue([fma], {0: 3.0}, _program(InstrClass.FP32), machine)[0].issue == 1.0


def test_pcs_without_ratio_are_left_alone():
    machine = SimpleNamespace(measured_whole=frozenset())
    fma = Op(K_ALU, FMA, 1.0, 1, 4.0, (0,), (1,))
    assert charge_sass_issue([fma], {}, _program(InstrClass.FP32), machine) == [fma]


@needs_tools
@pytest.mark.toolchain
def test_ratios_add_up_to_the_executed_sass():
    from kerncast.corpus import get_kernel, make_args
    from kerncast.emu import emulate
    from kerncast.sim import cached_unit
    from kerncast.sim._sassissue import pc_issue_ratios
    from kerncast.trace._sassmap import map_sass

    kernel = get_kernel("particle_likelihood")
    config = kernel.launch("small")
    tu, module = cached_unit(kernel.instance(config)[0], "h100")
    compiled = tu.kernel(kernel.entry)
    args = make_args(kernel, config, poison_outputs=False)
    trace = emulate(module, config, [args[a.name] for a in kernel.spec.args], [0],
                    entry=compiled.entry, inplace=True, exact=False).trace
    ratios = pc_issue_ratios(trace, "sm_90")
    counts = trace.pc_counts[0]
    issued = sum(ratios[pc] * counts[pc] for pc in ratios)
    total = map_sass(trace, arch="sm_90").total
    # every executed SASS instruction that names a PTX line is charged to one of its pcs
    assert 0.9 * total <= issued <= total
    # ptxas turns this kernel's PTX into fewer SASS instructions (cvt and address
    # arithmetic folded, logf and expf shorter)
    assert issued < 0.9 * float(np.sum(counts))


@needs_tools
@pytest.mark.toolchain
def test_predictions_say_how_they_issue(monkeypatch):
    from kerncast.corpus import get_kernel
    from kerncast.sim import predict_launch

    kernel = get_kernel("arith_sfu")
    config = kernel.launch("small")
    with_sass = predict_launch(*kernel.instance(config), "h100")
    assert with_sass.based_on["issue_slots"].startswith("SASS (ptxas -arch=sm_90)")
    monkeypatch.setattr(_sasscode, "missing_tools", lambda: _sasscode.NO_NVDISASM)
    without = predict_launch(*kernel.instance(config), "h100")
    assert without.based_on["issue_slots"].startswith("PTX: one issue per PTX instruction")
    assert without.seconds != with_sass.seconds
