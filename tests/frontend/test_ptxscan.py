"""The signature scan: targets, entries, parameters, launch bounds, mangled names."""

from __future__ import annotations

import pytest

from kerncast import InputError
from kerncast.frontend import base_name, scan_entries
from kerncast.frontend._ptxscan import scan_target, scan_version

MODULE = """\
// .entry commented_out(.param .u32 x) { }
.version 7.1
.target sm_86, texmode_independent
.address_size 64

.extern .func (.param .b32 r) helper (.param .b32 a);
.visible .entry first(
\t.param .u64 first_param_0,   // a pointer
\t.param .f64 first_param_1,
\t.param .align 16 .b8 first_param_2[24],
\t.param .u16 first_param_3
)
.maxntid 256, 1, 1
.minnctapersm 3
.maxnreg 64
{
\tret;
}
.weak .entry _ZN2ns4scanIiEEvPT_(
\t.param .u64 .ptr .global .align 16 _ZN2ns4scanIiEEvPT__param_0
)
.reqntid 32, 4
{
\tret;
}
.entry noargs
{
\tret;
}
/* .entry also_commented() { } */
"""


def test_module_header():
    assert scan_target(MODULE) == "sm_86"
    assert scan_version(MODULE) == "7.1"
    assert scan_target(".version 9.0\n.target sm_90a\n") == "sm_90a"
    assert scan_target("no header") is None


def test_entries_in_file_order_without_comments_or_declarations():
    assert [e.name for e in scan_entries(MODULE)] == ["first", "_ZN2ns4scanIiEEvPT_", "noargs"]


def test_parameters():
    first, scan, noargs = scan_entries(MODULE)
    assert [(p.index, p.type, p.size, p.align, p.count) for p in first.params] == [
        (0, "u64", 8, 8, 1), (1, "f64", 8, 8, 1), (2, "b8", 24, 16, 24), (3, "u16", 2, 2, 1)]
    assert first.params[0].name == "first_param_0"
    (ptr,) = scan.params
    assert (ptr.type, ptr.space, ptr.align) == ("u64", "global", 16)
    assert noargs.params == ()
    assert first.linkage == "visible" and scan.linkage == "weak" and noargs.linkage == ""


def test_launch_bounds():
    first, scan, noargs = scan_entries(MODULE)
    assert first.bounds.max_threads == (256, 1, 1) and first.bounds.thread_limit == 256
    assert first.bounds.min_blocks_per_sm == 3 and first.bounds.max_registers == 64
    assert scan.bounds.required_threads == (32, 4) and scan.bounds.thread_limit == 128
    assert noargs.bounds.thread_limit is None
    assert first.bounds.to_dict()["thread_limit"] == 256


@pytest.mark.parametrize("symbol,name", [
    ("matmul_tiled", "matmul_tiled"),
    ("_Z2k2IfEvPT_d", "k2"),
    ("_Z6kernelPfS_i", "kernel"),
    ("_ZN2ns4scanIiEEvPT_", "ns::scan"),
    ("_Z", "_Z"),
])
def test_base_names(symbol, name):
    assert base_name(symbol) == name


def test_unreadable_parameter_type():
    with pytest.raises(InputError, match="PTX parameter type .weird"):
        scan_entries(".entry k(.param .weird x) { ret; }")
