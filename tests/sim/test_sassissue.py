"""SASS issue slots: executed SASS per issued PTX instruction, by PTX line, and what
the pipeline charges for them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from kerncast.ptx import InstrClass
from kerncast.sim._pipeline import K_ALU, K_MEM, Op
from kerncast.sim._machine import PIPES
from kerncast.sim._sassissue import SassIssue, charge_sass_issue
from kerncast.trace import _sasscode

needs_tools = pytest.mark.skipif(bool(_sasscode.missing_tools()),
                                 reason="needs ptxas and nvdisasm")
FMA, ALU, LSU, SFU, CVT, CTRL, HEAVY = (PIPES.index(p) for p in (
    "fma", "alu", "lsu", "sfu", "cvt", "ctrl", "fma_heavy"))
MACHINE = SimpleNamespace(measured_whole=frozenset({"fp32_div"}), alu_cycles=2.0,
                          heavy_cycles=2.0)


def _program(*classes):
    return SimpleNamespace(items=[SimpleNamespace(iclass=c.value) for c in classes])


def _charged_one(op, sass, cls):
    """``op`` of class ``cls`` charged as the one pc whose SASS is ``sass``."""
    return charge_sass_issue([op], {0: sass}, _program(cls), MACHINE)[0]


def test_charges_follow_the_sass_per_pipe():
    fma = Op(K_ALU, FMA, 1.0, 1, 4.0, (0,), (1,))
    add = Op(K_ALU, ALU, 1.0, 1, 5.0, (1,), (2,))
    load = Op(K_MEM, LSU, 1.0, 1, 0.0, (2,), (3,))
    div = Op(K_ALU, FMA, 8.0, 8, 57.0, (3,), (4,))
    program = _program(InstrClass.FP32, InstrClass.INT, InstrClass.LD_GLOBAL,
                       InstrClass.FP32_DIV)
    out = charge_sass_issue(
        [fma, add, load, div],
        {0: SassIssue(0.5, fp32=0.5), 1: SassIssue(0.5, alu=0.5), 2: SassIssue(2.0),
         3: SassIssue(12.0, fp32=6.0)}, program, MACHINE)
    # half of the fma's executions were folded away: half the slots and pipe time
    assert (out[0].slots, out[0].issue, out[0].latency, out[0].also) == (0.5, 0.5, 4.0, ())
    # an integer add is the ALU's: two cycles a SASS instruction, for the half left
    assert (out[1].pipe, out[1].slots, out[1].issue) == (ALU, 0.5, 1.0)
    # a load's address arithmetic takes scheduler slots, not the load/store path
    assert (out[2].slots, out[2].issue) == (2.0, 1.0)
    # a sequence calibrated whole keeps its calibration
    assert out[3] == div
    # more SASS than PTX takes slots, not more of the PTX instruction's pipe
    more = _charged_one(fma, SassIssue(3.0, fp32=1.0), InstrClass.FP32)
    assert (more.slots, more.issue) == (3.0, 1.0)


def test_an_integer_instruction_made_a_multiply_add_holds_the_heavy_half():
    shl = Op(K_ALU, ALU, 1.0, 1, 5.0, (0,), (1,))
    out = _charged_one(shl, SassIssue(1.0, heavy=1.0), InstrClass.INT)
    assert (out.pipe, out.issue, out.also) == (HEAVY, 2.0, ((FMA, 1.0),))


def test_a_float_compare_is_the_alus():
    setp = Op(K_ALU, FMA, 1.0, 1, 4.0, (0,), (1,))
    out = _charged_one(setp, SassIssue(1.0, alu=1.0), InstrClass.FP32)
    assert (out.pipe, out.issue, out.also) == (ALU, 2.0, ())


def test_a_special_function_keeps_its_pipe_and_holds_its_wrappers_pipes():
    # rsqrt.approx.f32: FSETP, FMUL, MUFU.RSQ, FMUL
    rsqrt = Op(K_ALU, SFU, 8.0, 1, 39.0, (0,), (1,))
    out = _charged_one(rsqrt, SassIssue(4.0, alu=1.0, fp32=2.0, xu=1.0), InstrClass.SFU)
    assert (out.pipe, out.slots, out.issue) == (SFU, 4.0, 8.0)
    assert sorted(out.also) == [(ALU, 2.0), (FMA, 2.0)]


def test_a_conversion_done_on_the_alu_frees_the_conversion_pipe():
    cvt = Op(K_ALU, CVT, 4.0, 1, 11.0, (0,), (1,))
    out = _charged_one(cvt, SassIssue(1.0, alu=1.0), InstrClass.CONVERSION)
    assert (out.pipe, out.issue, out.also) == (CVT, 0.0, ((ALU, 2.0),))


def test_a_folded_instruction_holds_no_pipe():
    mov = Op(K_ALU, ALU, 1.0, 1, 5.0, (0,), (1,))
    out = _charged_one(mov, SassIssue(0.0), InstrClass.MOVE)
    assert (out.pipe, out.slots, out.issue, out.also) == (CTRL, 0.0, 0.0, ())


def test_pcs_without_ratio_are_left_alone():
    fma = Op(K_ALU, FMA, 1.0, 1, 4.0, (0,), (1,))
    assert charge_sass_issue([fma], {}, _program(InstrClass.FP32), MACHINE) == [fma]


def test_the_machine_takes_the_alu_width_from_the_spec_and_the_multiply_from_calibration():
    from kerncast.sim import machine_for

    h100 = machine_for("h100")
    assert h100.alu_cycles == 2.0  # 64 INT32 lanes an SM, four schedulers
    assert h100.heavy_cycles == h100.issue["int_mul"] == 2.0


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
    issued = sum(ratios[pc].slots * counts[pc] for pc in ratios)
    total = map_sass(trace, arch="sm_90").total
    # every executed SASS instruction that names a PTX line is charged to one of its pcs
    assert 0.9 * total <= issued <= total
    # ptxas turns this kernel's PTX into fewer SASS instructions (cvt and address
    # arithmetic folded, logf and expf shorter)
    assert issued < 0.9 * float(np.sum(counts))


@needs_tools
@pytest.mark.toolchain
@pytest.mark.parametrize("name, config", [
    ("arith_int32", {"bx": 256, "ilp": 2}), ("arith_fp32", {"bx": 256, "ilp": 2}),
    ("coulomb_potential", {"bx": 32, "by": 4, "unroll": 4})])
def test_sass_pipes_match_nsight_computes_pipe_counters(name, config):
    """The share of each pipe's SASS, from the mapped SASS of one block, against the
    pipe counters Nsight Compute measured for the whole launch on an H100."""
    import pandas as pd

    from kerncast.corpus import get_kernel, make_args
    from kerncast.emu import emulate
    from kerncast.sim import cached_unit
    from kerncast.sim._sassissue import pc_issue_ratios

    kernel = get_kernel(name)
    launch = kernel.launch("medium", config)
    tu, module = cached_unit(kernel.instance(launch)[0], "h100")
    args = make_args(kernel, launch, poison_outputs=False)
    trace = emulate(module, launch, [args[a.name] for a in kernel.spec.args], [0],
                    entry=tu.kernel(kernel.entry).entry, inplace=True, exact=False).trace
    counts = trace.pc_counts[0]
    issue = pc_issue_ratios(trace, "sm_90").items()
    total = sum(sass.slots * counts[pc] for pc, sass in issue)
    alu = sum(sass.alu * counts[pc] for pc, sass in issue) / total
    fma = sum((sass.fp32 + sass.heavy) * counts[pc] for pc, sass in issue) / total
    xu = sum(sass.xu * counts[pc] for pc, sass in issue) / total
    rows = pd.read_parquet(Path(__file__).resolve().parents[2] / "data" / "h100"
                           / "counters.parquet")
    row = rows[(rows.kernel == name) & (rows["size"] == "medium") & (rows.sample_k == 0)
               & (rows.config == ",".join(f"{k}={v}" for k, v in config.items()))].iloc[0]
    executed = row["smsp__inst_executed.sum"]
    assert alu == pytest.approx(row["smsp__inst_executed_pipe_alu.sum"] / executed, abs=0.02)
    assert fma == pytest.approx(row["smsp__inst_executed_pipe_fma.sum"] / executed, abs=0.02)
    assert xu == pytest.approx(row["smsp__inst_executed_pipe_xu.sum"] / executed, abs=0.02)


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


def test_an_instruction_folded_into_its_user_takes_no_latency():
    shr = Op(K_ALU, ALU, 1.0, 1, 5.0, (0,), (1,))     # folded into the add's LEA.HI
    add = Op(K_ALU, ALU, 1.0, 1, 5.0, (1, 0), (2,))
    lo = Op(K_ALU, HEAVY, 2.0, 1, 5.0, (3, 4), (5,))  # mul.lo: no SASS of its own...
    hi = Op(K_ALU, HEAVY, 2.0, 1, 5.0, (3, 4), (6,))  # ...its mul.hi's IMAD.WIDE gives both
    out = charge_sass_issue([shr, add, lo, hi],
                            {0: SassIssue(0.0), 1: SassIssue(1.0, alu=1.0), 2: SassIssue(0.0),
                             3: SassIssue(1.0, heavy=1.0)},
                            _program(InstrClass.INT, InstrClass.INT, InstrClass.INT_MUL,
                                     InstrClass.INT_MUL), MACHINE)
    assert (out[0].slots, out[0].issue, out[0].latency) == (0.0, 0.0, 0.0)
    assert out[1].latency == 5.0
    assert (out[2].slots, out[2].latency) == (0.0, 5.0)


@needs_tools
@pytest.mark.toolchain
def test_the_sass_places_the_second_sectors_loads_after_the_first_atoms_work():
    """``coulomb_potential`` reads four atoms (two 32-byte sectors) a trip; ptxas loads
    the second sector into registers the first two atoms' arithmetic freed."""
    from kerncast.corpus import get_kernel, make_args
    from kerncast.emu import emulate
    from kerncast.sim import cached_unit
    from kerncast.sim._sassissue import read_sass

    kernel = get_kernel("coulomb_potential")
    launch = kernel.launch("medium", {"bx": 64, "by": 1, "unroll": 4})
    tu, module = cached_unit(kernel.instance(launch)[0], "h100")
    args = make_args(kernel, launch, poison_outputs=False)
    trace = emulate(module, launch, [args[a.name] for a in kernel.spec.args], [0],
                    entry=tu.kernel(kernel.entry).entry, inplace=True, exact=False).trace
    places = read_sass(trace, "sm_90").places
    items = trace.program.items

    def placed(opcode, vector=None):
        return [places[pc] for pc, item in enumerate(items) if pc in places
                and item.kind == "op" and item.instr.opcode == opcode
                and (vector is None or item.instr.vector == vector)]

    loads, roots = placed("ld", 4), placed("rsqrt")
    assert len(loads) == 4
    first, second = sorted(loads)[:2], sorted(loads)[2:]
    assert max(first) < min(roots) < min(second)
    assert all(pc not in places for pc, item in enumerate(items)
               if item.kind == "op" and item.instr.opcode == "ld"
               and item.instr.space == "param")  # ptxas reads parameters as constants
