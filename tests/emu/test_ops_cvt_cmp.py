"""Conversions (every width, rounding, saturation), moves with vectors, compares, selects."""

import numpy as np
import pytest

from tests.emu.fexact import F, round_exact, same
from tests.emu.ptxkit import run_elementwise

RNG = np.random.default_rng(5)


def test_float_to_int_rounding_and_saturation():
    a = np.array([1.5, 2.5, -1.5, -2.5, 0.49, -0.51, 3e9, -3e9, np.nan, np.inf, -np.inf,
                  2147483520.0] + list(RNG.uniform(-1e4, 1e4, 116)), np.float32)
    for mode, ref in (("rni", np.rint), ("rzi", np.trunc), ("rmi", np.floor), ("rpi", np.ceil)):
        got = run_elementwise(f"cvt.{mode}.s32.f32 %d, %a;", ["f32"], "s32", a)
        want = np.where(np.isnan(a), 0, np.clip(ref(a.astype(np.float64)), -2**31, 2**31 - 1))
        assert got.tolist() == want.astype(np.int64).tolist(), mode
    got = run_elementwise("cvt.rzi.u32.f32 %d, %a;", ["f32"], "u32", a)
    want = np.where(np.isnan(a), 0, np.clip(np.trunc(a.astype(np.float64)), 0, 2**32 - 1))
    assert got.tolist() == want.astype(np.int64).tolist()
    got = run_elementwise("cvt.rni.s64.f64 %d, %a;", ["f64"], "s64", a.astype(np.float64) * 1e10)
    big = a.astype(np.float64) * 1e10
    want = [0 if np.isnan(x) else int(max(min(np.rint(x), 2**63 - 1), -2**63)) for x in big]
    assert got.tolist() == want


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_int_to_float_rounds_exactly(mode):
    a = np.concatenate([[2**53 + 1, -(2**53 + 1), 2**63 - 1, -2**63, 2**24 + 1, 3],
                        RNG.integers(-2**62, 2**62, 122)]).astype(np.int64)
    got = run_elementwise(f"cvt.{mode}.f32.s64 %d, %a;", ["s64"], "f32", a)
    assert all(same(g, round_exact(F(0) + int(x), mode)) for g, x in zip(got, a))
    got = run_elementwise(f"cvt.{mode}.f64.s64 %d, %a;", ["s64"], "f64", a)
    assert all(same(g, round_exact(F(0) + int(x), mode, np.float64)) for g, x in zip(got, a))
    u = a.view(np.uint64)
    got = run_elementwise(f"cvt.{mode}.f32.u64 %d, %a;", ["u64"], "f32", u)
    assert all(same(g, round_exact(F(0) + int(x), mode)) for g, x in zip(got, u))
    i32 = (a % 2**32 - 2**31).astype(np.int32)
    got = run_elementwise(f"cvt.{mode}.f32.s32 %d, %a;", ["s32"], "f32", i32)
    assert all(same(g, round_exact(F(0) + int(x), mode)) for g, x in zip(got, i32))


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_float_narrowing(mode):
    a = RNG.standard_normal(128) * 2.0 ** RNG.integers(-140, 120, 128)
    got = run_elementwise(f"cvt.{mode}.f32.f64 %d, %a;", ["f64"], "f32", a)
    assert all(same(g, round_exact(F(x), mode)) for g, x in zip(got, a))
    h = RNG.standard_normal(128) * 2.0 ** RNG.integers(-20, 14, 128)
    got = run_elementwise(f"cvt.{mode}.f16.f32 %d, %a;", ["f32"], "f16", h.astype(np.float32))
    assert all(same(g, round_exact(F(np.float32(x)), mode, np.float16)) for g, x in zip(got, h))


def test_integral_rounding_in_float_and_saturation():
    a = np.array([1.5, 2.5, -0.5, -1.5, 1.2, np.nan, 7.0, -3.7] * 16, np.float32)
    got = run_elementwise("cvt.rni.f32.f32 %d, %a;", ["f32"], "f32", a)
    assert np.array_equal(got, np.rint(a), equal_nan=True)
    got = run_elementwise("cvt.rzi.f32.f32 %d, %a;", ["f32"], "f32", a)
    assert np.array_equal(got, np.trunc(a), equal_nan=True)
    got = run_elementwise("cvt.sat.f32.f32 %d, %a;", ["f32"], "f32", a)
    assert got[:8].tolist() == [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0]


def test_integer_conversions_extend_truncate_and_saturate():
    a = np.array([-1, 300, -300, 2**31 - 1, -2**31, 70000, 127, -128] * 16, np.int32)
    got = run_elementwise("cvt.s8.s32 %d, %a;", ["s32"], "s8", a)
    assert got.tolist() == [((x + 128) % 256) - 128 for x in a.tolist()]
    got = run_elementwise("cvt.sat.s8.s32 %d, %a;", ["s32"], "s8", a)
    assert got.tolist() == [max(-128, min(127, x)) for x in a.tolist()]
    got = run_elementwise("cvt.sat.u16.s32 %d, %a;", ["s32"], "u16", a)
    assert got.tolist() == [max(0, min(65535, x)) for x in a.tolist()]
    got = run_elementwise("cvt.s64.s32 %d, %a;", ["s32"], "s64", a)
    assert got.tolist() == a.tolist()
    got = run_elementwise("cvt.u64.u32 %d, %a;", ["u32"], "u64", a.view(np.uint32))
    assert got.tolist() == a.view(np.uint32).tolist()
    big = np.array([2**40 + 5, -(2**40) - 5, 2**31, -(2**31) - 1] * 32, np.int64)
    got = run_elementwise("cvt.sat.s32.s64 %d, %a;", ["s64"], "s32", big)
    assert got.tolist() == [max(-2**31, min(2**31 - 1, x)) for x in big.tolist()]
    got = run_elementwise("cvt.u32.u64 %d, %a;", ["u64"], "u32", big.view(np.uint64))
    assert got.tolist() == [x % 2**32 for x in big.view(np.uint64).tolist()]


def test_narrow_loads_and_stores_extend_by_type():
    a = np.array([-5, 5, 127, -128] * 32, np.int8)
    got = run_elementwise("cvt.s32.s8 %d, %a;", ["s8"], "s32", a)
    assert got.tolist() == a.tolist()


def test_bf16_conversions():
    a = RNG.standard_normal(128).astype(np.float32)
    got = run_elementwise("cvt.rn.bf16.f32 %d, %a;", ["f32"], "b16", a)
    back = (got.astype(np.uint32) << 16).view(np.float32)
    want = [round_exact(F(x), "rn", np.float32) for x in a]
    assert np.allclose(back, a, rtol=2 ** -8)
    bits = a.view(np.uint32)
    rounded = ((bits.astype(np.uint64) + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    assert got.tolist() == rounded.tolist()
    assert len(want) == 128


def test_mov_packs_and_unpacks():
    a = RNG.integers(0, 2**32, 128).astype(np.uint32)
    b = RNG.integers(0, 2**32, 128).astype(np.uint32)
    got = run_elementwise("mov.b64 %d, {%a, %b};", ["b32", "b32"], "b64", a, b)
    assert got.tolist() == [x | (y << 32) for x, y in zip(a.tolist(), b.tolist())]
    extra = ".reg .b32 %lo, %hi;"
    got = run_elementwise("mov.b64 {%lo, %hi}, %a; mov.b32 %d, %hi;", ["b64"], "b32",
                          got, extra=extra)
    assert got.tolist() == b.tolist()
    got = run_elementwise("mov.b32 %d, 0f3F800000;", ["b32"], "f32", a)
    assert (got == 1.0).all()


FLOAT_CASES = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
               "num", "nan"]


@pytest.mark.parametrize("cmp", FLOAT_CASES)
def test_setp_float_ordered_and_unordered(cmp):
    vals = np.array([1.0, 2.0, np.nan, -0.0, 0.0, np.inf], np.float32)
    a = np.repeat(vals, 6)
    b = np.tile(vals, 6)
    a = np.concatenate([a, np.ones(128 - 36, np.float32)])
    b = np.concatenate([b, np.ones(128 - 36, np.float32)])
    got = run_elementwise(f"setp.{cmp}.f32 %d, %a, %b;", ["f32", "f32"], "pred", a, b)
    ops = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
           "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}
    want = []
    for x, y in zip(a.tolist(), b.tolist()):
        nan = np.isnan(x) or np.isnan(y)
        if cmp == "num":
            want.append(not nan)
        elif cmp == "nan":
            want.append(nan)
        elif cmp.endswith("u"):
            want.append(nan or ops[cmp[:-1]](x, y))
        else:
            want.append(not nan and ops[cmp](x, y))
    assert got.astype(bool).tolist() == want


def test_setp_integer_signedness_and_boolean_combination():
    a = np.array([-1, 1, 0, 5] * 32, np.int32)
    b = np.array([1, -1, 0, 5] * 32, np.int32)
    lt_s = run_elementwise("setp.lt.s32 %d, %a, %b;", ["s32", "s32"], "pred", a, b)
    lo_u = run_elementwise("setp.lo.u32 %d, %a, %b;", ["u32", "u32"], "pred",
                           a.view(np.uint32), b.view(np.uint32))
    assert lt_s[:4].tolist() == [1, 0, 0, 0]
    assert lo_u[:4].tolist() == [0, 1, 0, 0]
    ne_s = run_elementwise("setp.ne.s32 %d, %a, %b;", ["s32", "s32"], "pred", a, b)
    hs_u = run_elementwise("setp.hs.u32 %d, %a, %b;", ["u32", "u32"], "pred",
                           a.view(np.uint32), b.view(np.uint32))
    assert ne_s[:4].tolist() == [1, 1, 0, 0]
    assert hs_u[:4].tolist() == [1, 0, 1, 1]
    c = np.array([1, 1, 0, 0] * 32, np.uint8)
    extra = ".reg .pred %q;"
    got = run_elementwise("setp.eq.and.s32 %d|%q, %a, %b, %c;", ["s32", "s32", "pred"],
                          "pred", a, b, c, extra=extra)
    assert got[:4].tolist() == [0, 0, 0, 0]
    got = run_elementwise("setp.eq.or.s32 %q|%d, %a, %b, %c;", ["s32", "s32", "pred"],
                          "pred", a, b, c, extra=extra)
    assert got[:4].tolist() == [1, 1, 0, 0]


def test_set_selp_slct():
    a = np.arange(-64, 64, dtype=np.int32)
    b = np.zeros(128, np.int32)
    got = run_elementwise("set.gt.u32.s32 %d, %a, %b;", ["s32", "s32"], "u32", a, b)
    assert got.tolist() == [0xFFFFFFFF if x > 0 else 0 for x in a.tolist()]
    got = run_elementwise("set.gt.f32.s32 %d, %a, %b;", ["s32", "s32"], "f32", a, b)
    assert got.tolist() == [1.0 if x > 0 else 0.0 for x in a.tolist()]
    p = (a & 1).astype(np.uint8)
    got = run_elementwise("selp.s32 %d, %a, %b, %c;", ["s32", "s32", "pred"], "s32", a, b, p)
    assert got.tolist() == [x if x & 1 else 0 for x in a.tolist()]
    got = run_elementwise("slct.s32.s32 %d, %b, %a, %a;", ["s32", "s32"], "s32", a, b)
    assert got.tolist() == [0 if x >= 0 else x for x in a.tolist()]
