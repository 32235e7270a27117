"""CFG, dominators, post-dominators, loops, reconvergence and divergence on small kernels."""

from __future__ import annotations

import pytest

from kerncast.ptx import (
    build_cfg, divergence, dominators, liveness, loops, parse, post_dominators,
    read_registers, reconvergence_points, written_registers,
)
from tests.ptx._util import kernel

DECLS = """
    .reg .pred %p<8>;
    .reg .b32 %r<16>;
    .reg .b64 %rd<4>;
"""

IF_ELSE = DECLS + """
    ld.param.u32 %r1, [n];
    @%p1 bra ELSE;
    add.s32 %r2, %r1, 1;
    bra.uni END;
ELSE:
    sub.s32 %r2, %r1, 1;
END:
    st.global.u32 [%rd1], %r2;
    ret;
"""

LOOP_WITH_BREAK = DECLS + """
    mov.u32 %r1, 0;
LOOP:
    setp.ge.s32 %p1, %r1, %r9;
    @%p1 bra DONE;
    ld.global.u32 %r2, [%rd1];
    setp.eq.s32 %p2, %r2, 0;
    @%p2 bra DONE;
    add.s32 %r1, %r1, 1;
    bra.uni LOOP;
DONE:
    ret;
"""

SWITCH_CHAIN = DECLS + """
    setp.eq.s32 %p1, %r1, 0;
    @%p1 bra C0;
    setp.eq.s32 %p2, %r1, 1;
    @%p2 bra C1;
    setp.eq.s32 %p3, %r1, 2;
    @%p3 bra C2;
    mov.u32 %r2, 9;
    bra.uni END;
C0: mov.u32 %r2, 1;
    bra.uni END;
C1: mov.u32 %r2, 2;
    bra.uni END;
C2: mov.u32 %r2, 3;
END:
    st.global.u32 [%rd1], %r2;
    ret;
"""

NESTED_LOOPS = DECLS + """
    mov.u32 %r1, 0;
OUTER:
    mov.u32 %r2, 0;
INNER:
    add.s32 %r3, %r3, %r2;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r9;
    @%p1 bra INNER;
    add.s32 %r1, %r1, 1;
    setp.lt.s32 %p2, %r1, %r9;
    @%p2 bra OUTER;
    mov.u32 %r4, 0;
SECOND:
    add.s32 %r4, %r4, 1;
    setp.lt.s32 %p3, %r4, 4;
    @%p3 bra SECOND;
    ret;
"""


def func(body: str):
    return parse(kernel(body)).function("k")


def shape(cfg):
    return [(b.start, b.end, b.successors) for b in cfg.blocks]


def test_if_else_blocks_dominators_and_reconvergence():
    f = func(IF_ELSE)
    cfg = build_cfg(f)
    assert shape(cfg) == [(0, 2, (2, 1)), (2, 4, (3,)), (4, 5, (3,)), (5, 7, ())]
    assert [b.predecessors for b in cfg.blocks] == [(), (0,), (0,), (1, 2)]
    assert cfg.exit_blocks == (3,) and cfg.entry == 0
    assert cfg.blocks[2].labels == ("ELSE",) and cfg.block_at(5).index == 3
    assert dominators(f).idom == (None, 0, 0, 0)
    pdom = post_dominators(f)
    assert pdom.root == 4 and pdom.idom == (3, 3, 3, 4, None)
    assert reconvergence_points(f) == {1: 5}
    assert loops(f) == ()


def test_cfg_is_cached_per_function():
    f = func(IF_ELSE)
    assert build_cfg(f) is build_cfg(f)


def test_the_cfg_cache_lets_functions_go(monkeypatch):
    import gc
    import weakref

    from kerncast.ptx import _cfg

    monkeypatch.setattr(_cfg, "CACHE_SIZE", 4, raising=False)
    alive = []
    for _ in range(10):
        f = func(IF_ELSE)
        build_cfg(f)
        alive.append(weakref.ref(f))
    del f
    gc.collect()
    assert sum(ref() is not None for ref in alive) == 4  # the last four, no more
    kept = alive[-1]()
    assert kept is not None and build_cfg(kept) is build_cfg(kept)


def test_loop_with_break():
    f = func(LOOP_WITH_BREAK)
    cfg = build_cfg(f)
    assert shape(cfg) == [(0, 1, (1,)), (1, 3, (4, 2)), (3, 6, (4, 3)), (6, 8, (1,)),
                          (8, 9, ())]
    assert dominators(cfg).idom == (None, 0, 1, 2, 1)
    assert post_dominators(cfg).idom == (1, 4, 4, 1, 5, None)
    (loop,) = loops(cfg)
    assert (loop.header, loop.blocks, loop.latches, loop.depth, loop.parent) == \
        (1, frozenset({1, 2, 3}), (3,), 1, None)
    assert loop.exits == ((1, 4), (2, 4))
    assert reconvergence_points(cfg) == {2: 8, 5: 8}


def test_switch_like_chain():
    f = func(SWITCH_CHAIN)
    cfg = build_cfg(f)
    assert len(cfg.blocks) == 8 and len(cfg.edges) == 10
    assert dominators(cfg).idom == (None, 0, 1, 2, 0, 1, 2, 0)
    assert post_dominators(cfg).idom[:8] == (7, 7, 7, 7, 7, 7, 7, 8)
    assert reconvergence_points(cfg) == {1: 13, 3: 13, 5: 13}


def test_nested_loops_depth_and_parent():
    cfg = build_cfg(func(NESTED_LOOPS))
    outer, inner, second = cfg.loops
    assert (outer.header, outer.depth, outer.parent) == (1, 1, None)
    assert (inner.header, inner.depth, inner.parent) == (2, 2, 0)
    assert inner.blocks < outer.blocks
    assert (second.depth, second.parent, second.blocks) == (1, None, frozenset({5}))
    assert cfg.dominators.dominates(1, 2) and not cfg.dominators.dominates(2, 1)
    assert cfg.innermost_loops == (None, 0, 1, 0, None, 2, None)
    assert [cfg.loop_depth(b) for b in range(len(cfg.blocks))] == [0, 1, 2, 1, 0, 1, 0]


def test_predicated_return_has_a_fallthrough_and_exits():
    cfg = build_cfg(func(DECLS + "@%p1 ret;\nadd.s32 %r1, %r1, 1;\n@%p2 exit;\nret;"))
    assert shape(cfg) == [(0, 1, (1,)), (1, 3, (2,)), (3, 4, ())]
    assert [b.exits for b in cfg.blocks] == [True, True, True]
    assert post_dominators(cfg).idom == (3, 3, 3, None)


def test_branch_to_the_end_of_the_body_makes_an_empty_exit_block():
    f = func(DECLS + "@%p1 bra END;\nadd.s32 %r1, %r1, 1;\nEND:")
    cfg = build_cfg(f)
    assert shape(cfg) == [(0, 1, (2, 1)), (1, 2, (2,)), (2, 2, ())]
    assert cfg.blocks[2].exits and cfg.block_of == (0, 1, 2)
    assert reconvergence_points(f) == {0: 2}


def test_unreachable_code_and_endless_loop():
    cfg = build_cfg(func(DECLS + """
    @%p1 bra SPIN;
    ret;
    add.s32 %r1, %r1, 1;
SPIN:
    bra.uni SPIN;
"""))
    assert shape(cfg) == [(0, 1, (3, 1)), (1, 2, ()), (2, 3, (3,)), (3, 4, (3,))]
    assert not cfg.dominators.reachable(2)
    assert cfg.post_dominators.idom[3] is None  # never reaches the exit
    # every path from the branch that reaches the exit passes the 'ret' block
    assert cfg.reconvergence == {0: 1}
    assert [loop.header for loop in cfg.loops] == [3]


def test_empty_body():
    cfg = build_cfg(func(""))
    assert shape(cfg) == [(0, 0, ())] and cfg.exit_blocks == (0,)


def test_declaration_has_no_cfg():
    module = parse(".version 8.0\n.target sm_90\n.extern .func f();\n.entry k() { ret; }")
    with pytest.raises(ValueError, match="no body"):
        build_cfg(module.function("f"))


def test_registers_read_and_written():
    f = func(DECLS + """
    .reg .v2 .b32 %v;
    @%p1 st.global.v2.u32 [%rd1+8], {%r1, %r2};
    setp.lt.s32 %p2|%p3, %r4, %r5;
    mov.b64 {%r6, %r7}, %rd2;
    atom.global.add.u32 %r8, [%rd3], %r9;
    ret;""")
    st, setp, mov, atom, ret = f.instructions
    assert written_registers(st) == () and read_registers(st) == ("%p1", "%rd1", "%r1", "%r2")
    assert written_registers(setp) == ("%p2", "%p3")
    assert written_registers(mov) == ("%r6", "%r7") and read_registers(mov) == ("%rd2",)
    assert written_registers(atom) == ("%r8",) and read_registers(atom) == ("%rd3", "%r9")
    assert written_registers(ret) == read_registers(ret) == ()


def test_liveness():
    f = func(IF_ELSE)
    live = liveness(f)
    assert live.live_in[3] == {"%r2", "%rd1"}
    assert live.live_in[0] == {"%p1", "%rd1"}


DIVERGENCE = DECLS + """
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    setp.eq.u32 %p2, %r3, 0;
    @%p2 bra SKIP;
    add.u32 %r4, %r4, 1;
SKIP:
    mov.u32 %r5, 0;
LOOP:
    add.u32 %r5, %r5, 1;
    setp.lt.u32 %p3, %r5, %r1;
    @%p3 bra LOOP;
    mov.u32 %r6, 0;
LANES:
    add.u32 %r6, %r6, 1;
    setp.lt.u32 %p4, %r6, %r2;
    @%p4 bra LANES;
    and.b32 %r7, %r6, 1;
    setp.eq.u32 %p5, %r7, 0;
    @%p5 bra DONE;
    add.u32 %r8, %r8, 1;
DONE:
    ret;
"""


def test_divergent_branch_candidates():
    f = func(DIVERGENCE)
    result = divergence(f)
    branches = {f.instructions[i].operands[0].name for i in result.branches}
    # %tid bound test, the loop over a lane-dependent bound, and a value merged from it
    assert branches == {"DONE", "LANES"}
    assert len(result.branches) == 3
    assert {"%r2", "%p1", "%r6", "%p4", "%r7", "%p5"} <= result.varying
    assert not {"%r1", "%r3", "%p2", "%r5", "%p3"} & result.varying
    assert build_cfg(f).divergent_branches == result.branches
