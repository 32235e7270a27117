"""Function summaries for ``kerncast inspect``."""

from __future__ import annotations

import json

from kerncast.ptx import parse, summarize, summarize_module
from tests.ptx._util import DATA, kernel

BODY = """
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b8 tile[256];
    .local .align 4 .b8 depot[16];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mov.u32 %r3, 0;
OUTER:
    mov.u32 %r4, 0;
INNER:
    add.u32 %r4, %r4, 1;
    setp.lt.u32 %p2, %r4, %r1;
    @%p2 bra INNER;
    add.u32 %r3, %r3, 1;
    setp.lt.u32 %p2, %r3, %r1;
    @%p2 bra OUTER;
    bar.sync 0;
DONE:
    ret;
"""


def test_summary_of_a_kernel_with_nested_loops():
    summary = summarize(parse(kernel(BODY)).function("k"))
    assert (summary.name, summary.is_entry, summary.params) == ("k", True, 1)
    assert summary.instructions == 14 and summary.blocks == 7 and summary.edges == 9
    assert [(loop.header_label, loop.depth) for loop in summary.loops] == \
        [("OUTER", 1), ("INNER", 2)]
    assert summary.max_loop_depth == 2 and summary.conditional_branches == 3
    assert summary.divergent_branches == (3,)
    assert summary.registers == {"b32": 8, "b64": 3, "pred": 3}
    assert (summary.shared_bytes, summary.local_bytes) == (256, 16)
    assert summary.mix == {"int": 5, "move": 3, "ld_param": 1, "barrier": 1, "branch": 3,
                           "control": 1}
    data = json.loads(json.dumps(summary.to_dict()))
    assert data["loops"][1] == {"header_block": 3, "header_label": "INNER", "depth": 2,
                                "blocks": 1, "parent": 0}


def test_module_summary_lists_kernels_first():
    module = parse((DATA / "stress_sm90.ptx").read_text())
    summaries = summarize_module(module)
    kinds = [s.is_entry for s in summaries]
    assert kinds == sorted(kinds, reverse=True)
    assert {s.name for s in summaries} >= {"warp_ops", "atomics", "_Z4polyfi"}
    assert "vprintf" not in {s.name for s in summaries}
