"""Executed SASS from the real ptxas output: parsing, block counts, unrolled loops,
the cache of assembled modules and the fall-back without ptxas."""

import numpy as np
import pytest

from kerncast import ToolchainError
from kerncast.emu import emulate
from kerncast.frontend import _process
from kerncast.ptx import parse
from kerncast.trace import estimate_sass
from kerncast.trace import _sasscode
from kerncast.trace._sasscode import assemble, parse_disassembly
from kerncast.trace._sassmap import map_sass, printed_module
from tests.emu.ptxkit import HEADER

# A loop over n elements of src (n a parameter), the sum stored per thread.
LOOP = f"""{HEADER}.visible .entry loop(.param .u64 src, .param .u64 dst, .param .u32 n)
{{
.reg .pred %p<3>; .reg .u32 %r<8>; .reg .u64 %rd<8>; .reg .f32 %f<4>;
ld.param.u64 %rd1, [src]; ld.param.u64 %rd2, [dst]; ld.param.u32 %r1, [n];
mov.u32 %r2, %tid.x;
mov.f32 %f1, 0f00000000;
mov.u32 %r3, 0;
setp.eq.u32 %p1, %r1, 0;
@%p1 bra DONE;
LOOP:
mul.wide.u32 %rd3, %r3, 4;
add.u64 %rd4, %rd1, %rd3;
ld.global.f32 %f2, [%rd4];
add.f32 %f1, %f1, %f2;
add.u32 %r3, %r3, 1;
setp.lt.u32 %p2, %r3, %r1;
@%p2 bra LOOP;
DONE:
mul.wide.u32 %rd5, %r2, 4;
add.u64 %rd6, %rd2, %rd5;
st.global.f32 [%rd6], %f1;
ret;
}}
"""

needs_tools = pytest.mark.skipif(bool(_sasscode.missing_tools()),
                                 reason="needs ptxas and nvdisasm")


def _run(n: int, warps: int = 2):
    module = parse(LOOP)
    src = np.arange(64, dtype=np.float32)
    result = emulate(module, ((1,), (32 * warps,)), [src, np.zeros(32 * warps, np.float32),
                                                     np.uint32(n)])
    assert result.outputs["dst"][0] == src[:n].sum()
    return module, result.trace


def _canned(module) -> str:
    """SASS as ptxas could write it for LOOP, unrolled by 4 with a remainder loop."""
    _, line_of = printed_module(module)
    lines = [line_of[id(i)] for i in module.kernel("loop").instructions]
    ld_n, setp0, bra0, ld, addf, add, setp, bra, st, ret = (
        lines[2], lines[6], lines[7], lines[10], lines[11], lines[12], lines[13], lines[14],
        lines[17], lines[18])
    offset = iter(range(0, 4096, 16))

    def ins(line, text):
        return f'\t//## File ".nv_debug_ptx_txt", line {line}\n' \
               f"        /*{next(offset):04x}*/                   {text} ;"

    body = [x for _ in range(4) for x in (ins(ld, "LDG.E R4, desc[UR4][R2.64]"),
                                          ins(addf, "FADD R5, R5, R4"))]
    return "\n".join([
        '\t.section\t.text.loop,"ax",@progbits',
        "        .type           loop,@function",
        "loop:",
        ins(ld_n, "LDC R0, c[0x0][0x220]"),
        ins(setp0, "ISETP.NE.AND P0, PT, R0, RZ, PT"),
        ins(bra0, "@!P0 BRA `(.L_x_3)"),
        ins(setp, "ISETP.GE.U32.AND P1, PT, R0, 0x4, PT"),
        ins(bra, "@!P1 BRA `(.L_x_1)"),
        ins(setp, "PLOP3.LUT P2, PT, PT, PT, PT, 0x8, 0x0"),
        ".L_x_0:", *body,
        ins(add, "IADD3 R3, R3, 0x4, RZ"),
        ins(setp, "ISETP.GE.U32.AND P0, PT, R6, R3, PT"),
        ins(bra, "@P0 BRA `(.L_x_0)"),
        ".L_x_1:",
        ins(setp, "ISETP.NE.AND P0, PT, R7, RZ, PT"),
        ins(bra, "@!P0 BRA `(.L_x_3)"),
        ".L_x_2:",
        ins(ld, "LDG.E R4, desc[UR4][R2.64]"),
        ins(addf, "FADD R5, R5, R4"),
        ins(add, "IADD3 R3, R3, 0x1, RZ"),
        ins(setp, "ISETP.NE.AND P0, PT, R7, R3, PT"),
        ins(bra, "@P0 BRA `(.L_x_2)"),
        ".L_x_3:",
        ins(st, "STG.E desc[UR4][R2.64], R5"),
        ins(ret, "EXIT"),
        ".L_x_4:",
        "        /*0400*/                   BRA `(.L_x_4);",
        "        /*0410*/                   NOP;",
    ]) + "\n"


def test_parsing_cuts_blocks_at_labels_and_branches():
    module, _ = _run(3)
    code = parse_disassembly(_canned(module))
    func = code.function("loop")
    sizes = [len(b) for b in func.blocks]
    assert sizes == [3, 2, 1, 11, 2, 5, 2, 1, 1]
    assert [b.successors for b in func.blocks] == [(1, 6), (2, 4), (3,), (4, 3), (5, 6), (6, 5),
                                                    (), (7,), ()]
    assert func.reachable() == {0, 1, 2, 3, 4, 5, 6}  # the trailing self-loop is padding
    first = func.blocks[0].instructions
    assert first[2].guard == "!P0" and first[2].target == ".L_x_3" and first[2].conditional


def test_parsing_reads_jump_tables_subroutines_and_inherited_lines():
    text = "\n".join([
        '\t.section\t.text.k,"ax",@progbits',
        "k:",
        '\t//## File "p", line 10',
        "        /*0000*/                   BRX R4 -0x10       "
        '(*"BRANCH_TARGETS .L_x_1,.L_x_2"*);',
        ".L_x_1:",
        "        /*0010*/                   BSYNC B0 ;",
        '\t//## File "p", line 12',
        "        /*0020*/                   CALL.REL.NOINC `($k$f) ;",
        ".L_x_2:",
        "        /*0030*/                   EXIT ;",
        "        .type           $k$f,@function",
        "$k$f:",
        '\t//## File "p", line 20',
        "        /*0040*/                   RET.REL.NODEC R8 `(k) ;",
    ]) + "\n"
    code = parse_disassembly(text)
    k = code.function("k")
    assert k.blocks[0].successors == (1, 2)
    assert k.blocks[0].last.targets == (".L_x_1", ".L_x_2")
    bsync, call = k.blocks[1].instructions
    assert bsync.inherited and bsync.line == 10 and not call.inherited and call.line == 12
    assert code.function("$k$f").blocks[0].last.base == "RET"


@pytest.mark.parametrize("n,main,rest", [(11, 2, 3), (8, 2, 0), (3, 0, 3)])
def test_unrolled_loop_runs_trip_over_four_times_plus_remainder(n, main, rest):
    module, trace = _run(n)
    mapped = map_sass(trace, code=parse_disassembly(_canned(module)))
    # per warp: entry 3, loop set-up 2 and (when the main loop runs) 1, main body 11,
    # remainder test 2, remainder 5, exit 2
    counts = {index: count for _, index, count, _ in mapped.blocks}
    into = 2 if main else 0
    assert counts == pytest.approx({0: 2, 1: 2, 2: into, 3: 2 * main, 4: 2, 5: 2 * rest, 6: 2})
    assert mapped.total == pytest.approx(2 * (3 + 2 + 11 * main + 2 + 5 * rest + 2) + into)
    assert mapped.loops[0]["copies"] == [4, 1]
    assert mapped.by_opcode["LDG"] == pytest.approx(2 * (4 * main + rest))


def test_slow_path_subroutines_are_not_counted():
    module, trace = _run(3)
    text = _canned(module).replace(
        "LDC R0, c[0x0][0x220]", "CALL.REL.NOINC `($__internal_0_$__slowpath)")
    text += "\n".join([
        '\t.section\t.text.$__internal_0_$__slowpath,"ax",@progbits',
        "$__internal_0_$__slowpath:",
        "        /*0000*/                   RET.REL.NODEC R8 `(loop) ;"]) + "\n"
    mapped = map_sass(trace, code=parse_disassembly(text))
    assert mapped.blocks[0][2] == 0  # the block calling it: taken as never run
    assert {name for name, *_ in mapped.blocks} == {"loop"}


@needs_tools
@pytest.mark.parametrize("trip", [64, 2048])
def test_constant_trip_loop_matches_the_real_sass(trip):
    """A loop of a constant trip count: ptxas unrolls it fully (64), or (2048) runs
    ``k`` iterations per pass of a one-block SASS loop (``k`` loads in it) with the
    rest peeled into straight code, so each warp runs the straight code once and the
    SASS loop (trip - loads outside it) / k times."""
    text = LOOP.replace("ld.param.u32 %r1, [n];", f"mov.u32 %r1, {trip};")
    module = parse(text)
    src = np.arange(trip, dtype=np.float32)
    trace = emulate(module, ((1,), (64,)), [src, np.zeros(64, np.float32), np.uint32(0)]).trace
    code = assemble(printed_module(module)[0], name="loop")
    func = code.function("loop")
    blocks = [b for b in func.blocks if b.index in func.reachable()]
    loops = [b for b in blocks if b.index in b.successors]
    assert len(loops) == (trip > 64), "expected one single-block SASS loop, or none"
    loads = sum(i.base == "LDG" for b in blocks for i in b.instructions)
    straight = sum(len(b) for b in blocks if b not in loops)
    runs = 0
    if loops:
        k = sum(i.base == "LDG" for i in loops[0].instructions)
        outside = loads - k
        assert (trip - outside) % k == 0
        runs = (trip - outside) // k * len(loops[0])
    else:
        assert loads == trip
    est = estimate_sass(trace)
    assert est["method"] == "sass" and est["fallback"] == ""
    assert est["total"] == 2 * (straight + runs)
    assert est["total"] == pytest.approx(sum(v for key, v in est.items()
                                             if key not in ("total", "method", "fallback")))


@needs_tools
def test_runtime_trip_loop_keeps_one_load_per_element():
    """Whatever ptxas's unrolling, the SASS loads executed are the PTX loads."""
    _, trace = _run(37)
    est = estimate_sass(trace, method="sass")
    assert est["LDG"] == 2 * 37
    assert est["STG"] == 2


def test_without_ptxas_the_factor_model_answers(monkeypatch):
    _, trace = _run(5)
    monkeypatch.setattr(_sasscode, "find_tools", lambda: (None, None))
    est = estimate_sass(trace)
    assert est["method"] == "factors" and "ptxas not found" in est["fallback"]
    assert est["total"] == estimate_sass(trace, method="factors")["total"]
    with pytest.raises(ToolchainError, match="ptxas not found"):
        estimate_sass(trace, method="sass")


def test_given_factors_use_the_factor_model():
    _, trace = _run(5)
    est = estimate_sass(trace, factors={"int32": 2.0})
    assert est["method"] == "factors" and est["fallback"] == ""


@needs_tools
def test_ptxas_failure_names_the_kernel_and_quotes_ptxas(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path))
    bad = LOOP.replace("add.f32 %f1, %f1, %f2;", "add.f32 %f1, %f1, %f9;")
    with pytest.raises(ToolchainError, match=r"(?s)ptxas -arch=sm_90 failed on loop: .*%f9"):
        assemble(bad, name="loop")


@needs_tools
def test_assembled_modules_are_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path))
    text = printed_module(parse(LOOP))[0]
    first = assemble(text, name="loop")
    calls = []
    monkeypatch.setattr(_process, "run_tool", lambda argv, **kw: calls.append(argv))
    again = assemble(text, name="loop")
    assert calls == [] and again == first
    assert list(tmp_path.rglob("*.json"))


def test_a_module_is_assembled_from_its_own_text_where_lines_name_instructions():
    one_per_line = LOOP.replace("; ", ";\n")
    module = parse(one_per_line)
    text, line_of = printed_module(module)
    assert text == one_per_line
    lines = text.splitlines()
    for ins in module.kernel("loop").instructions:
        assert ins.opcode in lines[line_of[id(ins)] - 1]
    shared = parse(LOOP)  # "ld.param ...; ld.param ...;" on one line: printed instead
    text, line_of = printed_module(shared)
    assert text != LOOP and len(set(line_of.values())) == len(line_of)
    with_loc = parse(one_per_line.replace(".visible", '.file 1 "k.cu"\n.visible')
                     .replace("mov.f32", ".loc 1 7 0\nmov.f32"))
    assert printed_module(with_loc)[0] != with_loc.text  # -lineinfo would name k.cu's lines


@needs_tools
def test_a_jump_table_keeps_its_targets(tmp_path, monkeypatch):
    """nvdisasm runs without its dataflow analysis except where the code branches
    indirectly: the jump table of a switch (corpus branch_divergence) keeps its targets."""
    from kerncast.corpus import get_kernel
    from kerncast.frontend import compile as compile_source

    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path))
    kernel = get_kernel("branch_divergence")
    tu = compile_source(str(kernel.source_path("cuda")), lang="cuda",
                        defines=kernel.launch("small").defines)
    text = printed_module(tu.module)[0]
    argv = []
    real = _process.run_tool
    monkeypatch.setattr(_process, "run_tool", lambda a, **kw: argv.append(a) or real(a, **kw))
    code = assemble(text, name="branch_divergence")
    jumps = [b.last for f in code.functions.values() for b in f.blocks
             if b.last.opcode.startswith("BRX")]
    assert jumps and all(len(j.targets) >= 2 for j in jumps)
    cubin = argv[-1][-1]
    assert [a[1:] for a in argv[1:]] == [["-gp", "-ndf", cubin], ["-gp", cubin]]


@needs_tools
def test_one_module_assembled_by_two_threads_runs_the_tools_once(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path))
    text = printed_module(parse(LOOP.replace("loop", "twice")))[0]
    calls = []
    real = _process.run_tool
    monkeypatch.setattr(_process, "run_tool", lambda a, **kw: calls.append(a) or real(a, **kw))
    with ThreadPoolExecutor(2) as pool:
        first, second = pool.map(lambda _: assemble(text, name="twice"), range(2))
    assert first is second
    assert len(calls) == 2  # one ptxas, one nvdisasm


# An if/else on bit MASK of the thread index: MASK 1 splits every warp, 32 none.
BRANCHY = f"""{HEADER}.visible .entry branchy(.param .u64 dst)
{{
.reg .pred %p<2>; .reg .u32 %r<6>; .reg .u64 %rd<4>;
ld.param.u64 %rd1, [dst];
mov.u32 %r1, %tid.x;
and.b32 %r2, %r1, MASK;
setp.eq.u32 %p1, %r2, 0;
@%p1 bra ELSE;
mul.lo.u32 %r3, %r1, 3;
bra.uni JOIN;
ELSE:
add.u32 %r3, %r1, 7;
JOIN:
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
st.global.u32 [%rd3], %r3;
ret;
}}
"""


def _branchy_sass(module) -> str:
    """SASS as ptxas writes an if/else: BSSY before the branch, a BSYNC alone at the
    join (no line of its own)."""
    _, line_of = printed_module(module)
    lines = [line_of[id(i)] for i in module.kernel("branchy").instructions]
    tid, mask, setp, bra, mul, uni, add, wide, st, ret = (lines[1], lines[2], lines[3],
                                                          lines[4], lines[5], lines[6],
                                                          lines[7], lines[8], lines[10],
                                                          lines[11])
    offset = iter(range(0, 4096, 16))

    def ins(line, text):
        head = f'\t//## File ".nv_debug_ptx_txt", line {line}\n' if line else ""
        return f"{head}        /*{next(offset):04x}*/                   {text} ;"

    return "\n".join([
        '\t.section\t.text.branchy,"ax",@progbits',
        "branchy:",
        ins(tid, "S2R R0, SR_TID.X"),
        ins(mask, "LOP3.LUT R2, R0, 0x1, RZ, 0xc0, !PT"),
        ins(setp, "BSSY B0, `(.L_x_2)"),
        ins(setp, "ISETP.NE.U32.AND P0, PT, R2, RZ, PT"),
        ins(bra, "@!P0 BRA `(.L_x_0)"),
        ins(mul, "IMAD R3, R0, 0x3, RZ"),
        ins(uni, "BRA `(.L_x_1)"),
        ".L_x_0:",
        ins(add, "IADD3 R3, R0, 0x7, RZ"),
        ".L_x_1:",
        ins(None, "BSYNC B0"),
        ".L_x_2:",
        ins(wide, "IMAD.WIDE.U32 R4, R0, 0x4, R4"),
        ins(st, "STG.E desc[UR4][R4.64], R3"),
        ins(ret, "EXIT"),
    ]) + "\n"


@pytest.mark.parametrize("mask,split", [(1, True), (32, False)])
def test_every_divergent_path_issues_the_bsync_at_the_join(mask, split):
    module = parse(BRANCHY.replace("MASK", str(mask)))
    trace = emulate(module, ((1,), (64,)), [np.zeros(64, np.uint32)]).trace
    branch = next(pc for pc, item in enumerate(trace.program.items)
                  if item.instr.opcode == "bra" and item.instr.guard is not None)
    join = branch + 4  # mul.wide after the label JOIN
    assert trace.splits == ({(branch, join): 2} if split else {})
    mapped = map_sass(trace, code=parse_disassembly(_branchy_sass(module)))
    counts = [count for _, _, count, _ in mapped.blocks]
    paths = 2 if split else 1  # warps on each side of the branch
    assert counts == [2, paths, paths, 2 + (2 if split else 0), 2]
    assert mapped.total == 5 * 2 + 2 * paths + paths + counts[3] + 3 * 2


def test_sass_without_the_kernel_falls_back_to_the_factors(monkeypatch):
    _, trace = _run(5)
    monkeypatch.setattr(_sasscode, "find_tools", lambda: ("ptxas", "nvdisasm"))
    monkeypatch.setattr(_sasscode, "assemble", lambda *a, **k: parse_disassembly(""))
    est = estimate_sass(trace)
    assert est["method"] == "factors"
    assert est["fallback"].startswith("SASS mapping failed") and "loop" in est["fallback"]
    with pytest.raises(KeyError, match="no SASS function 'loop'"):
        estimate_sass(trace, method="sass")


def test_a_sectioninfo_line_does_not_end_the_code():
    # nvdisasm prints it after the section line for sm_80 and sm_86
    text = "\n".join([
        '\t.section\t.text.k,"ax",@progbits',
        '\t.sectioninfo\t@"SHI_REGISTERS=12"',
        "k:",
        "        /*0000*/                   MOV R1, c[0x0][0x28] ;",
        "        /*0010*/                   EXIT ;",
        '\t.section\t.nv.shared.k,"aw",@nobits',
        "        /*0020*/                   NOP ;",
    ]) + "\n"
    code = parse_disassembly(text)
    assert [i.base for b in code.function("k").blocks for i in b.instructions] == ["MOV", "EXIT"]
