"""Integer instructions against exact Python integer arithmetic (wrap-around, hi/lo/wide,
division edge cases, carries, saturation, 24-bit multiplies)."""

import numpy as np
import pytest

from tests.emu.ptxkit import run_elementwise

RNG = np.random.default_rng(7)
EDGE32 = [0, 1, -1, 2**31 - 1, -2**31, 7, -7, 65535, 3]
EDGE64 = [0, 1, -1, 2**63 - 1, -2**63, 7, -7, 2**32, 3]


def _vals(bits: int, signed: bool, count: int = 128) -> np.ndarray:
    edge = EDGE32 if bits == 32 else EDGE64
    dt = {(32, True): np.int32, (32, False): np.uint32, (64, True): np.int64,
          (64, False): np.uint64}[(bits, signed)]
    rand = RNG.integers(-2**(bits - 1), 2**(bits - 1), count - len(edge), dtype=np.int64
                        if bits == 64 else np.int64)
    if bits == 32:
        rand = rand % 2**32 - 2**31
    raw = np.array(edge + rand.tolist(), dtype=object)
    return np.array([int(v) & (2**bits - 1) for v in raw], dtype=np.uint64).astype(
        np.uint64).view(np.int64 if signed else np.uint64).astype(dt) if bits == 64 else \
        np.array([int(v) & (2**bits - 1) for v in raw], dtype=np.uint64).astype(
            np.uint32).view(dt)


def _wrap(x: int, bits: int, signed: bool) -> int:
    x &= 2**bits - 1
    return x - 2**bits if signed and x >= 2**(bits - 1) else x


CASES = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul.lo", lambda a, b: a * b),
    ("min", min), ("max", max),
]


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("op,ref", CASES, ids=[c[0] for c in CASES])
def test_wrapping_binary_ops(op, ref, bits, signed):
    t = f"{'s' if signed else 'u'}{bits}"
    a, b = _vals(bits, signed), _vals(bits, signed)[::-1].copy()
    got = run_elementwise(f"{op}.{t} %d, %a, %b;", [t, t], t, a, b)
    want = [_wrap(ref(int(x), int(y)), bits, signed) for x, y in zip(a, b)]
    assert [int(v) for v in got] == want


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("signed", [True, False])
def test_mul_hi_and_wide(bits, signed):
    t = f"{'s' if signed else 'u'}{bits}"
    a, b = _vals(bits, signed), _vals(bits, signed)[::-1].copy()
    got = run_elementwise(f"mul.hi.{t} %d, %a, %b;", [t, t], t, a, b)
    assert [int(v) for v in got] == [_wrap((int(x) * int(y)) >> bits, bits, signed)
                                     for x, y in zip(a, b)]
    if bits == 32:
        wide = f"{'s' if signed else 'u'}64"
        got = run_elementwise(f"mul.wide.{t} %d, %a, %b;", [t, t], wide, a, b)
        assert [int(v) for v in got] == [int(x) * int(y) for x, y in zip(a, b)]


@pytest.mark.parametrize("signed", [True, False])
def test_div_rem_with_zero_and_overflow(signed):
    t = "s32" if signed else "u32"
    a = _vals(32, signed)
    b = _vals(32, signed)[::-1].copy()
    b[:5] = 0
    if signed:
        a[5], b[5] = -2**31, -1
    q = run_elementwise(f"div.{t} %d, %a, %b;", [t, t], t, a, b)
    r = run_elementwise(f"rem.{t} %d, %a, %b;", [t, t], t, a, b)
    for x, y, gq, gr in zip(a.tolist(), b.tolist(), q.tolist(), r.tolist()):
        if y == 0:
            assert gq == (-1 if signed else 2**32 - 1) and gr == x
        elif signed and x == -2**31 and y == -1:
            assert (gq, gr) == (-2**31, 0)
        else:
            want_q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
            assert (gq, gr) == (want_q, x - want_q * y)


def test_div_64bit():
    a = _vals(64, True)
    b = _vals(64, True)[::-1].copy()
    b[b == 0] = 3
    q = run_elementwise("div.s64 %d, %a, %b;", ["s64", "s64"], "s64", a, b)
    for x, y, g in zip(a.tolist(), b.tolist(), q.tolist()):
        if x == -2**63 and y == -1:
            assert g == -2**63
        else:
            assert g == abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)


def test_mad_variants():
    a = _vals(32, True)
    b = _vals(32, True)[::-1].copy()
    c = np.roll(_vals(32, True), 3)
    got = run_elementwise("mad.lo.s32 %d, %a, %b, %c;", ["s32"] * 3, "s32", a, b, c)
    assert got.tolist() == [_wrap(x * y + z, 32, True) for x, y, z in
                            zip(a.tolist(), b.tolist(), c.tolist())]
    got = run_elementwise("mad.hi.s32 %d, %a, %b, %c;", ["s32"] * 3, "s32", a, b, c)
    assert got.tolist() == [_wrap(((x * y) >> 32) + z, 32, True) for x, y, z in
                            zip(a.tolist(), b.tolist(), c.tolist())]
    wide_c = np.arange(128, dtype=np.int64) * (2**40 + 3)
    got = run_elementwise("mad.wide.s32 %d, %a, %b, %c;", ["s32", "s32", "s64"], "s64",
                          a, b, wide_c)
    assert got.tolist() == [_wrap(x * y + z, 64, True) for x, y, z in
                            zip(a.tolist(), b.tolist(), wide_c.tolist())]


def test_mul24_and_sad():
    a = _vals(32, True)
    b = _vals(32, True)[::-1].copy()

    def s24(x):
        x &= 0xFFFFFF
        return x - 2**24 if x & 0x800000 else x
    got = run_elementwise("mul24.lo.s32 %d, %a, %b;", ["s32", "s32"], "s32", a, b)
    assert got.tolist() == [_wrap(s24(x) * s24(y), 32, True) for x, y in
                            zip(a.tolist(), b.tolist())]
    got = run_elementwise("mul24.hi.u32 %d, %a, %b;", ["u32", "u32"], "u32",
                          a.view(np.uint32), b.view(np.uint32))
    assert got.tolist() == [((x & 0xFFFFFF) * (y & 0xFFFFFF) >> 16) & 0xFFFFFFFF for x, y in
                            zip(a.view(np.uint32).tolist(), b.view(np.uint32).tolist())]
    c = np.arange(128, dtype=np.int32)
    got = run_elementwise("sad.s32 %d, %a, %b, %c;", ["s32"] * 3, "s32", a, b, c)
    assert got.tolist() == [_wrap(abs(x - y) + z, 32, True) for x, y, z in
                            zip(a.tolist(), b.tolist(), c.tolist())]


def test_abs_neg_and_saturating_add():
    a = _vals(32, True)
    b = _vals(32, True)[::-1].copy()
    assert run_elementwise("abs.s32 %d, %a;", ["s32"], "s32", a).tolist() == \
        [_wrap(abs(x), 32, True) for x in a.tolist()]
    assert run_elementwise("neg.s32 %d, %a;", ["s32"], "s32", a).tolist() == \
        [_wrap(-x, 32, True) for x in a.tolist()]
    got = run_elementwise("add.sat.s32 %d, %a, %b;", ["s32", "s32"], "s32", a, b)
    assert got.tolist() == [max(-2**31, min(2**31 - 1, x + y)) for x, y in
                            zip(a.tolist(), b.tolist())]


def test_carry_chain_builds_a_64_bit_add_from_32_bit_halves():
    a = _vals(64, False)
    b = _vals(64, False)[::-1].copy()
    lo_a, hi_a = (a & 0xFFFFFFFF).astype(np.uint32), (a >> np.uint64(32)).astype(np.uint32)
    lo_b, hi_b = (b & 0xFFFFFFFF).astype(np.uint32), (b >> np.uint64(32)).astype(np.uint32)
    extra = ".reg .u32 %lo, %hi, %x, %y;"
    packed = np.stack([lo_a, hi_a], axis=1).reshape(-1).view(np.uint64)
    packed_b = np.stack([lo_b, hi_b], axis=1).reshape(-1).view(np.uint64)
    line = ("mov.b64 {%x, %y}, %a; mov.b64 {%lo, %hi}, %b; add.cc.u32 %lo, %x, %lo; "
            "addc.u32 %hi, %y, %hi; mov.b64 %d, {%lo, %hi};")
    got = run_elementwise(line, ["u64", "u64"], "u64", packed, packed_b, extra=extra)
    assert got.tolist() == [(int(x) + int(y)) % 2**64 for x, y in zip(a, b)]
    line = ("mov.b64 {%x, %y}, %a; mov.b64 {%lo, %hi}, %b; sub.cc.u32 %lo, %x, %lo; "
            "subc.u32 %hi, %y, %hi; mov.b64 %d, {%lo, %hi};")
    got = run_elementwise(line, ["u64", "u64"], "u64", packed, packed_b, extra=extra)
    assert got.tolist() == [(int(x) - int(y)) % 2**64 for x, y in zip(a, b)]


def test_16_bit_arithmetic_wraps():
    a = np.arange(-64, 64, dtype=np.int16) * 511
    b = np.arange(128, dtype=np.int16) * 257
    got = run_elementwise("mul.lo.s16 %d, %a, %b;", ["s16", "s16"], "s16", a, b)
    assert got.tolist() == [_wrap(int(x) * int(y), 16, True) for x, y in zip(a, b)]
    got = run_elementwise("mul.wide.s16 %d, %a, %b;", ["s16", "s16"], "s32", a, b)
    assert got.tolist() == [int(x) * int(y) for x, y in zip(a, b)]
