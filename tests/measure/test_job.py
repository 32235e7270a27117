"""Jobs: what a measurement runs, made from a corpus launch or from one's own."""

from __future__ import annotations

from pathlib import Path

import pytest

import kerncast
from kerncast import InputError
from kerncast.core import Array, Kernel, Launch, View, load_launch_file
from kerncast.corpus import get_kernel
from kerncast.measure._job import ViewOf, as_job, corpus_job, user_job
from kerncast.measure._run import launch_columns

USER = Path(__file__).resolve().parents[1] / "userkernels"


def test_a_corpus_job_keys_its_rows_as_the_corpus_did():
    kernel = get_kernel("matmul_tiled")
    config = kernel.launch("small", {"tile": 16, "pad": 1})
    job = corpus_job(kernel, config)
    assert job.kernel.defines == config.defines and job.launch.names[0] == kernel.spec.args[0].name
    row = launch_columns(kernel, config, "cuda", "h100-sxm", 132)
    assert row["config"] == config.label() and row["size"] == "small"
    assert row["blocks"] == config.blocks and launch_columns(job, None, "cuda", "h100-sxm", 132) == row
    assert as_job(job) is job
    assert job.buffers("out") == [a.name for a in kernel.spec.args if a.intent == "out"]


def test_a_user_job_restores_arrays_of_unknown_intent_and_passes_views():
    kernel = Kernel("k", text="__global__ void k(float *a, float *b) {}")
    launch = Launch(1, 32, args=(Array("float32", 64, "arange"), View("a", 8),
                                 Array("float32", 64, intent="out")), names=("a", "p", "o"))
    job = user_job(kernel, launch)
    assert job.intents == {"a": "inout", "o": "out"}
    prepared = job.prepare()
    assert prepared.args["p"] == ViewOf("a", 32) and prepared.want == {}
    assert prepared.args["a"][3] == 3


def test_an_answer_is_one_entry_per_argument():
    kernel = Kernel("k", text="__global__ void k(float *a) {}")
    launch = Launch(1, 32, args=(Array("float32", 4),))
    with pytest.raises(InputError, match="answer has 2 entries for 1 arguments"):
        user_job(kernel, launch, answer=[None, None])


def test_ones_own_kernel_is_measured_and_checked_against_its_answer(pocl):
    kernel, launch = load_launch_file(USER / "vadd.toml").launch()
    a, b, _, n = launch.materialise()
    right = [None, None, a + b, None]
    ok = kerncast.measure(kernel, launch, backend=pocl, answer=right, atol=1e-4)
    assert ok.ok and ok.median_s > 0
    wrong = kerncast.measure(kernel, launch, backend=pocl, answer=[None, None, a - b, None])
    assert wrong.status == "wrong_output" and "differ from the answer" in wrong.error
