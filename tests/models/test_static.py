"""The registered static predictor (``static``): the simulator behind the estimator API."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from kerncast import NotFittedError
from kerncast.corpus import get_kernel
from kerncast.data import Dataset
from kerncast.models import BREAKDOWN_KEYS, StaticSimulator, get_predictor
from kerncast.sim import predict_launch
from tests.synthetic import synthetic_dataset

pytestmark = pytest.mark.toolchain  # compiles corpus kernels


@pytest.fixture(scope="module")
def synthetic():
    return synthetic_dataset(kernels=("matmul_tiled", "synthetic_stream"), sizes=("small",),
                             failed_rows=False)


def _row(kernel: str, size: str, tunables: dict, device: str = "h100-sxm",
         sm_count: int = 132) -> dict:
    return {"kernel": kernel, "language": "cuda", "size": size, "config": "",
            "tunables": json.dumps(tunables), "device": device, "sm_count": sm_count,
            "status": "ok"}


def _data(rows: list[dict]) -> Dataset:
    return Dataset(times=pd.DataFrame(rows))


def test_is_registered_with_what_it_needs():
    model = get_predictor("static")
    assert isinstance(model, StaticSimulator)
    assert StaticSimulator.needs == frozenset({"source", "spec"})
    assert not StaticSimulator.learned


def test_refuses_to_predict_before_fit(synthetic):
    with pytest.raises(NotFittedError, match="not fitted"):
        StaticSimulator().predict(synthetic)


def test_predicts_corpus_rows_and_marks_unknown_kernels(synthetic):
    model = StaticSimulator()
    assert model.fit(synthetic) is model
    got = model.predict(synthetic)
    times = synthetic.times
    corpus = (times["kernel"] == "matmul_tiled").to_numpy()
    assert got.shape == (len(times),)
    assert np.isfinite(got[corpus]).all() and (got[corpus] > 0).all()
    assert np.isnan(got[~corpus]).all()
    fake = model.explain(synthetic)[int(np.flatnonzero(~corpus)[0])]
    assert "no corpus kernel 'synthetic_stream'" in fake.based_on["error"]


def test_agrees_with_the_simulator_for_the_rows_launch():
    rows = [_row("matmul_tiled", "small", {"tile": t, "pad": 0}) for t in (8, 32)]
    got = StaticSimulator().fit(_data(rows)).predict(_data(rows))
    kernel = get_kernel("matmul_tiled")
    want = [predict_launch(*kernel.instance(kernel.launch("small", {"tile": t, "pad": 0})),
                           "h100-sxm").seconds for t in (8, 32)]
    assert got.tolist() == want
    assert got[0] != got[1]  # the tunables are read from the row


def test_explain_gives_the_breakdown_and_bottleneck():
    data = _data([_row("matmul_tiled", "small", {"tile": 16, "pad": 0})])
    (p,) = StaticSimulator().fit(data).explain(data)
    assert p.model == "static" and p.seconds > 0
    assert set(p.breakdown) == set(BREAKDOWN_KEYS)
    assert all(v >= 0 for v in p.breakdown.values())
    assert p.bottleneck in BREAKDOWN_KEYS
    assert p.based_on["device"] == "h100-sxm" and p.based_on["blocks"] == 9


def test_reads_device_and_sm_count_from_the_row():
    copy = {"bx": 256, "vec": 4}
    chain = {"bx": 256, "ilp": 2}
    rows = [_row("copy_vector", "medium", copy, "h100-sxm"),
            _row("copy_vector", "medium", copy, "h200"),
            _row("arith_fp32", "medium", chain, sm_count=132),
            _row("arith_fp32", "medium", chain, sm_count=16)]
    data = _data(rows)
    h100, h200, full, few = StaticSimulator().fit(data).predict(data)
    assert h200 <= h100  # more DRAM bandwidth
    assert few > 1.5 * full  # 256 blocks: two waves on 16 SMs, one on 132


def test_a_launch_it_cannot_make_is_nan_with_the_reason():
    data = _data([_row("matmul_tiled", "small", {"tile": 64, "pad": 0}),
                  _row("matmul_tiled", "small", {"tile": 16, "pad": 0})])
    model = StaticSimulator().fit(data)
    bad, good = model.predict(data)
    assert math.isnan(bad) and good > 0
    assert "tile=64 is not allowed" in model.explain(data)[0].based_on["error"]


def test_predictions_do_not_depend_on_the_training_data(synthetic):
    rows = _data([_row("matmul_tiled", "small", {"tile": 16, "pad": 0})])
    a = StaticSimulator().fit(synthetic).predict(rows)
    b = StaticSimulator().fit(rows).predict(rows)
    assert a.tolist() == b.tolist()


def test_a_sass_that_cannot_be_read_is_a_warning_not_only_a_line_in_based_on():
    from kerncast.core import Kernel
    from kerncast.models._static import build_warnings

    kernel = Kernel.of("k", 'extern "C" __global__ void k() {}')
    read = {"device": "a100", "registers": 8,
            "issue_slots": "SASS (ptxas -arch=sm_80): executed SASS per PTX instruction"}
    assert build_warnings(kernel, read, None) == []
    failed = {**read, "issue_slots": "PTX: one issue per PTX instruction (nvdisasm failed)"}
    (warning,) = build_warnings(kernel, failed, None)
    assert warning.startswith("the sm_80 SASS could not be read (nvdisasm failed)")


def test_the_interval_comes_from_the_spread_of_the_same_bottleneck(monkeypatch):
    from kerncast.models import _static

    table = {"dataset": "data/h100", "by_bottleneck": {
        "all": {"ratio_p10": 0.5, "ratio_p90": 2.0, "launches": 300, "kernels": 50},
        "memory": {"ratio_p10": 0.8, "ratio_p90": 1.25, "launches": 90, "kernels": 20}}}
    monkeypatch.setattr(_static, "_spreads", lambda key: table)
    memory = _static.interval(2e-3, "memory", "h100-sxm")
    assert memory["interval_80"] == pytest.approx([1.6e-3, 2.5e-3])
    assert "90 launches of 20 corpus kernels with a memory bottleneck" in memory["interval_from"]
    other = _static.interval(2e-3, "synchronisation", "a100-40gb")
    assert other["interval_80"] == pytest.approx([1e-3, 4e-3])
    assert "any bottleneck" in other["interval_from"]
    monkeypatch.setattr(_static, "_spreads", lambda key: None)
    assert _static.interval(2e-3, "memory", "h100-sxm") == {}


def test_the_shipped_spreads_are_measured_and_ordered():
    from kerncast.models import _static

    for key in ("h100", "h200"):
        table = _static._spreads(key)
        assert table is not None and table["command"].startswith("python benchmarks/")
        for entry in table["by_bottleneck"].values():
            assert 0 < entry["ratio_p10"] <= entry["ratio_p50"] <= entry["ratio_p90"]
            assert entry["launches"] >= 20 and entry["kernels"] >= 5


def test_a_row_asked_again_is_answered_from_the_memo_and_copies_are_its_callers(monkeypatch):
    from kerncast.models import _static

    calls = []

    def counting(*args, **kwargs):
        calls.append(kwargs.get("budget"))
        return predict_launch(*args, **kwargs)

    monkeypatch.setattr("kerncast.sim.predict_launch", counting)
    monkeypatch.setattr(_static, "_MEMO", type(_static._MEMO)())
    row = _row("matmul_tiled", "small", {"tile": 16, "pad": 0})
    first = StaticSimulator().fit(_data([row])).explain(_data([row]))[0]
    first.based_on["changed"] = True  # the caller's copy, not the memo's
    again = StaticSimulator().fit(_data([row])).explain(_data([row]))[0]
    assert calls == [None] and again.seconds == first.seconds and "changed" not in again.based_on
    other = StaticSimulator(budget=20_000).fit(_data([row])).predict(_data([row]))
    assert calls == [None, 20_000] and np.isfinite(other).all()  # the budget reaches the simulator


def test_the_memo_keeps_the_most_recent_rows(monkeypatch):
    from kerncast.models import _static

    monkeypatch.setattr(_static, "_MEMO", type(_static._MEMO)())
    monkeypatch.setattr(_static, "MEMO_SIZE", 2)
    rows = [_row("no_such_kernel", "small", {"i": i}) for i in range(3)]
    StaticSimulator().fit(_data(rows)).predict(_data(rows))
    assert [json.loads(key[2])["i"] for key in _static._MEMO] == [1, 2]


def test_the_rows_binaries_are_assembled_together_and_bad_rows_left_to_their_predictions(
        monkeypatch, tmp_path):
    from kerncast.models._static import share_sass

    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path))
    rows = [_row("matmul_tiled", "small", {"tile": t, "pad": 0}) for t in (8, 16)]
    bad = [_row("matmul_tiled", "small", {"tile": 64, "pad": 0}), _row("no_such_kernel", "small", {})]
    assert share_sass(rows + bad) == 2  # one batch: the two binaries
    assert share_sass(rows) == 0  # kept in the disk cache


def test_rows_are_predicted_a_chunk_at_a_time_after_their_binaries(monkeypatch):
    from kerncast.models import _static

    chunks = []
    monkeypatch.setattr(_static, "_MEMO", type(_static._MEMO)())
    monkeypatch.setattr(_static, "SHARE_CHUNK", 2)
    monkeypatch.setattr(_static, "share_sass", lambda rows, seed=0: chunks.append(len(rows)))
    rows = [_row("no_such_kernel", "small", {"i": i}) for i in range(3)]
    model = StaticSimulator().fit(_data(rows))
    assert np.isnan(model.predict(_data(rows))).all()
    assert chunks == [2, 1]
    model.predict(_data(rows))
    assert chunks == [2, 1, 0, 0]  # rows in the memo need no binaries


def test_rows_of_one_launch_at_other_sm_counts_predict_the_same_launch_object(monkeypatch):
    from kerncast.models import _static

    launches = []

    def noting(source, launch, *args, **kwargs):
        launches.append(launch)
        return predict_launch(source, launch, *args, **kwargs)

    monkeypatch.setattr("kerncast.sim.predict_launch", noting)
    monkeypatch.setattr(_static, "_MEMO", type(_static._MEMO)())
    monkeypatch.setattr(_static, "_LAUNCHES", type(_static._LAUNCHES)())
    monkeypatch.setattr(_static, "LAUNCHES_KEPT", 1)
    rows = [{**_row("copy_vector", "small", {}), "sm_count": n} for n in (132, 16)]
    rows.append(_row("copy_vector", "medium", {}))
    rows.append({**_row("copy_vector", "small", {}), "sm_count": 8})
    StaticSimulator().fit(_data(rows)).predict(_data(rows))
    assert launches[0] is launches[1] and launches[2] is not launches[0]
    # only the most recent launch is kept: the first, asked again, is built again
    assert launches[3] is not launches[0] and launches[3].size == "small"
