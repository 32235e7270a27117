"""User mistakes on the command line: each exits 2 (or 1 for a missing tool) with a message
naming what was wrong and what to do, no traceback, no partial file; with ``--json``
every error is a JSON object."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kerncast.cli import main

pytestmark = pytest.mark.toolchain


def _run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, message", [
    (["predict", "corpus:copy_vector", "--size", "small", "--sm-count", "0"],
     "sm_count 0 is not an SM count of h100-sxm; give 1 to 132"),
    (["predict", "corpus:copy_vector", "--size", "small", "--sm-count", "-5"],
     "sm_count -5 is not an SM count"),
    (["predict", "corpus:copy_vector", "--size", "small", "--sm-count", "100000"],
     "give 1 to 132"),
    (["sweep", "corpus:copy_vector", "--device", "nosuch"], "nosuch"),
    (["predict", "corpus:copy_vector", "--model", "nope"], "unknown model 'nope'"),
    (["predict", "corpus:copy_vector", "--budget", "0.5"], "takes no budget"),
])
def test_bad_input_is_exit_2_with_its_reason(capsys, argv, message):
    code, out, err = _run(capsys, argv)
    assert code == 2 and message in " ".join(err.split()) and "Traceback" not in err


def test_with_json_an_error_is_a_json_object(capsys):
    code, out, err = _run(capsys, ["predict", "corpus:copy_vector", "--model", "nope", "--json"])
    assert code == 2
    error = json.loads(out)
    assert error["error"].startswith("unknown model 'nope'") and error["exit_code"] == 2
    assert error["hint"].startswith("the known models are")


@pytest.mark.parametrize("option", ["--csv", "--cache"])
def test_an_output_that_cannot_be_written_fails_before_the_work(tmp_path, capsys, option):
    main(["new", str(tmp_path / "m")])
    capsys.readouterr()
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, out, err = _run(capsys, ["sweep", str(tmp_path / "m" / "launch.toml"), option,
                                   str(blocker / "x.out")])
    assert code == 2 and "cannot write into" in err and not out


def test_train_and_report_refuse_an_unwritable_output_before_fitting(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    data = str(Path(__file__).resolve().parents[2] / "data" / "pocl-2core")
    code, _, err = _run(capsys, ["train", "launch-regression", "--dataset", data, "--out",
                                 str(blocker / "m.json")])
    assert code == 2 and "cannot write into" in err
    code, _, err = _run(capsys, ["report", "--dataset", data, "--models", "roofline", "--out",
                                 str(blocker / "r")])
    assert code == 2 and "cannot write into" in err
    assert blocker.read_text() == ""  # nothing written where it could not go


def test_train_counts_the_kernels_it_was_trained_on(tmp_path, capsys):
    data = str(Path(__file__).resolve().parents[2] / "data" / "pocl-2core")
    code, out, err = _run(capsys, ["train", "launch-regression", "--dataset", data, "--out",
                                   str(tmp_path / "m.json"), "--json"])
    assert code == 0, err
    assert json.loads(out)["kernels"] > 0


def test_piped_tables_cut_no_name():
    proc = subprocess.run([sys.executable, "-m", "kerncast", "devices"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and "…" not in proc.stdout
    assert "radeon-hd-6970" in proc.stdout


def test_an_interrupted_campaign_is_not_a_success(tmp_path):
    import os
    import signal
    import time

    out = tmp_path / "cut"
    env = {**os.environ, "KC_FAKE_SLEEP": "0.05",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]),
                                          os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "kerncast", "measure", "corpus", "--backend",
           "tests.measure.fakes:FakeBackend", "--device", "h100", "--out", str(out),
           "--kernels", "matmul_naive", "--sizes", "small", "--budget", "0.1", "--workers", "0",
           "--flush-rows", "1", "--json"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    deadline = time.monotonic() + 60
    parts = out / "parts"
    while time.monotonic() < deadline and proc.poll() is None and not (
            parts.exists() and len(list(parts.glob("*/*.parquet"))) >= 2):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert json.loads(stdout)["interrupted"] is True


@pytest.mark.parametrize("argv, message", [
    (["inspect", "src/kerncast"], "is a directory; name the .cu, .cl or .ptx file in it"),
    (["occupancy", "--device", "h100", "--block", "256", "--regs", "32", "--smem", "-1"],
     "is negative; give 0 or more"),
])
def test_messages_say_what_is_wrong(capsys, argv, message):
    code, out, err = _run(capsys, argv)
    assert code == 2 and message in " ".join(err.split())


def test_an_empty_source_is_called_empty():
    import kerncast

    with pytest.raises(kerncast.InputError, match="the source is empty"):
        kerncast.compile("")


@pytest.mark.parametrize("body, message", [
    ("__shared__ float t[1 << 28]; t[threadIdx.x] = x[0]; __syncthreads(); "
     "x[threadIdx.x] = t[threadIdx.x + 1];", "bytes of shared memory per block, more than"),
    ("float t[1 << 22]; for (int k = 0; k < (1 << 22); k++) t[k] = x[k % 32]; "
     "x[threadIdx.x] = t[(int)x[1]];", "bytes of local memory per thread, more than"),
])
def test_a_kernel_no_gpu_could_launch_is_refused_before_emulating(body, message):
    import numpy as np

    import kerncast

    tu = kerncast.compile(f'extern "C" __global__ void k(float *x) {{ {body} }}', lang="cuda")
    with pytest.raises(kerncast.InputError, match=message):
        kerncast.emulate(tu.module, (1, 32), [np.zeros(32, np.float32)])


def test_a_kernel_past_the_step_budget_says_how_to_allow_more():
    import numpy as np

    import kerncast

    tu = kerncast.compile('extern "C" __global__ void spin(int *x) { while (x[0] == 0) {} }',
                          lang="cuda")
    with pytest.raises(kerncast.InputError, match=r"kerncast.emulate\(..., step_budget=N\)"):
        kerncast.emulate(tu.module, (1, 32), [np.zeros(1, np.int32)], step_budget=1000)


@pytest.mark.parametrize("option, message", [
    ("--device", "unknown device 'nosuch'; run 'kerncast devices' for the full list"),
    ("--csv", "cannot write into"),
])
def test_a_sweep_fails_before_its_progress_bar(tmp_path, capsys, option, message):
    blocker = tmp_path / "file"
    blocker.write_text("")
    value = "nosuch" if option == "--device" else str(blocker / "dir" / "x.csv")
    code, out, err = _run(capsys, ["sweep", "corpus:copy_vector", "--size", "small", option, value])
    assert code == 2 and message in " ".join(err.split()) and "Traceback" not in err
    assert "━" not in err and not out  # refused before sweeping
    assert blocker.read_text() == ""


@pytest.mark.parametrize("model", ["launch-regression", "sampling-svr"])
@pytest.mark.parametrize("rows", ["none", "all failed"])
def test_train_refuses_a_dataset_without_measured_rows(tmp_path, capsys, model, rows):
    import pandas as pd

    times = pd.read_parquet(Path(__file__).resolve().parents[2] / "data" / "pocl-2core" /
                            "times.parquet")
    times = times.iloc[:0] if rows == "none" else times.assign(status="crash", error="killed")
    (tmp_path / "empty").mkdir()
    times.to_parquet(tmp_path / "empty" / "times.parquet")
    code, out, err = _run(capsys, ["train", model, "--dataset", str(tmp_path / "empty"),
                                   "--out", str(tmp_path / "m.json")])
    assert code == 2 and "has no measured rows (status ok) to train on" in " ".join(err.split())
    assert "trained on" not in out and "Traceback" not in err
    assert not (tmp_path / "m.json").exists()


_PTX_SHARED = """.version 7.0
.target sm_70
.address_size 64

.visible .entry k(.param .u64 k_param_0)
{
	.reg .f32 %f<3>;
	.reg .b32 %r<2>;
	.reg .b64 %rd<7>;
	.shared .align 4 .b8 t[4194304];

	ld.param.u64 %rd1, [k_param_0];
	cvta.to.global.u64 %rd2, %rd1;
	ld.global.f32 %f1, [%rd2];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	mov.u64 %rd4, t;
	add.s64 %rd5, %rd4, %rd3;
	st.shared.f32 [%rd5], %f1;
	bar.sync 0;
	ld.shared.f32 %f2, [%rd5+4];
	add.s64 %rd6, %rd2, %rd3;
	st.global.f32 [%rd6], %f2;
	ret;
}
"""


@pytest.mark.parametrize("name, source, message", [
    ("big.cu", 'extern "C" __global__ void k(float *x) { __shared__ float t[1 << 20]; '
     "t[threadIdx.x] = x[0]; __syncthreads(); x[threadIdx.x] = t[threadIdx.x + 1]; }",
     "kernel k declares 4,194,304 bytes of static shared memory, more than sm_90 allows (49,152)"),
    ("big.ptx", _PTX_SHARED,
     "kernel k declares 4,194,304 bytes of static shared memory, more than sm_90 allows (49,152)"),
    ("local.cu", 'extern "C" __global__ void k(float *x) { float t[1 << 18]; '
     "for (int i = 0; i < (1 << 18); i++) t[i] = x[i % 32]; x[threadIdx.x] = t[(int)x[1]]; }",
     "needs 1,048,576 bytes of local memory per thread, more than any GPU allows (524,288)"),
])
def test_predict_refuses_an_array_no_gpu_allows(tmp_path, capsys, name, source, message):
    (tmp_path / name).write_text(source)
    code, out, err = _run(capsys, ["predict", str(tmp_path / name), "--kernel", "k", "--grid",
                                   "1", "--block", "32", "--arg", "x=float32[64]"])
    assert code == 2 and message in " ".join(err.split())
    assert "Traceback" not in err and "MemoryError" not in err and not out


@pytest.mark.parametrize("argv, error, hint", [
    (["predict", "corpus:nosuch", "--json"], "no corpus kernel 'nosuch'",
     "'kerncast corpus list' shows them all"),
    (["predict", "corpus:copy_vector", "--sm-count", "abc", "--json"],
     "Invalid value for '--sm-count'", "see 'kerncast predict --help'"),
])
def test_with_json_every_error_is_a_json_object(capsys, argv, error, hint):
    code, out, err = _run(capsys, argv)
    assert code == 2 and not err
    obj = json.loads(out)
    assert obj["error"].startswith(error) and obj["hint"] == hint
    assert obj["exit_code"] == 2 and obj["kind"] == "bad input"


def test_an_empty_source_file_is_not_called_missing(tmp_path, capsys):
    (tmp_path / "empty.cu").write_text("")
    code, out, err = _run(capsys, ["inspect", str(tmp_path / "empty.cu")])
    assert code == 2 and "defines no kernel" in " ".join(err.split())
    assert "no such file" not in err and "Traceback" not in err


CATALOGUE = [
    (["predict", "corpus:nosuch"], "no corpus kernel 'nosuch'"),
    (["predict", "corpus:copy_vector", "--size", "huge"], "its sizes are small, medium, large"),
    (["predict", "corpus:copy_vector", "--device", "rtx9999"], "unknown device 'rtx9999'"),
    (["predict", "corpus:copy_vector", "--config", "bs"], "is not NAME=VALUE"),
    (["predict", "corpus:copy_vector", "--config", "nosuch=4"], "its tunables are bx, vec"),
    (["predict", "corpus:copy_vector", "--config", "bs=abc"], "takes an integer"),
    (["predict", "nosuch.cu"], "no such file: nosuch.cu"),
    (["predict", "{saxpy}"], "give --kernel, --grid, --block"),
    (["predict", "{saxpy}", "--kernel", "nosuch", "--grid", "4", "--block", "32"],
     "no kernel 'nosuch'"),
    (["predict", "{saxpy}", "--kernel", "saxpy", "--grid", "0", "--block", "32"],
     "must be at least 1"),
    (["predict", "{saxpy}", "--kernel", "saxpy", "--grid", "4", "--block", "2048"],
     "exceeds the limit of 1024 threads per block"),
    (["predict", "{saxpy}", "--kernel", "saxpy", "--grid", "4", "--block", "32", "--arg",
      "n=int32"], "write TYPE:VALUE for a scalar"),
    (["predict", "{saxpy}", "--kernel", "saxpy", "--grid", "4", "--block", "32", "--arg",
      "q=int32:3"], "saxpy takes 4 arguments"),
    (["predict", "{saxpy}", "--kernel", "saxpy", "--grid", "x", "--block", "32"],
     "--grid 'x' is not one to three integers"),
    (["explain", "corpus:copy_vector", "--fix", "nosuch"], "unknown what-if fix nosuch"),
    (["sweep", "corpus:copy_vector", "--executor", "nosuch"], "unknown executor 'nosuch'"),
    (["sweep", "corpus:copy_vector", "--workers", "0"], "give 1 or more"),
    (["sweep", "corpus:copy_vector", "--address", "x"], "use it with --executor ray"),
    (["evaluate", "--dataset", "/nonexistent"], "is not a kerncast dataset"),
    (["evaluate", "--dataset", "data/h200", "--models", "scaling-surfaces", "--base-dataset",
      "/nonexistent"], "--base-dataset /nonexistent is not a dataset directory"),
    (["evaluate", "--dataset", "data/h200", "--models", "roofline", "--base-dataset",
      "data/h100"], "add one to --models or leave it out"),
    (["train", "nosuch", "--dataset", "data/h100"], "unknown model 'nosuch'"),
    (["occupancy", "--device", "h100", "--block", "64", "--regs", "300"],
     "outside 0..255 on h100-sxm"),
    (["devices", "show", "nosuch"], "unknown device 'nosuch'"),
    (["inspect", "/nonexistent.ptx"], "no such file: /nonexistent.ptx"),
    (["scale", "corpus:copy_vector", "--base", "h100:0"], "outside the measured configurations"),
    (["scale", "corpus:copy_vector", "--base", "h100", "--to", "h100:999"],
     "999 SMs is outside the measured configurations"),
    (["scale", "corpus:copy_vector", "--base", "h100", "--to", "banana"],
     "unknown device 'banana'"),
    (["split", "corpus:copy_vector", "--devices", "cupy"], "give at least two"),
    (["split", "corpus:copy_vector", "--devices", "nosuch,pocl"], "unknown backend 'nosuch'"),
    (["speedup", "/nonexistent.c"], "no such source file"),
    (["speedup", "{saxpy}"], "is GPU code; kerncast speedup takes the C or C++ program"),
    (["measure", "corpus", "--device", "h100"], "needs --out DIR"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--experiments", "nosuch"],
     "unknown experiment(s) nosuch"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--configs", "some"],
     "choose auto, all, default, spread"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--sm-counts", "a"],
     "--sm-counts takes integers"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--gpus", "0,0"],
     "names a GPU twice"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--gpus", "x"],
     "give 'all', or GPU indices"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--executor", "serial",
      "--gpus", "0"], "runs on pool (a process per GPU or slice) or ray"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--gpus", "0",
      "--slices", "2"], "--gpus and --slices exclude each other"),
    (["measure", "corpus", "--device", "h100", "--out", "{out}", "--slices", "2"],
     "the cupy backend measures a GPU: use --gpus"),
    (["measure", "corpus", "--backend", "nosuch", "--device", "h100", "--out", "{out}"],
     "unknown backend 'nosuch'"),
    (["data", "compact", "/nonexistent"], "is not a directory"),
    (["calibrate", "--device", "nosuch"], "unknown device 'nosuch'"),
    (["corpus", "show", "nosuch"], "no corpus kernel 'nosuch'"),
    (["sweep", "corpus:copy_vector", "--strategy", "greedy_ils"],
     "a corpus kernel's launch space is swept whole"),
    (["sweep", "{conv}", "--strategy", "random_sample"], "random_sample needs max_fevals"),
    (["sweep", "{conv}", "--strategy", "annealing"], "unknown strategy 'annealing'"),
    (["sweep", "{conv}", "--configs", "/nonexistent.csv"], "--configs /nonexistent.csv: cannot"),
]


@pytest.mark.parametrize("argv, message", CATALOGUE, ids=lambda v: " ".join(v)[:60]
                         if isinstance(v, list) else None)
def test_the_catalogue_of_mistakes(tmp_path, capsys, argv, message):
    saxpy = Path(__file__).resolve().parents[1] / "userkernels" / "saxpy.cu"
    conv = Path(__file__).resolve().parents[1] / "userkernels" / "conv1d_tuned.toml"
    out = tmp_path / "dataset"
    argv = [a.format(saxpy=saxpy, out=out, conv=conv) for a in argv]
    code, stdout, err = _run(capsys, argv)
    text = " ".join((err + stdout).split())
    assert code == 2, text
    assert message in text and "Traceback" not in text
    assert not out.exists() or not any(out.rglob("*.parquet"))  # no partial dataset


# Mistakes in a launch file: the template of 'kerncast new' with one line changed
# (pattern -> replacement), then 'kerncast predict launch.toml'.
LAUNCH_FILE_MISTAKES = [
    (r'^kernel = .*', "", "'kernel' must name the kernel's entry and its source file"),
    (r'^kernel = .*', 'kernel = "nosuch"', "kernel.cu (its kernels: scale_add)"),
    (r'^source = .*', 'source = "missing.cu"', "k/missing.cu"),
    (r'^grid = .*', "grid = [4096", "is not valid TOML"),
    (r'^# seed = 0.*', "sede = 3", "unknown key 'sede'; a launch file takes"),
    (r'"n=int32:1048576"', '"n=int33:1048576"', "type 'int33' is not a kernel argument type"),
    (r'"x=float32\[n\]', '"x=float32[m]', "unknown name 'm' (known: a, n)"),
    (r'uniform\(-1, 1\)",\n    "y', 'unifrm(-1, 1)",\n    "y', "unknown generator 'unifrm'"),
    (r'\n    "y=float32.*', "", "scale_add takes 4 arguments; the launch gives 3"),
    (r'^grid = .*', "grid = [-1]", "every grid dimension must be at least 1"),
    (r'^block = .*', "block = [4096]", "exceeds the limit of 1024 threads per block"),
    (r'^# problem_size = .*', "problem_size = [1024]",
     "give the launch's grid or Kernel Tuner's problem_size (the grid derived from it), not both"),
    (r'^# language = .*', 'language = "fortran"', "language 'fortran' is not one of cuda, opencl"),
    (r'^# dynamic_shared = 0.*', "dynamic_shared = -4", "dynamic shared memory cannot be negative"),
    (r'uniform\(-1, 1\)",\n    "y', 'npy(nope.npy)",\n    "y', "no such .npy file"),
    (r'^grid = .*\n', "", "give the launch's grid (grid = [4096]) or Kernel Tuner's problem_size"),
]


@pytest.mark.parametrize("pattern, replacement, message", LAUNCH_FILE_MISTAKES,
                         ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_the_catalogue_of_launch_file_mistakes(tmp_path, capsys, pattern, replacement, message):
    import re

    assert main(["new", str(tmp_path / "k")]) == 0
    capsys.readouterr()
    launch = tmp_path / "k" / "launch.toml"
    text = launch.read_text()
    changed = re.sub(pattern, replacement, text, count=1, flags=re.M)
    assert changed != text, pattern  # the template still has the line the case changes
    launch.write_text(changed)
    code, stdout, err = _run(capsys, ["predict", str(launch)])
    text = " ".join((err + stdout).split())
    assert code == 2, text
    assert message in text and "Traceback" not in text


def _launch_file(tmp_path):
    import kerncast

    assert main(["new", str(tmp_path / "k")]) == 0
    return kerncast.load_launch_file(tmp_path / "k" / "launch.toml")


# Mistakes in the Python API: each raises kerncast.InputError with its reason.
API_MISTAKES = [
    (lambda k, f: k.predict(f(), device="nosuch"), "unknown device 'nosuch'"),
    (lambda k, f: k.predict(3), "predict takes a kernel's name, a kerncast.Kernel with its "
     "Launch, or a launch file"),
    (lambda k, f: k.predict(f().kernel, None), "takes a kerncast.Launch"),
    (lambda k, f: k.what_if(3), "a corpus kernel is named by a string"),
    (lambda k, f: k.what_if(f(), only=["nosuch"]), "nosuch"),
    (lambda k, f: k.sweep(f(), device="nosuch"), "unknown device 'nosuch'"),
    (lambda k, f: k.compile("x", lang="fortran"), "unknown language 'fortran'"),
    (lambda k, f: k.Launch((0,), (32,)), "every grid dimension must be at least 1"),
    (lambda k, f: k.Array("float32", (-1,)), "needs at least one dimension, none negative"),
    (lambda k, f: k.load_launch_file("nope.toml"), "no such launch file: nope.toml"),
    (lambda k, f: k.get_device("nosuch"), "unknown device 'nosuch'"),
    (lambda k, f: k.occupancy("h100", 2048, 32), "exceeds the h100-sxm limit of 1024 threads"),
    (lambda k, f: k.emulate(None, (1, 32), []), "cannot emulate a NoneType"),
    (lambda k, f: k.predict("corpus:copy_vector", size="huge"), "its sizes are small, medium"),
    (lambda k, f: k.predict("corpus:copy_vector", model="sampling-svr", backend="pocl"),
     "needs Nsight Compute counters of an NVIDIA GPU"),
]


@pytest.mark.parametrize("call, message", API_MISTAKES, ids=[m[:40] for _, m in API_MISTAKES])
def test_the_catalogue_of_api_mistakes(tmp_path, call, message):
    import kerncast

    with pytest.raises(kerncast.InputError) as caught:
        call(kerncast, lambda: _launch_file(tmp_path))
    assert message in " ".join(str(caught.value).split())
