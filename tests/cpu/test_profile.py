"""The profiler's features on programs whose values are known by construction."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from kerncast._errors import InputError
from kerncast.cpu._features import FEATURES
from kerncast.cpu._profile import CpuProfile, profile

pytestmark = pytest.mark.skipif(shutil.which("opt-14") is None or shutil.which("clang++-14") is None,
                                reason="the CPU profiler needs LLVM 14")

HEADER = """
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
void kerncast_region_begin(void);
void kerncast_region_end(void);
#ifdef __cplusplus
}
#endif
"""


def run(tmp_path: Path, body: str, region: str | None = "roi", args: tuple[str, ...] = (),
        suffix: str = ".c", **kw) -> CpuProfile:
    source = tmp_path / f"prog{suffix}"
    source.write_text(HEADER + textwrap.dedent(body))
    return profile([source], region, args, **kw)


def test_every_feature_is_reported(tmp_path: Path) -> None:
    prof = run(tmp_path, """
        __attribute__((noinline)) float roi(float *a, int n) {
          float s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
        int main(void) { float *a = calloc(100000, 4); printf("%f\\n", roi(a, 100000)); return 0; }
    """)
    assert set(prof.features) == set(FEATURES)
    assert prof.calls == 1 and prof.ops > 100000 and prof.native_s > 0 and prof.profiled_s > 0
    mix = prof.features["mem"] + prof.features["ctrl"] + prof.features["arith"] + prof.features["fp"]
    assert mix == pytest.approx(1.0)


STRIDE = """
__attribute__((noinline)) long roi(const int32_t *a, long n, long step) {
  long s = 0;
  for (long i = 0; i < n; i++) s += a[(i * step) %% (1L << 22)];
  return s;
}
int main(void) {
  int32_t *a = calloc(1L << 22, 4);
  printf("%%ld\\n", roi(a, %d, %d));
  return 0;
}
"""


@pytest.mark.parametrize(("step", "bucket"), [(0, "0"), (1, "8"), (16, "128"), (64, "Other")])
def test_a_loop_of_known_stride_lands_in_its_bucket(tmp_path: Path, step: int, bucket: str) -> None:
    f = run(tmp_path, STRIDE % (200000, step)).features
    assert f[f"locStride{bucket}"] > 0.99
    assert f[f"gStride{bucket}"] > 0.99


def test_streaming_once_touches_each_block_once(tmp_path: Path) -> None:
    f = run(tmp_path, STRIDE % (200000, 1)).features
    # 200,000 int32 read once: a new 64-byte block every 16 references
    assert f["coldRef"] == pytest.approx(1 / 16, rel=0.01)
    assert f["reuseDist4"] == pytest.approx(15 / 16, rel=0.01)
    blocks = 200000 * 4 / 64
    assert f["memInt"] * 1 == pytest.approx(blocks / (blocks / f["coldRef"] / f["mem"]), rel=0.01)
    assert f["pages"] == pytest.approx(f["memInt"] / 64, rel=0.02)


def test_a_block_per_reference_has_no_short_reuse(tmp_path: Path) -> None:
    f = run(tmp_path, STRIDE % (60000, 64)).features  # 60,000 x 256 bytes: no wrap-around
    assert f["coldRef"] == pytest.approx(1.0, abs=0.01)
    assert f["reuseDist4"] < 0.01


BRANCH = """
volatile int sink;
__attribute__((noinline)) void roi(const char *taken, long n) {
  #pragma clang loop unroll(disable)
  for (long i = 0; i < n; i++) {
    if (taken[i]) sink = 1;
  }
}
int main(void) {
  long n = 1 << 20;
  char *taken = malloc(n);
  for (long i = 0; i < n; i++) taken[i] = (%s) != 0;
  roi(taken, n);
  return 0;
}
"""


def test_an_alternating_branch_diverges_in_every_group(tmp_path: Path) -> None:
    f = run(tmp_path, BRANCH % "i & 1").features
    # the if goes both ways in every group; the loop branch never: half of all groups
    for w in (16, 64, 1024):
        assert f[f"Lbdiv{w}"] == pytest.approx(0.5, abs=0.01)
        assert f[f"Gbdiv{w}"] == pytest.approx(1.0, abs=0.01)


def test_a_branch_that_flips_every_4096_times_diverges_rarely(tmp_path: Path) -> None:
    f = run(tmp_path, BRANCH % "((i + 8) >> 12) & 1", period=1).features
    # the flips fall inside groups (8 before a multiple of 4096): a group of W executions
    # of the if holds one in 4096 / W groups
    assert f["Lbdiv16"] == pytest.approx(0.5 * 16 / 4096, rel=0.1)
    assert f["Lbdiv1024"] == pytest.approx(0.5 * 1024 / 4096, rel=0.1)
    assert f["Lbdiv64"] < f["Lbdiv256"] < f["Lbdiv1024"]


def test_a_uniform_branch_never_diverges(tmp_path: Path) -> None:
    f = run(tmp_path, BRANCH % "i >= 0").features
    assert f["Lbdiv64"] < 0.001


CHAINS = """
__attribute__((noinline)) double roi(long n, double c) {
  double %s;
  #pragma clang loop unroll(disable)
  for (long i = 0; i < n; i++) { %s }
  return %s;
}
int main(void) { printf("%%f\\n", roi(2000000, 1.0000001)); return 0; }
"""


def chains(k: int) -> str:
    names = [f"x{j}" for j in range(k)]
    return CHAINS % (", ".join(f"{n} = {j + 1}" for j, n in enumerate(names)),
                     " ".join(f"{n} = {n} * c;" for n in names), " + ".join(names))


@pytest.mark.parametrize("k", [1, 8])
def test_independent_chains_set_the_ilp(tmp_path: Path, k: int) -> None:
    f = run(tmp_path, chains(k), period=1).features
    # per iteration: k multiplies, the increment, the compare, the branch; every chain
    # (the k products and the induction variable) advances one step per cycle
    assert f["ilp16384"] == pytest.approx(k + 3, rel=0.02)
    assert f["fp"] == pytest.approx(k / (k + 3), rel=0.01)
    assert f["mul"] == pytest.approx(k / (k + 3), rel=0.01)
    assert f["ilpRate"] >= 1.0


def test_a_small_window_limits_ilp(tmp_path: Path) -> None:
    f = run(tmp_path, chains(8), period=1).features
    assert f["ilp32"] <= f["ilp256"] <= f["ilp2048"] <= f["ilp16384"]


def test_divisions_remainders_and_special_functions_are_counted(tmp_path: Path) -> None:
    f = run(tmp_path, """
        #include <math.h>
        __attribute__((noinline)) double roi(const long *a, long n) {
          double s = 0;
          for (long i = 0; i < n; i++) s += (double)(a[i] / 3 + a[i] % 7) + sqrt((double)a[i]);
          return s;
        }
        int main(void) { long *a = calloc(100000, 8); printf("%f\\n", roi(a, 100000)); return 0; }
    """, flags=["-fno-math-errno"]).features
    assert f["div"] > 0 and f["rem"] > 0 and f["spf"] > 0


def test_markers_bound_the_region(tmp_path: Path) -> None:
    prof = run(tmp_path, """
        int main(void) {
          volatile long s = 0;
          for (long i = 0; i < 1000; i++) s += i;
          kerncast_region_begin();
          for (long i = 0; i < 50000; i++) s += i;
          kerncast_region_end();
          return 0;
        }
    """, region=None)
    assert prof.region == "markers" and prof.calls == 1
    assert 50000 * 3 < prof.ops < 50000 * 8


def test_every_call_of_the_region_counts(tmp_path: Path) -> None:
    prof = run(tmp_path, """
        volatile long s;
        __attribute__((noinline)) void roi(long n) { for (long i = 0; i < n; i++) s += i; }
        int main(int argc, char **argv) { for (int k = 0; k < atoi(argv[1]); k++) roi(1000); return 0; }
    """, args=("5",))
    assert prof.calls == 5


def test_a_long_region_stops_at_the_operation_limit(tmp_path: Path) -> None:
    prof = run(tmp_path, STRIDE % (50000000, 1), max_ops=1 << 22)
    assert prof.truncated
    assert prof.ops < 1 << 23


def test_cpp_programs_are_profiled(tmp_path: Path) -> None:
    prof = run(tmp_path, """
        #include <vector>
        __attribute__((noinline)) double roi(const std::vector<double> &v) {
          double s = 0; for (double x : v) s += x; return s; }
        int main() { std::vector<double> v(100000, 1.0); printf("%f\\n", roi(v)); return 0; }
    """, region="_Z3roiRKSt6vectorIdSaIdEE", suffix=".cpp")
    assert prof.features["locStride8"] > 0.99


@pytest.mark.parametrize(("body", "region", "message"), [
    ("int main(void) { return 0 }", "roi", "compiling prog.c failed"),
    ("__attribute__((noinline)) void roi(void) {}\nint main(void) { return 0; }", "roi", "never entered"),
    ("int main(void) { return 0; }", "nosuch", "has no function nosuch"),
    ("__attribute__((noinline)) void roi(int *p) { *p = 1; }\nint main(void) { roi(0); return 0; }",
     "roi", "SIGSEGV"),
    ("__attribute__((noinline)) void roi(void) {}\nint main(void) { roi(); return 3; }", "roi",
     "exited with status 3"),
    ("volatile int s;\n__attribute__((noinline)) void roi(void) { for (;;) s++; }\n"
     "int main(void) { roi(); return 0; }", "roi", "did not finish within"),
    ("int main(void) { return 0; }", None, "kerncast_region_begin"),
])
def test_bad_programs_get_a_clear_error(tmp_path: Path, body: str, region: str | None,
                                        message: str) -> None:
    with pytest.raises(InputError, match=message):
        run(tmp_path, body, region=region, timeout=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog.c"]


def test_a_missing_source_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such source file"):
        profile([tmp_path / "nope.c"], "roi")
