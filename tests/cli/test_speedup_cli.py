"""``kerncast speedup`` end to end: a corpus C program and a program of one's own, and the
mistakes a user makes (exit 2, a message, nothing left behind)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from kerncast.cli import main
from kerncast.corpus import get_kernel
from kerncast.corpus._cversion import INCLUDE_DIR, write_run_dir

pytestmark = pytest.mark.skipif(shutil.which("opt-14") is None, reason="the CPU profiler needs LLVM 14")

SAXPY = """
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void saxpy(long n, float a, const float *x, float *y) {
  for (long i = 0; i < n; i++) y[i] = a * x[i] + y[i];
}
int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  float *x = calloc(n, 4), *y = calloc(n, 4);
  saxpy(n, 2.0f, x, y);
  printf("%f\\n", y[n - 1]);
  return 0;
}
"""


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_corpus_c_program_end_to_end(tmp_path: Path, capsys) -> None:
    kernel = get_kernel("pathfinder_rows")
    write_run_dir(kernel, kernel.launch("small"), tmp_path)
    code, out, err = _run(capsys, ["speedup", str(kernel.c_path), "-I", str(INCLUDE_DIR), "--json",
                                   "--", kernel.name, str(tmp_path)])
    assert code == 0, err
    answer = json.loads(out)
    assert answer["device"] == "h100" and answer["speedup"] > 0
    assert answer["low"] <= answer["speedup"] <= answer["high"]
    assert answer["profile"]["region"] == "markers" and answer["profile"]["ops"] > 0
    assert answer["explain"]["terms"]


def test_ones_own_program_in_a_table(tmp_path: Path, capsys) -> None:
    source = tmp_path / "saxpy.c"
    source.write_text(SAXPY)
    code, out, err = _run(capsys, ["speedup", str(source), "--region", "saxpy", "--device", "h200",
                                   "--features", "--", "200000"])
    assert code == 0, err
    assert "predicted speedup on H200" in out and "what drove the prediction" in out
    assert "locStrideOther" in out


def test_a_threshold_decides_porting(tmp_path: Path, capsys) -> None:
    source = tmp_path / "saxpy.c"
    source.write_text(SAXPY)
    code, out, _ = _run(capsys, ["speedup", str(source), "-r", "saxpy", "--threshold", "1e9", "--json"])
    assert code == 0
    answer = json.loads(out)
    assert answer["port"] is False and answer["threshold"] == 1e9


@pytest.mark.parametrize(("text", "argv", "message"), [
    ("int main(void) { return 0 }", ["--region", "f"], "does not compile|compiling"),
    (SAXPY, ["--region", "nosuch"], "no function nosuch"),
    (SAXPY, ["--region", "saxpy", "--device", "a100"], "no speedup model for device"),
    (SAXPY, ["--region", "saxpy", "--threshold", "0"], "--threshold"),
    (SAXPY.replace("saxpy(n, 2.0f, x, y);", "if (n < 0) saxpy(n, 2.0f, x, y);"), ["--region", "saxpy"],
     "never entered"),
])
def test_mistakes_are_exit_2_and_leave_nothing(tmp_path: Path, capsys, text: str, argv: list[str],
                                               message: str) -> None:
    source = tmp_path / "p.c"
    source.write_text(text)
    code, out, err = _run(capsys, ["speedup", str(source), *argv])
    assert code == 2
    assert re.search(message, out + err), out + err
    assert [p.name for p in tmp_path.iterdir()] == ["p.c"]


def test_a_crashing_program_is_exit_2(tmp_path: Path, capsys) -> None:
    source = tmp_path / "p.c"
    source.write_text("__attribute__((noinline)) void f(int *p) { *p = 1; }\n"
                      "int main(void) { f(0); return 0; }\n")
    code, out, err = _run(capsys, ["speedup", str(source), "--region", "f"])
    assert code == 2 and "SIGSEGV" in out + err
