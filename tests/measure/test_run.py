"""The harness around the timing loop: poison, restore, check, and failures as rows."""

import numpy as np
import pytest

from kerncast.corpus import get_kernel, list_kernels
from kerncast.measure._prep import prepare
from kerncast.measure._run import measure_config, output_problems
from kerncast.measure._timing import TimingPolicy

from .conftest import FAULTY
from .fakes import FakeBackend

QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=8, budget_s=0.5)


def faulty(name):
    return get_kernel(name, FAULTY)


def test_ok_row_has_statistics_resources_and_provenance():
    kernel = get_kernel("matmul_naive")
    row = measure_config(FakeBackend(), kernel, kernel.launch("small"), policy=QUICK, seed=3)
    assert row["status"] == "ok" and row["error"] == ""
    assert row["time_median_s"] > 0 and row["repetitions"] >= 5 and row["registers"] == 32
    assert row["device"] == "h100-sxm" and row["device_name"] == "Fake GPU"
    assert row["input_sets"] > 1  # 27 KiB of buffers fit in twice the L2: copies are cycled
    assert row["seed"] == 3 and row["measured_at"].endswith("+00:00")
    assert row["config"] == "bx=16,by=16" and (row["grid_x"], row["grid_y"]) == (3, 3)


def test_inout_buffers_are_restored_before_every_launch():
    backend = FakeBackend(device="h100")
    kernel = faulty("accum")
    row = measure_config(backend, kernel, kernel.launch("small"), policy=QUICK)
    assert row["status"] == "ok", row["error"]
    launches = backend.events.count("launch")
    assert backend.events.count("restore") == launches  # one restore per launch
    # each restore sits between the previous launch and the next busy-wait
    seq = [e for e in backend.events if e in ("restore", "spin", "launch")]
    assert seq[:3] == ["restore", "spin", "launch"]


def test_without_restoring_an_inout_kernel_would_be_wrong():
    kernel = faulty("accum")
    config = kernel.launch("small")
    prepared = prepare(kernel, config)
    backend = FakeBackend()
    dev = backend.upload(prepared.args)
    source, launch = kernel.instance(config, "opencl")
    compiled = backend.compile(source)
    for _ in range(3):
        backend.launch(compiled, launch, dev)
    problems = output_problems(kernel, backend.download(dev, {"acc": dev["acc"]}), prepared.want)
    assert problems and problems[0].startswith("acc: ")


def test_unwritten_output_is_named_as_never_written():
    kernel = get_kernel("matmul_naive")
    row = measure_config(FakeBackend(behaviours={"matmul_naive": "unwritten"}), kernel,
                         kernel.launch("small"), policy=QUICK)
    assert row["status"] == "wrong_output"
    assert row["error"].startswith("c: 2304 of 2304 elements never written (still poisoned), "
                                   "first at [0]")


def test_wrong_values_name_the_first_mismatch():
    kernel = get_kernel("matmul_naive")
    row = measure_config(FakeBackend(behaviours={"matmul_naive": "wrong"}), kernel,
                         kernel.launch("small"), policy=QUICK)
    assert row["status"] == "wrong_output"
    assert "c: 2304 of 2304 elements differ, first at [0]" in row["error"]
    assert row["time_median_s"] > 0  # the timing is kept with the failure


def test_compile_error_is_a_row():
    kernel = get_kernel("matmul_tiled")
    row = measure_config(FakeBackend(behaviours={"matmul_tiled": "compile_error"}), kernel,
                         kernel.launch("small"), policy=QUICK)
    assert row["status"] == "compile_failed" and "does not compile" in row["error"]
    assert row["repetitions"] == 0 and row["device_name"] == "Fake GPU"


def test_launch_error_is_a_row():
    kernel = get_kernel("matmul_tiled")
    row = measure_config(FakeBackend(behaviours={"matmul_tiled": "launch_error"}), kernel,
                         kernel.launch("small"), policy=QUICK)
    assert row["status"] == "launch_failed" and "ILLEGAL_ADDRESS" in row["error"]


def test_size_that_does_not_fit_is_refused_before_allocation():
    kernel = get_kernel("matmul_naive")
    backend = FakeBackend(memory=(100 << 20, 1 << 30))
    row = measure_config(backend, kernel, kernel.launch("large"), policy=QUICK)
    assert row["status"] == "too_large"
    assert row["error"].startswith("matmul_naive at size 'large' needs 0.05 GiB of device memory")
    assert "measure a smaller size" in row["error"]
    assert "upload" not in backend.events


def test_block_the_device_cannot_run_is_invalid_config(monkeypatch):
    kernel = get_kernel("matmul_naive")
    backend = FakeBackend()
    original = backend.compile

    def heavy(kernel):
        compiled = original(kernel)
        from kerncast.measure._backend import Resources

        compiled.resources = Resources(registers=255, static_shared=0, local_bytes=0)
        return compiled

    monkeypatch.setattr(backend, "compile", heavy)
    row = measure_config(backend, kernel, kernel.launch("small", {"bx": 32, "by": 32}), policy=QUICK)
    assert row["status"] == "invalid_config" and "no block of this launch fits" in row["error"]


@pytest.mark.parametrize("name, status, message", [
    ("accum", "ok", ""),
    ("half_written", "wrong_output", "out: 500 of 1000 elements never written"),
    ("wrong_values", "wrong_output", "out: 1000 of 1000 elements differ, first at [0]"),
    ("no_compile", "compile_failed", "deliberately broken"),
])
def test_real_pocl_runs_end_in_the_right_status(pocl, name, status, message):
    kernel = faulty(name)
    row = measure_config(pocl, kernel, kernel.launch("small"), policy=QUICK)
    assert row["status"] == status
    assert message in row["error"]
    assert row["backend"] == "pocl" and row["device"].startswith("cpu:")


def test_faulty_corpus_is_separate_from_the_real_one():
    assert not {k.name for k in list_kernels(FAULTY)} & {k.name for k in list_kernels()}
    assert np.dtype("float32")  # numpy imported for the module
