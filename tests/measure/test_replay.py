"""The replay backend: recorded rows through the measuring API; clear errors for the rest."""

import pytest

from kerncast import InputError, ToolchainError
from kerncast.corpus import get_kernel
from kerncast.data import Dataset, write_part
from kerncast.measure import measure
from kerncast.measure._replay import ReplayBackend
from kerncast.measure._run import measure_config
from kerncast.measure._samples import measure_samples
from kerncast.measure._timing import TimingPolicy

from .fakes import FakeBackend

QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=6, budget_s=0.2)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("replay")
    kernel = get_kernel("matmul_tiled")
    backend = FakeBackend(device="h100")
    rows = [measure_config(backend, kernel, c, policy=QUICK) for c in kernel.launches("small")]
    write_part(out, "times", rows)
    sampler = FakeBackend(device="h100", behaviours={"matmul_tiled": "unwritten"})
    write_part(out, "samples", measure_samples(sampler, kernel, kernel.launch("large"),
                                               policy=QUICK))
    return out, rows


def test_round_trip_returns_the_recorded_statistics(recorded):
    out, rows = recorded
    replay = ReplayBackend(out, device="h100")
    kernel = get_kernel("matmul_tiled")
    for row, config in zip(rows, kernel.launches("small")):
        got = replay.measure(kernel, config)
        assert got["time_median_s"] == pytest.approx(row["time_median_s"])
        assert got["config"] == row["config"] and got["measured_at"] == row["measured_at"]
    samples = replay.samples(kernel, kernel.launch("large"))
    assert [s["k"] for s in samples][:2] == [1, 1]


def test_measure_api_serves_replayed_rows(recorded):
    out, _ = recorded
    result = measure("corpus:matmul_tiled", size="small", tunables={"tile": 8}, backend="replay",
                     dataset=str(out), device="h100")
    assert result.ok and result.row["config"] == "pad=0,tile=8" and result.median_s > 0


def test_an_unrecorded_request_says_what_is_there(recorded):
    out, _ = recorded
    replay = ReplayBackend(out)
    kernel = get_kernel("matmul_tiled")
    with pytest.raises(InputError, match=r"no recorded times row of matmul_tiled at size 'large' "
                                         r"with pad=0,tile=16 on h100-sxm with 132 SMs in .* "
                                         r"\(it holds 6 times rows of 1 kernels\)"):
        replay.measure(kernel, kernel.launch("large"))
    with pytest.raises(InputError, match="no recorded counters row"):
        replay.counters(kernel, kernel.launch("small"))


def test_replay_cannot_launch(recorded):
    out, _ = recorded
    with pytest.raises(ToolchainError, match="cannot compile or launch"):
        ReplayBackend(Dataset.read(out)).compile(None, None)
