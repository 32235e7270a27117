"""Block selection, batches and result bookkeeping."""

from pathlib import Path

import numpy as np
import pytest

from kerncast.corpus import get_kernel
from kerncast.devices import occupancy
from kerncast.emu import Launch, as_launch, emulate, emulate_corpus, select_blocks
from tests.emu.ptxkit import cuda_module

pytestmark = pytest.mark.toolchain


@pytest.fixture(scope="module")
def mod():
    return cuda_module((Path(__file__).parent / "kernels.cu").read_text())


def test_batches_give_the_same_outputs_as_one_batch(mod):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(4096).astype(np.float32)
    out = np.zeros(32, np.float32)
    whole = emulate(mod, ((16,), (256,)), [x, out], entry="block_sum", batch_threads=1 << 16)
    small = emulate(mod, ((16,), (256,)), [x, out], entry="block_sum", batch_threads=512)
    assert whole.batches == 1 and small.batches == 8
    assert whole.outputs["block_sum_param_1"].tolist() == small.outputs["block_sum_param_1"].tolist()
    assert whole.steps == small.steps
    assert whole.trace.totals() == small.trace.totals()
    counter, tickets = np.zeros(1, np.int32), np.zeros(1024, np.int32)
    args = [counter, tickets, np.zeros(1, np.float32), np.zeros(8, np.int32),
            np.zeros(1, np.uint32), np.array([0, 0], np.int32), np.arange(1024, dtype=np.int32)]
    batched = emulate(mod, ((8,), (128,)), args, entry="atomics", batch_threads=128)
    assert sorted(batched.outputs["atomics_param_1"].tolist()) == list(range(1024))


def test_block_selections():
    launch = Launch((100, 1, 1), (256, 1, 1))
    assert select_blocks("all", launch).tolist() == list(range(100))
    assert select_blocks([7, 3, 3], launch).tolist() == [3, 7]
    assert select_blocks({"first": 4}, launch).tolist() == [0, 1, 2, 3]
    assert select_blocks({"strided": 5}, launch).tolist() == [0, 25, 50, 74, 99]
    rand = select_blocks({"random": 10, "seed": 3}, launch)
    assert len(rand) == 10 and rand.tolist() == sorted(set(rand.tolist()))
    assert rand.tolist() == select_blocks({"random": 10, "seed": 3}, launch).tolist()
    big = Launch((1000, 1, 1), (256, 1, 1))
    per_sm = occupancy("h100", 256, 40, 0).blocks_per_sm
    chosen = select_blocks("first-round", big, device="h100", registers=40)
    assert chosen.tolist() == [132 * k for k in range(per_sm)]
    assert select_blocks("first-round", launch, device="h100").tolist() == [0]
    roomy = select_blocks("first-round", big, device="h100", registers=40, shared=100_000)
    assert roomy.tolist() == [132 * k for k in range(occupancy("h100", 256, 40,
                                                                  100_000).blocks_per_sm)]


def test_first_round_emulates_only_those_blocks(mod):
    x = np.arange(300 * 128, dtype=np.int32)
    out = np.zeros(2 * len(x), np.int32)
    r = emulate(mod, ((300,), (128,)), [x, out], entry="if_else", blocks="first-round",
                device="h100", registers=32)
    assert r.blocks.tolist() == [0, 132, 264]
    assert r.trace.blocks.tolist() == [0, 132, 264]
    got = r.outputs["if_else_param_1"][:300 * 128].reshape(300, 128)
    assert (got[1] == 0).all() and (got[132, ::2] == x.reshape(300, 128)[132, ::2] - 7).all()
    assert set(r.trace.warps.tolist()) == {0, 1, 2, 3, 528, 529, 530, 531, 1056, 1057, 1058, 1059}


def test_launch_forms():
    config = get_kernel("matmul_naive").launch("small")
    assert as_launch(config).geometry == Launch(config.grid + (1,) * (3 - len(config.grid)),
                                                config.block + (1,) * (3 - len(config.block)),
                                                0).geometry
    assert as_launch({"grid": 4, "block": (8, 4), "shared": 16}).geometry == \
        Launch((4, 1, 1), (8, 4, 1), 16).geometry
    assert as_launch(((2, 2), 64, 128)).dynamic_shared == 128


def test_emulate_corpus_reports_mismatches(monkeypatch):
    import kerncast.corpus as corpus

    result = emulate_corpus("matmul_tiled", "small", {"tile": 8, "pad": 1}, "opencl")
    assert result.ok and result.problems == []
    assert result.outputs["c"].shape == (48 * 48,)
    original = corpus.expected_outputs

    def wrong(kernel, args, config):
        want = original(kernel, args, config)
        want["c"] = want["c"] + 1
        return want
    monkeypatch.setattr(corpus, "expected_outputs", wrong)
    bad = emulate_corpus("matmul_naive", "small")
    assert not bad.ok and bad.problems[0].startswith("c: 2304 of 2304 elements differ")
    sampled = emulate_corpus("matmul_naive", "small", blocks={"first": 2})
    assert sampled.problems == [] and len(sampled.blocks) == 2
