"""Bit instructions against reference models written from the PTX ISA pseudo-code."""

import numpy as np
import pytest

from tests.emu.ptxkit import run_elementwise

RNG = np.random.default_rng(11)
A32 = np.concatenate([[0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x12345678],
                      RNG.integers(0, 2**32, 122)]).astype(np.uint32)
B32 = np.concatenate([[0, 31, 32, 33, 1 << 31, 200], RNG.integers(0, 70, 122)]).astype(
    np.uint32)


def test_shifts_clamp_at_the_width():
    got = run_elementwise("shl.b32 %d, %a, %b;", ["b32", "u32"], "b32", A32, B32)
    assert got.tolist() == [(a << b) & 0xFFFFFFFF if b < 32 else 0 for a, b in
                            zip(A32.tolist(), B32.tolist())]
    got = run_elementwise("shr.u32 %d, %a, %b;", ["u32", "u32"], "u32", A32, B32)
    assert got.tolist() == [a >> b if b < 32 else 0 for a, b in zip(A32.tolist(), B32.tolist())]
    signed = A32.view(np.int32)
    got = run_elementwise("shr.s32 %d, %a, %b;", ["s32", "u32"], "s32", signed, B32)
    assert got.tolist() == [a >> min(b, 31) for a, b in zip(signed.tolist(), B32.tolist())]
    a64 = (A32.astype(np.uint64) << np.uint64(29)) | np.uint64(5)
    got = run_elementwise("shl.b64 %d, %a, %b;", ["b64", "u32"], "b64", a64, B32)
    assert got.tolist() == [(a << b) % 2**64 if b < 64 else 0 for a, b in
                            zip(a64.tolist(), B32.tolist())]


def _bfe(a: int, pos: int, length: int, signed: bool, msb: int = 31) -> int:
    pos, length = pos & 0xFF, length & 0xFF
    sbit = ((a >> min(pos + length - 1, msb)) & 1) if signed and length else 0
    out = 0
    for i in range(msb + 1):
        bit = (a >> (pos + i)) & 1 if (i < length and pos + i <= msb) else sbit
        out |= bit << i
    return out


@pytest.mark.parametrize("signed", [False, True])
def test_bfe(signed):
    pos = RNG.integers(0, 40, 128).astype(np.uint32)
    length = RNG.integers(0, 40, 128).astype(np.uint32)
    length[:4] = [0, 32, 1, 255]
    t = "s32" if signed else "u32"
    got = run_elementwise(f"bfe.{t} %d, %a, %b, %c;", [t, "u32", "u32"], t,
                          A32.view(np.int32) if signed else A32, pos, length)
    want = [_bfe(a, p, n, signed) for a, p, n in zip(A32.tolist(), pos.tolist(), length.tolist())]
    assert (got.view(np.uint32)).tolist() == want


def test_bfi():
    base = A32[::-1].copy()
    pos = RNG.integers(0, 36, 128).astype(np.uint32)
    length = RNG.integers(0, 36, 128).astype(np.uint32)
    extra = ".reg .u32 %p, %n;"
    line = "mov.u32 %p, %b; shr.u32 %n, %p, 8; and.b32 %p, %p, 255; bfi.b32 %d, %a, %c, %p, %n;"
    packed = pos | (length << np.uint32(8))
    got = run_elementwise(line, ["b32", "u32", "b32"], "b32", A32, packed, base, extra=extra)
    want = []
    for a, b, p, n in zip(A32.tolist(), base.tolist(), pos.tolist(), length.tolist()):
        f = b
        for i in range(n):
            if p + i > 31:
                break
            f = (f & ~(1 << (p + i))) | (((a >> i) & 1) << (p + i))
        want.append(f & 0xFFFFFFFF)
    assert got.tolist() == want


def test_counting_and_reversal():
    assert run_elementwise("popc.b32 %d, %a;", ["b32"], "u32", A32).tolist() == \
        [bin(a).count("1") for a in A32.tolist()]
    assert run_elementwise("clz.b32 %d, %a;", ["b32"], "u32", A32).tolist() == \
        [32 - a.bit_length() for a in A32.tolist()]
    assert run_elementwise("brev.b32 %d, %a;", ["b32"], "b32", A32).tolist() == \
        [int(f"{a:032b}"[::-1], 2) for a in A32.tolist()]
    a64 = A32.astype(np.uint64) * np.uint64(2**31 + 1)
    assert run_elementwise("clz.b64 %d, %a;", ["b64"], "u32", a64).tolist() == \
        [64 - a.bit_length() for a in a64.tolist()]
    assert run_elementwise("popc.b64 %d, %a;", ["b64"], "u32", a64).tolist() == \
        [bin(a).count("1") for a in a64.tolist()]
    assert run_elementwise("bfind.u32 %d, %a;", ["u32"], "u32", A32).tolist() == \
        [a.bit_length() - 1 if a else 0xFFFFFFFF for a in A32.tolist()]
    signed = A32.view(np.int32)
    want = []
    for a in signed.tolist():
        v = ~a if a < 0 else a
        want.append(v.bit_length() - 1 if v else 0xFFFFFFFF)
    assert run_elementwise("bfind.s32 %d, %a;", ["s32"], "u32", signed).tolist() == want
    assert run_elementwise("bfind.shiftamt.u32 %d, %a;", ["u32"], "u32", A32).tolist() == \
        [32 - a.bit_length() if a else 0xFFFFFFFF for a in A32.tolist()]


def _prmt(a: int, b: int, c: int) -> int:
    data = a | (b << 32)
    out = 0
    for k in range(4):
        sel = (c >> (4 * k)) & 0xF
        byte = (data >> (8 * (sel & 7))) & 0xFF
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * k)
    return out


def test_prmt_default_mode_and_f4e():
    sels = RNG.integers(0, 2**16, 128).astype(np.uint32)
    got = run_elementwise("prmt.b32 %d, %a, %b, %c;", ["b32"] * 3, "b32", A32, A32[::-1].copy(),
                          sels)
    assert got.tolist() == [_prmt(a, b, c) for a, b, c in
                            zip(A32.tolist(), A32[::-1].tolist(), sels.tolist())]
    got = run_elementwise("prmt.b32.f4e %d, %a, %b, %c;", ["b32"] * 3, "b32", A32,
                          A32[::-1].copy(), sels)
    want = []
    for a, b, c in zip(A32.tolist(), A32[::-1].tolist(), sels.tolist()):
        data = a | (b << 32)
        want.append(sum(((data >> (8 * (((c & 3) + k) & 7))) & 0xFF) << (8 * k)
                        for k in range(4)))
    assert got.tolist() == want


@pytest.mark.parametrize("lut", [0x96, 0xE8, 0x80, 0xFE, 0x1E, 0x00, 0xFF])
def test_lop3(lut):
    b, c = A32[::-1].copy(), np.roll(A32, 17)
    got = run_elementwise(f"lop3.b32 %d, %a, %b, %c, {lut};", ["b32"] * 3, "b32", A32, b, c)
    want = []
    for x, y, z in zip(A32.tolist(), b.tolist(), c.tolist()):
        out = 0
        for i in range(32):
            idx = (((x >> i) & 1) << 2) | (((y >> i) & 1) << 1) | ((z >> i) & 1)
            out |= ((lut >> idx) & 1) << i
        want.append(out)
    assert got.tolist() == want


@pytest.mark.parametrize("mode", ["l.wrap", "r.wrap", "l.clamp", "r.clamp"])
def test_funnel_shift(mode):
    hi = A32[::-1].copy()
    got = run_elementwise(f"shf.{mode}.b32 %d, %a, %b, %c;", ["b32", "b32", "u32"], "b32", A32,
                          hi, B32)
    want = []
    for a, b, c in zip(A32.tolist(), hi.tolist(), B32.tolist()):
        n = (c & 31) if "wrap" in mode else min(c, 32)
        both = (b << 32) | a
        want.append(((both << n) >> 32) & 0xFFFFFFFF if mode[0] == "l" else (both >> n) &
                    0xFFFFFFFF)
    assert got.tolist() == want


def test_logic_and_predicate_logic():
    b = A32[::-1].copy()
    assert run_elementwise("xor.b32 %d, %a, %b;", ["b32", "b32"], "b32", A32, b).tolist() == \
        (A32 ^ b).tolist()
    assert run_elementwise("not.b32 %d, %a;", ["b32"], "b32", A32).tolist() == (~A32).tolist()
    assert run_elementwise("cnot.b32 %d, %a;", ["b32"], "b32", A32).tolist() == \
        [int(a == 0) for a in A32.tolist()]
    p = (A32 & 1).astype(np.uint8)
    q = (A32 >> np.uint32(1) & np.uint32(1)).astype(np.uint8)
    got = run_elementwise("xor.pred %d, %a, %b;", ["pred", "pred"], "pred", p, q)
    assert got.tolist() == (p ^ q).tolist()
    got = run_elementwise("and.pred %d, %a, !%b;", ["pred", "pred"], "pred", p, q)
    assert got.tolist() == (p & (1 - q)).tolist()
