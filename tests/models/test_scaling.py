"""The scaling-surfaces model on a synthetic dataset with planted surfaces: the cluster sets
recover them, the network picks them from counters, predictions follow the path (SM
scaling, then device scaling), and a fitted model survives save and load."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kerncast import InputError, NotFittedError
from kerncast.data import Dataset
from kerncast.models import Predictor, get_predictor
from kerncast.models._scaling import (
    FEATURES, PHYSICAL, SM_AXIS, base_inputs, base_physical, base_runs, fit_surfaces,
    parse_configuration, physical_inputs, predict_surface, scaling_values, surface_frame,
)

BASE = ("h100-sxm", 132)
DEVICES = ("h100-sxm", "h200")
AXIS = np.array(SM_AXIS, dtype=float)
#: Planted families: time over SM count (relative to 132 SMs) and the H200's time ratio.
FAMILIES = {
    "compute": (132 / AXIS, 1.0),
    "bandwidth": (np.maximum(64 / AXIS, 1.0), 0.7),
    "latency": (np.ones_like(AXIS), 0.95),
}
#: Counters that tell the families apart (per family: FMA per warp, DRAM bytes read, and
#: the SM and DRAM throughputs in percent of peak that the regression reads).
SIGNATURE = {"compute": (400.0, 1e6, 90.0, 2.0), "bandwidth": (4.0, 4e9, 20.0, 90.0),
             "latency": (20.0, 1e7, 5.0, 3.0)}
WARPS = 1000.0


def _instance_rows(kernel: str, family: str, rng: np.random.Generator) -> dict[str, list[dict]]:
    shape, h200 = FAMILIES[family]
    t132 = float(rng.uniform(1e-3, 5e-3))
    key = {"kernel": kernel, "size": "large", "config": "bs=256", "status": "ok"}
    times, energy = [], []
    for device in DEVICES:
        for s, rel in zip(SM_AXIS, shape):
            t = t132 * rel * (h200 if device == "h200" else 1.0) * (1 + rng.normal(0, 0.005))
            times.append({**key, "device": device, "sm_count": s, "time_median_s": t,
                          "experiment": "times" if s == 132 else "sm-sweep"})
            power = 100.0 + 200.0 * s / 132
            energy.append({**key, "device": device, "sm_count": s, "avg_power_w": power,
                           "idle_power_w": 100.0, "energy_per_launch_j": power * t,
                           "time_per_launch_s": t, "gpu_busy_fraction": 1.0})
    fma, read, sm_pct, dram_pct = SIGNATURE[family]
    counters = [{**key, "device": BASE[0], "sm_count": 132, "sample_k": 0,
                 "smsp__warps_launched.sum": WARPS,
                 **dict.fromkeys(("smsp__inst_executed_pipe_alu.sum", "smsp__inst_executed_pipe_fp64.sum",
                                  "smsp__inst_executed_pipe_xu.sum", "dram__bytes_write.sum"), 0.0),
                 "smsp__inst_executed_pipe_fma.sum": fma * WARPS * (1 + rng.normal(0, 0.02)),
                 "dram__bytes_read.sum": read * (1 + rng.normal(0, 0.02)),
                 "sm__throughput.avg.pct_of_peak_sustained_elapsed": sm_pct + rng.normal(0, 1),
                 "dram__throughput.avg.pct_of_peak_sustained_elapsed": dram_pct + rng.normal(0, 1),
                 "threads_per_block": 256, "registers": 32, "blocks": 4096}]
    return {"times": times, "energy": energy, "counters": counters}


def planted_dataset(per_family: int = 8, seed: int = 0) -> Dataset:
    rng = np.random.default_rng(seed)
    tables: dict[str, list[dict]] = {"times": [], "energy": [], "counters": []}
    for family in FAMILIES:
        for i in range(per_family):
            for name, rows in _instance_rows(f"{family}_{i}", family, rng).items():
                tables[name] += rows
    return Dataset(**{k: pd.DataFrame(v) for k, v in tables.items()}, name="planted")


@pytest.fixture(scope="module")
def planted() -> Dataset:
    return planted_dataset()


def _fit(data: Dataset, **kw):
    runs = base_runs(data, BASE)
    return fit_surfaces(surface_frame(data), base_inputs(runs, BASE), base=BASE,
                        physical=base_physical(runs, BASE), **kw), runs


def test_parse_configuration_accepts_the_axis_and_refuses_the_rest():
    assert parse_configuration("h100:32") == ("h100-sxm", 32)
    assert parse_configuration("h200") == ("h200", 132)
    with pytest.raises(InputError, match="outside the measured configurations"):
        parse_configuration("h100:40")
    with pytest.raises(InputError, match="whole number"):
        parse_configuration("h100:many")
    with pytest.raises(InputError, match="no measured surfaces"):
        parse_configuration("a100:32", DEVICES)


def test_cluster_sets_recover_the_planted_surfaces(planted):
    surfaces, _ = _fit(planted, n_clusters=3, quantities=("time",))
    centroids = np.asarray(surfaces["sets"]["time"]["sm"]["centroids"])
    for shape, _ in FAMILIES.values():
        planted_steps = shape[1:] / shape[:-1]
        assert np.min(np.abs(centroids - planted_steps).max(axis=1)) < 0.02
    device_132 = np.sort(np.asarray(surfaces["sets"]["time"]["1@7"]["centroids"])[:, 0])
    assert np.allclose(device_132, sorted(h for _, h in FAMILIES.values()), atol=0.02)


@pytest.mark.parametrize("method", ["clusters", "regression"])
def test_the_model_predicts_the_family_of_a_held_out_kernel(planted, method):
    train = planted.subset([k for k in planted.kernels() if not k.endswith("_7")])
    surfaces, _ = _fit(train, n_clusters=3, quantities=("time", "power"), method=method)
    runs = base_runs(planted, BASE)
    targets = [(d, s) for d in DEVICES for s in SM_AXIS]
    for family, (shape, h200) in FAMILIES.items():
        run = runs.loc[(f"{family}_7", "large", "bs=256")]
        got = predict_surface(surfaces, float(run["time_s"]), run["counters"], targets)
        want = np.concatenate([shape, shape * h200]) * float(run["time_s"])
        assert np.allclose(got["time_s"], want, rtol=0.03), family


def test_oracle_uses_the_kernels_own_scaling(planted):
    surfaces, _ = _fit(planted, n_clusters=3, quantities=("time",))
    grid = np.array([[FAMILIES["bandwidth"][0], FAMILIES["bandwidth"][0] * 0.7]])
    truth = {"time": scaling_values(grid)}
    got = predict_surface(surfaces, 1.0, None, [("h200", 8)], truth=truth)
    assert got["time_s"].iloc[0] == pytest.approx(8.0 * 0.7, rel=0.03)


def test_the_regression_fits_cluster_sets_only_for_an_oracle(planted):
    plain = get_predictor("scaling-surfaces", n_clusters=3).fit(planted)
    assert plain.surfaces_["sets"] == {} and plain.surfaces_["regressions"]
    oracle = get_predictor("scaling-surfaces", n_clusters=3, classifier="oracle").fit(planted)
    assert set(oracle.surfaces_["sets"]) == {"time", "power", "energy"}
    at_base = (planted.times["device"] == BASE[0]) & (planted.times["sm_count"] == BASE[1])
    assert np.isfinite(oracle.predict(planted)[~at_base.to_numpy()]).all()


def test_power_and_energy_follow_their_own_surfaces(planted):
    surfaces, runs = _fit(planted, n_clusters=3)
    run = runs.loc[("compute_0", "large", "bs=256")]
    got = predict_surface(surfaces, float(run["time_s"]), run["counters"], [("h100-sxm", 64)],
                          base_power_w=float(run["power_w"]), base_energy_j=float(run["energy_j"]))
    assert got["power_w"].iloc[0] == pytest.approx(100 + 200 * 64 / 132, rel=0.05)
    assert got["energy_j"].iloc[0] == pytest.approx((100 + 200 * 64 / 132) * run["time_s"] * 132 / 64,
                                                    rel=0.05)


def test_classifier_inputs_leave_out_what_restates_the_time():
    assert not [f for f in FEATURES if f in ("VIPC", "MemTime", "VALUBusy", "MemUnitBusy")]


@pytest.mark.parametrize("method", ["clusters", "regression"])
def test_predictor_round_trip_and_nan_at_the_base(planted, tmp_path, method):
    model = get_predictor("scaling-surfaces", n_clusters=3, method=method)
    with pytest.raises(NotFittedError):
        model.predict(planted)
    model.fit(planted)
    pred = model.predict(planted)
    times = planted.times
    at_base = (times["device"] == BASE[0]) & (times["sm_count"] == BASE[1])
    assert np.isnan(pred[at_base]).all() and np.isfinite(pred[~at_base]).all()
    err = np.abs(pred[~at_base] / times.loc[~at_base, "time_median_s"] - 1)
    assert err.mean() < 0.03
    path = tmp_path / "scaling.json"
    model.save(path)
    loaded = Predictor.load(path)
    assert np.array_equal(loaded.predict(planted), pred, equal_nan=True)


def test_predictor_reads_the_base_time_from_energy_when_times_are_hidden(planted):
    model = get_predictor("scaling-surfaces", n_clusters=3).fit(planted)
    hidden = Dataset(times=planted.times.drop(columns=["time_median_s"]), energy=planted.energy,
                     counters=planted.counters)
    assert np.allclose(model.predict(hidden), model.predict(planted), equal_nan=True)


def test_fit_without_counters_says_what_to_give(planted):
    bare = Dataset(times=planted.times, energy=planted.energy)
    with pytest.raises(InputError, match="counters"):
        get_predictor("scaling-surfaces").fit(bare)


def test_explain_launch_points_to_scale_and_evaluate():
    model = get_predictor("scaling-surfaces")
    with pytest.raises(InputError, match="kerncast evaluate"):
        model.explain_launch(None, None, None)


def test_regression_power_follows_the_planted_power(planted):
    train = planted.subset([k for k in planted.kernels() if not k.endswith("_7")])
    surfaces, runs = _fit(train, n_clusters=3, method="regression")
    run = base_runs(planted, BASE).loc[("compute_7", "large", "bs=256")]
    got = predict_surface(surfaces, float(run["time_s"]), run["counters"], [("h100-sxm", 32)],
                          base_power_w=float(run["power_w"]), base_energy_j=float(run["energy_j"]))
    assert got["power_w"].iloc[0] == pytest.approx(100 + 200 * 32 / 132, rel=0.05)
    assert got["energy_j"].iloc[0] == pytest.approx(
        (100 + 200 * 32 / 132) * run["time_s"] * 132 / 32, rel=0.08)


def test_physical_inputs_count_waves_on_the_base_sm_count():
    row = {"blocks": 4096, "threads_per_block": 256, "registers": 32,
           "sm__throughput.avg.pct_of_peak_sustained_elapsed": 80.0}
    at_132, at_8 = physical_inputs(row, 1e-3, "h100", 132), physical_inputs(row, 1e-3, "h100", 8)
    assert set(at_132) == set(PHYSICAL)
    # 256 threads and 32 registers: 8 resident blocks per SM on an H100
    assert 2 ** at_132["Waves"] == pytest.approx(4096 / (132 * 8))
    assert at_8["Waves"] - at_132["Waves"] == pytest.approx(np.log2(132 / 8))
    assert at_132["SMThroughput"] == 80.0 and np.isnan(at_132["DRAMThroughput"])
    assert at_132["BaseTime"] == pytest.approx(-3.0)


def test_pair_features_ask_each_sm_for_its_share_of_the_busiest_unit():
    from kerncast.models._scaling import _pair_features

    x = np.full(len(PHYSICAL), np.nan)
    for name, value in (("L1Throughput", 90.0), ("SMThroughput", 30.0), ("DRAMThroughput", 50.0)):
        x[PHYSICAL.index(name)] = value
    local, dram, l2 = _pair_features(x, 132, (0, 8))[-3:]
    assert 2 ** local == pytest.approx(0.9 * 132 / 8)
    assert 2 ** dram == pytest.approx(0.5 * 132 / 8)
    assert l2 == 0.0  # not measured


def test_constant_energy_spreads_the_dynamic_power_over_the_longer_time():
    from kerncast.models._scaling import _constant_energy

    # 300 W on a base whose idle is 100 W, twice as long on a device idling at 120 W
    assert np.exp(_constant_energy(300.0, 2.0, [100.0, 120.0], 1)) == pytest.approx(220 / 300)
    assert _constant_energy(300.0, float("nan"), [100.0, 120.0], 1) == 0.0
    assert _constant_energy(300.0, 2.0, None, 0) == 0.0


def test_loop_busy_is_the_launch_time_over_the_loops_time_per_launch():
    from kerncast.models._scaling import _loop_busy

    # 6 us launches in a loop of 10 us per launch (0.5 mJ per launch at 50 W)
    assert np.exp(_loop_busy(6e-6, 50.0, 5e-4)) == pytest.approx(0.6)
    assert _loop_busy(6e-6, float("nan"), 5e-4) == 0.0  # no energy reading: read as busy
    busy = _loop_busy(np.array([5.0, 2.0]), np.array([10.0, 10.0]), np.array([100.0, 0.0]))
    assert busy == pytest.approx([np.log(0.5), 0.0])  # no energy per launch: read as busy


def test_dynamic_power_is_board_less_idle_with_a_floor():
    from kerncast.models._scaling import DYNAMIC_FLOOR_W, _dynamic

    assert _dynamic(300.0, 118.0) == pytest.approx(182.0)
    assert _dynamic(120.0, 118.0) == DYNAMIC_FLOOR_W  # a reading at idle: the floor
    assert np.isnan(_dynamic(300.0, float("nan")))  # no idle power: no dynamic power


def test_regression_needs_the_physical_inputs(planted):
    runs = base_runs(planted, BASE)
    with pytest.raises(InputError, match="physical inputs"):
        fit_surfaces(surface_frame(planted), base_inputs(runs, BASE), base=BASE, method="regression")
    with pytest.raises(InputError, match="method must be"):
        fit_surfaces(surface_frame(planted), base_inputs(runs, BASE), base=BASE, method="forest")


def test_a_base_dataset_predicts_another_gpus_launches_from_its_base_runs(planted, tmp_path,
                                                                          monkeypatch):
    from kerncast.models import _scaling

    keep = planted.times["device"] == BASE[0]
    on_base = planted.energy["device"] == BASE[0]
    base_only = Dataset(times=planted.times[keep], energy=planted.energy[on_base],
                        counters=planted.counters, name="base")
    other = Dataset(times=planted.times[~keep].reset_index(drop=True),
                    energy=planted.energy[~on_base].reset_index(drop=True), name="other")
    with pytest.raises(InputError, match="base runs with counters"):
        get_predictor("scaling-surfaces", n_clusters=3).fit(other)
    with pytest.raises(InputError, match="not a dataset directory"):
        get_predictor("scaling-surfaces", base_dataset=str(tmp_path / "nowhere")).fit(other)
    monkeypatch.setattr(_scaling, "_read_dataset", lambda path: base_only)
    model = get_predictor("scaling-surfaces", n_clusters=3, base_dataset="base-gpu")
    got = model.fit(other).predict(other)
    whole = get_predictor("scaling-surfaces", n_clusters=3).fit(planted).predict(planted)
    assert np.isfinite(got).all() and np.allclose(got, whole[~keep.to_numpy()], rtol=0.1)
