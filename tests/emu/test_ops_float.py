"""Float instructions: rounding modes (exact), ftz, sat, min/max, approximations, halves."""

from fractions import Fraction

import numpy as np
import pytest

from tests.emu.fexact import F, round_exact, same
from tests.emu.ptxkit import run_elementwise

RNG = np.random.default_rng(3)
MODES = ["rn", "rz", "rm", "rp"]


def _f32(count=128, spread=30):
    mant = RNG.uniform(-1, 1, count)
    exps = RNG.integers(-spread, spread, count)
    return (mant * 2.0 ** exps).astype(np.float32)


def _check(got, want):
    bad = [(k, g, w) for k, (g, w) in enumerate(zip(got, want)) if not same(g, w)]
    assert not bad, bad[:5]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_f32_arithmetic_in_every_rounding_mode(op, mode):
    a, b = _f32(), _f32()
    b[:8] = a[:8] * np.float32(1e-9)
    got = run_elementwise(f"{op}.{mode}.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    ref = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}[op]
    _check(got, [round_exact(ref(F(x), F(y)), mode) for x, y in zip(a, b)])


def _fma_inputs():
    a, b, c = _f32(), _f32(), _f32()
    # products that cancel against c leave the rounding to bits far below float32
    c[10:40] = -(a[10:40].astype(np.float64) * b[10:40]).astype(np.float32)
    # a * b + c lands next to a float32 midpoint: float64 rounding alone gets it wrong
    a[0], b[0], c[0] = 2.0 ** -12 * (1 + 2.0 ** -18), 2.0 ** -12 * (1 - 2.0 ** -18), 1 + 2.0 ** -23
    a[1], b[1], c[1] = -a[0], b[0], -c[0]
    a[2], b[2], c[2] = 2.0 ** -12 * (1 + 2.0 ** -18), 2.0 ** -12 * (1 + 2.0 ** -18), 1.0
    a[3], b[3], c[3] = 2.0 ** -70, 2.0 ** -70, 2.0 ** -126  # subnormal range
    return a, b, c


@pytest.mark.parametrize("mode", MODES)
def test_fma_f32_is_single_rounded(mode):
    a, b, c = _fma_inputs()
    got = run_elementwise(f"fma.{mode}.f32 %d, %a, %b, %c;", ["f32"] * 3, "f32", a, b, c)
    _check(got, [round_exact(F(x) * F(y) + F(z), mode) for x, y, z in zip(a, b, c)])
    if mode == "rn":
        assert got[0] == np.float32(1 + 2.0 ** -23)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["div", "sqrt", "rcp"])
def test_f32_division_and_roots(op, mode):
    a, b = np.abs(_f32()) if op == "sqrt" else _f32(), _f32()
    a[:4] = [4.0, 2.0, 1.0, 9.0]
    if op == "div":
        got = run_elementwise(f"div.{mode}.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
        want = [round_exact(F(x) / F(y), mode) for x, y in zip(a, b)]
    elif op == "rcp":
        got = run_elementwise(f"rcp.{mode}.f32 %d, %a;", ["f32"], "f32", a)
        want = [round_exact(1 / F(x), mode) for x in a]
    else:
        got = run_elementwise(f"sqrt.{mode}.f32 %d, %a;", ["f32"], "f32", a)
        want = [_sqrt_exact(F(x), mode) for x in a]
    _check(got, want)


def _sqrt_exact(x: Fraction, mode: str, dtype=np.float32):
    guess = dtype(np.sqrt(float(x)))
    cands = [np.nextafter(guess, dtype(-np.inf)), guess, np.nextafter(guess, dtype(np.inf))]
    lo = max((c for c in cands if F(c) ** 2 <= x), key=F)
    hi = min((c for c in cands if F(c) ** 2 >= x), key=F)
    if lo == hi or mode in ("rm", "rz"):
        return lo
    if mode == "rp":
        return hi
    mid = (F(lo) + F(hi)) / 2
    return lo if mid * mid > x else hi


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "mul", "div"])
def test_f64_arithmetic_in_every_rounding_mode(op, mode):
    a = RNG.standard_normal(128) * 2.0 ** RNG.integers(-60, 60, 128)
    b = RNG.standard_normal(128) * 2.0 ** RNG.integers(-60, 60, 128)
    got = run_elementwise(f"{op}.{mode}.f64 %d, %a, %b;", ["f64", "f64"], "f64", a, b)
    ref = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "div": lambda x, y: x / y}[op]
    _check(got, [round_exact(ref(F(x), F(y)), mode, np.float64) for x, y in zip(a, b)])


def test_fma_f64_is_single_rounded():
    a = RNG.standard_normal(128) * 2.0 ** RNG.integers(-30, 30, 128)
    b = RNG.standard_normal(128)
    c = -(a * b) * (1 + RNG.standard_normal(128) * 2.0 ** -40)
    c[:40] = -(a[:40] * b[:40])  # exact cancellation of the rounded product
    a[0], b[0], c[0] = 1 + 2.0 ** -30, 1 - 2.0 ** -30, -1.0
    got = run_elementwise("fma.rn.f64 %d, %a, %b, %c;", ["f64"] * 3, "f64", a, b, c)
    _check(got, [round_exact(F(x) * F(y) + F(z), "rn", np.float64) for x, y, z in zip(a, b, c)])
    assert got[0] == -(2.0 ** -60)


def test_ftz_and_sat():
    tiny = np.float32(1e-40)
    a = np.array([tiny, -tiny, 1.5, -0.25, 0.75, np.nan, 2.0, 1e-39] + [0.5] * 120, np.float32)
    b = np.zeros(128, np.float32)
    got = run_elementwise("add.ftz.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    assert got[0] == 0 and got[1] == 0 and got[7] == 0
    ones = np.ones(128, np.float32)
    got = run_elementwise("mul.ftz.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, ones)
    assert got[1] == 0 and np.signbit(got[1])
    got = run_elementwise("add.rn.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    assert got[0] == tiny
    got = run_elementwise("add.sat.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    assert got[:8].tolist() == [pytest.approx(1e-40), 0.0, 1.0, 0.0, 0.75, 0.0, 1.0,
                                pytest.approx(1e-39)]
    got = run_elementwise("mul.ftz.f32 %d, %a, %b;", ["f32", "f32"], "f32",
                          np.full(128, 2.0 ** -100, np.float32), np.full(128, 2.0 ** -30,
                                                                        np.float32))
    assert (got == 0).all()


def test_min_max_nan_and_signed_zero():
    a = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 3.0] + [1.0] * 122, np.float32)
    b = np.array([2.0, np.nan, np.nan, 0.0, -0.0, -3.0] + [2.0] * 122, np.float32)
    mn = run_elementwise("min.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    mx = run_elementwise("max.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    assert mn[0] == 2.0 and mn[1] == 1.0 and np.isnan(mn[2]) and mn[5] == -3.0
    assert np.signbit(mn[3]) and np.signbit(mn[4])
    assert mx[0] == 2.0 and mx[1] == 1.0 and not np.signbit(mx[3]) and not np.signbit(mx[4])
    nan = run_elementwise("min.NaN.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    assert np.isnan(nan[0]) and np.isnan(nan[1])


@pytest.mark.parametrize("op,ref,tol", [
    ("sin.approx.f32", np.sin, 2e-6), ("cos.approx.f32", np.cos, 2e-6),
    ("ex2.approx.f32", np.exp2, 2e-7), ("lg2.approx.f32", np.log2, 2e-7),
    ("rsqrt.approx.f32", lambda x: 1 / np.sqrt(x), 2e-7),
    ("tanh.approx.f32", np.tanh, 2e-6), ("rcp.approx.f32", lambda x: 1 / x, 2e-7),
])
def test_approximate_functions_stay_within_bounds(op, ref, tol):
    a = RNG.uniform(0.05, 3.0, 128).astype(np.float32)
    got = run_elementwise(f"{op} %d, %a;", ["f32"], "f32", a)
    want = ref(a.astype(np.float64))
    assert np.allclose(got, want, rtol=tol, atol=tol)


def test_abs_neg_copysign_testp():
    a = np.array([-1.5, 0.0, np.inf, np.nan, -0.0, 1e-40] + [2.0] * 122, np.float32)
    got = run_elementwise("neg.f32 %d, %a;", ["f32"], "f32", a)
    assert got[0] == 1.5 and np.signbit(got[1])
    got = run_elementwise("abs.f32 %d, %a;", ["f32"], "f32", a)
    assert got[0] == 1.5 and not np.signbit(got[4])
    b = np.full(128, -3.0, np.float32)
    got = run_elementwise("copysign.f32 %d, %a, %b;", ["f32", "f32"], "f32", a, b)
    assert got[0] == -3.0 and got[1] == 3.0
    fin = run_elementwise("testp.finite.f32 %d, %a;", ["f32"], "pred", a)
    assert fin[:6].tolist() == [1, 1, 0, 0, 1, 1]
    sub = run_elementwise("testp.subnormal.f32 %d, %a;", ["f32"], "pred", a)
    assert sub[:6].tolist() == [0, 0, 0, 0, 0, 1]


@pytest.mark.parametrize("mode", ["rn", "rz"])
def test_half_precision_arithmetic(mode):
    a = RNG.uniform(-8, 8, 128).astype(np.float16)
    b = RNG.uniform(-8, 8, 128).astype(np.float16)
    c = RNG.uniform(-8, 8, 128).astype(np.float16)
    got = run_elementwise(f"fma.{mode}.f16 %d, %a, %b, %c;", ["f16"] * 3, "f16", a, b, c)
    _check(got, [round_exact(F(x) * F(y) + F(z), mode, np.float16) for x, y, z in zip(a, b, c)])
    got = run_elementwise(f"add.{mode}.f16 %d, %a, %b;", ["f16"] * 2, "f16", a, b)
    _check(got, [round_exact(F(x) + F(y), mode, np.float16) for x, y in zip(a, b)])


def test_packed_half2():
    a = RNG.uniform(-4, 4, 256).astype(np.float16)
    b = RNG.uniform(-4, 4, 256).astype(np.float16)
    got = run_elementwise("mul.rn.f16x2 %d, %a, %b;", ["b32", "b32"], "b32",
                          a.view(np.uint32), b.view(np.uint32))
    want = [round_exact(F(x) * F(y), "rn", np.float16) for x, y in zip(a, b)]
    _check(got.view(np.float16), want)
