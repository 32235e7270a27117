"""The sampling predictors on hand-made samples."""

import numpy as np
import pandas as pd
import pytest

from kerncast.data import Dataset
from kerncast.models import Sampling, SeedLinear
from kerncast.models._sampling import fit_samples

KEY = {"kernel": "k", "language": "cuda", "size": "large", "config": "bx=256",
       "device": "h100-sxm", "sm_count": 132}


def _dataset(samples: list[tuple[int, int, float, str]], blocks: int) -> Dataset:
    times = pd.DataFrame([{**KEY, "blocks": blocks, "status": "ok"}])
    rows = [{**KEY, "k": k, "psat": 4, "blocks_launched": b, "grid_fraction": b / blocks,
             "l2_state": l2, "status": "ok", "time_median_s": t} for k, b, t, l2 in samples]
    return Dataset(times=times, samples=pd.DataFrame(rows))


def test_seed_linear_is_the_published_formula():
    wave = 4 * 132
    data = _dataset([(2, 2 * wave, 10e-6, "warm"), (3, 3 * wave, 14e-6, "warm"),
                     (2, 2 * wave, 99e-6, "cold")], blocks=100 * wave)
    t1, t2, p1, p2, n = 10e-6, 14e-6, 2 * wave, 3 * wave, 100 * wave
    expected = t1 + (t2 - t1) / (p2 - p1) * (n - p1)
    assert SeedLinear().fit(data).predict(data)[0] == pytest.approx(expected)


def test_seed_linear_first_point_can_move():
    wave = 4 * 132
    data = _dataset([(k, k * wave, 2e-6 + k * 1e-6, "warm") for k in (1, 2, 3, 4, 5)],
                    blocks=50 * wave)
    got = SeedLinear(first_k=1, second_k=2).fit(data).predict(data)[0]
    assert got == pytest.approx(2e-6 + 50e-6)


def test_small_grid_is_predicted_by_direct_measurement():
    data = _dataset([(1, 300, 7e-6, "cold"), (1, 300, 6e-6, "warm")], blocks=300)
    for model in (SeedLinear(), Sampling()):
        model.fit(data)
        assert model.predict(data)[0] in (6e-6, 7e-6)
        assert model.explain(data)[0].based_on["method"].startswith("direct measurement")


def test_sampling_uses_cold_points_beyond_the_launch_regime():
    wave = 4 * 132
    # a launch floor of 4 µs and 10 µs per wave; the k=1 point sits at the floor
    pts = [(k, k * wave, 4e-6 + 10e-6 * k, "cold") for k in (1, 2, 3, 4, 5, 10, 20)]
    pts.append((1, wave, 1e-6, "warm"))
    data = _dataset(pts, blocks=1000 * wave)
    model = Sampling(budget=1.0).fit(data)
    assert model.predict(data)[0] == pytest.approx(4e-6 + 10e-6 * 1000, rel=1e-6)
    info = model.explain(data)[0].based_on
    assert info["points"] >= 3 and "warning" not in info


def test_sampling_budget_limits_points():
    wave = 4 * 132
    pts = [(k, k * wave, 4e-6 + 10e-6 * k, "cold") for k in (2, 3, 4, 5, 10, 20)]
    data = _dataset(pts, blocks=100 * wave)  # full time ~1 ms; k=20 alone is 204 µs
    info = Sampling(budget=0.05).fit(data).explain(data)[0].based_on
    assert info["sample_seconds"] <= 0.05 * 1.01e-3 + 60e-6


def test_uneven_waves_are_flagged():
    wave = 4 * 132
    pts = [(k, k * wave, t, "cold") for k, t in ((2, 30e-6), (3, 60e-6), (4, 45e-6), (5, 90e-6))]
    data = _dataset(pts, blocks=100 * wave)
    assert "warning" in Sampling(budget=1.0, min_seconds=0).fit(data).explain(data)[0].based_on


def test_work_held_by_the_first_blocks_is_flagged():
    wave = 4 * 132
    # every sample takes 3 ms whatever its size: the first blocks do all the work
    pts = [(k, k * wave, 3.0e-3 + k * 1e-6, "cold") for k in (1, 2, 3, 4, 5)]
    pts += [(k, k * wave, 3.0e-3 + k * 1e-6, "warm") for k in (1, 2, 3, 4, 5)]
    data = _dataset(pts, blocks=30 * wave)
    for model in (Sampling(budget=1.0), SeedLinear()):
        info = model.fit(data).explain(data)[0].based_on
        assert "first blocks hold more work than the rest" in info["warning"]
    # the time grows by a wave's worth per wave, yet half of each sample is a fixed cost
    # no launch explains (sssp_relax on the H100: the line through two and three
    # waves predicts 3x the full grid's time)
    grows = _dataset([(k, k * wave, 3.1e-3 + 1e-3 * k, "cold") for k in (1, 2, 3)],
                     blocks=16 * wave)
    assert "first blocks hold more" in Sampling(budget=0.0).fit(grows).explain(grows)[0].based_on[
        "warning"]
    even = _dataset([(k, k * wave, 4e-6 + 1e-3 * k, "cold") for k in (1, 2, 3)], blocks=30 * wave)
    assert "warning" not in Sampling(budget=1.0).fit(even).explain(even)[0].based_on


def test_tail_wave_is_charged_by_the_busiest_sm():
    x = np.array([264.0, 528.0])
    t = np.array([2e-6, 4e-6])  # 1 µs per 132 blocks, no fixed cost
    full = fit_samples(x, t, blocks=264 * 3 + 10, psat=2, n_sm=132, tail=True)
    plain = fit_samples(x, t, blocks=264 * 3 + 10, psat=2, n_sm=132, tail=False)
    assert full.seconds == pytest.approx((264 * 3 + 132) / 132 * 1e-6)
    assert plain.seconds < full.seconds


def test_no_samples_gives_nan():
    data = _dataset([], blocks=1000)
    data.samples = pd.DataFrame(columns=["kernel", "l2_state", "status", "time_median_s"])
    assert np.isnan(Sampling().fit(data).predict(data)[0])


def test_sampling_never_predicts_less_than_its_longest_sample():
    wave = 4 * 132
    # time falls with more blocks (noise or front-loaded work): the line would go below
    pts = [(k, k * wave, t, "cold") for k, t in ((1, 50e-6), (2, 60e-6), (3, 55e-6), (4, 52e-6))]
    data = _dataset(pts, blocks=10 * wave)
    model = Sampling(budget=10.0).fit(data)
    info = model.explain(data)[0].based_on
    assert model.predict(data)[0] >= 60e-6
    # the one-wave sample is not part of the ladder (see the next test)
    assert info["sample_seconds"] == pytest.approx(sum(t for k, _, t, _ in pts if k > 1))


def test_sampling_leaves_out_the_lone_first_wave():
    wave = 8 * 132
    # one wave fetches the shared data alone: the step to two waves understates a wave
    times = {1: 320e-6, 2: 450e-6, 3: 650e-6, 4: 850e-6, 5: 1050e-6}
    pts = [(k, k * wave, t, "cold") for k, t in times.items()]
    data = _dataset(pts, blocks=16 * wave)
    truth = 450e-6 + 200e-6 * 14  # 200 us per wave from the second on
    # no budget for jumps: the line goes through the ladder's first two rungs
    skipped = Sampling(budget=0.0).fit(data).predict(data)[0]
    kept = Sampling(budget=0.0, first_wave=True).fit(data).predict(data)[0]
    assert skipped == pytest.approx(truth, rel=0.01)
    assert abs(kept - truth) > 0.03 * truth


def test_sampling_keeps_the_first_wave_on_a_short_grid():
    wave = 8 * 132
    times = {1: 320e-6, 2: 450e-6, 3: 650e-6}
    pts = [(k, k * wave, t, "cold") for k, t in times.items()]
    data = _dataset(pts, blocks=4 * wave)  # waves 2 and 3 would cost more than half the grid
    info = Sampling(budget=0.0).fit(data).explain(data)[0].based_on
    assert info["sample_seconds"] == pytest.approx(320e-6 + 450e-6)


def test_sampling_follows_the_latest_samples_where_work_thins_out():
    wave = 8 * 132
    # front-loaded work: the time stops growing after three waves
    times = {1: 3.9e-3, 2: 5.1e-3, 3: 6.0e-3, 4: 6.05e-3, 5: 6.1e-3, 10: 6.2e-3}
    pts = [(k, k * wave, t, "cold") for k, t in times.items()]
    data = _dataset(pts, blocks=16 * wave)
    latest = Sampling(budget=10.0).fit(data).predict(data)[0]
    first_rungs = Sampling(budget=0.0).fit(data).predict(data)[0]
    assert latest == pytest.approx(6.3e-3, rel=0.05)
    assert first_rungs > 2 * latest


def test_sampling_jumps_to_a_rung_and_its_half():
    wave = 4 * 132
    # the time per wave falls from 2 µs (small samples) to 1.5 µs (large ones)
    times = {2: 8e-6, 3: 10e-6, 4: 12e-6, 5: 14e-6, 10: 24e-6, 20: 40e-6, 40: 70e-6}
    data = _dataset([(k, k * wave, t, "cold") for k, t in times.items()], blocks=800 * wave)
    info = Sampling(budget=0.2).fit(data).explain(data)[0].based_on
    # the pair (20, 40) and the first two rungs; not the rungs between
    assert info["sample_seconds"] == pytest.approx(8e-6 + 10e-6 + 40e-6 + 70e-6)
    assert info["per_block_s"] == pytest.approx(30e-6 / (20 * wave))
    # the largest sample ran the grid's first 40 waves whole: work a split keeps
    assert info["blocks_done"] == 40 * wave


def test_a_launch_measured_whole_has_every_block_done():
    wave = 4 * 132
    pts = [(1, wave, 2e-6, "cold"), (0, 2 * wave, 4e-6, "cold")]
    data = _dataset(pts, blocks=2 * wave)  # too short to sample: the whole grid is run
    info = Sampling().fit(data).explain(data)[0].based_on
    assert info["method"].startswith("direct measurement")
    assert info["blocks_done"] == 2 * wave


def test_sampling_climbs_further_with_a_larger_budget():
    wave = 4 * 132
    pts = [(k, k * wave, 4e-6 + 10e-6 * k, "cold") for k in (1, 2, 3, 4, 5, 10, 20)]
    data = _dataset(pts, blocks=200 * wave)  # ~2 ms
    small = Sampling(budget=0.05).fit(data).explain(data)[0].based_on
    large = Sampling(budget=0.5).fit(data).explain(data)[0].based_on
    assert small["points"] < large["points"]
    assert small["sample_seconds"] < large["sample_seconds"] <= 0.5 * 2.004e-3


def test_live_walk_times_only_the_samples_it_takes():
    wave = 4 * 132
    times = {2: 8e-6, 3: 10e-6, 4: 12e-6, 5: 14e-6, 10: 24e-6, 20: 40e-6, 40: 70e-6}
    data = _dataset([(k, k * wave, t, "cold") for k, t in times.items()], blocks=800 * wave)
    ladder = pd.DataFrame([{"k": k, "psat": 4, "sm_count": 132, "blocks_launched": k * wave}
                           for k in times] + [{"k": 0, "psat": 4, "sm_count": 132,
                                               "blocks_launched": 800 * wave}])
    ks = list(times)
    calls = []

    def measure(i, state):
        calls.append((ks[i], state))
        return times[ks[i]]

    live = Sampling(budget=0.2).explain_live(ladder, 800 * wave, measure)
    offline = Sampling(budget=0.2).fit(data).explain(data)[0]
    assert live.seconds == pytest.approx(offline.seconds, rel=1e-12)
    assert sorted(calls) == [(2, "cold"), (3, "cold"), (20, "cold"), (40, "cold")]


def test_live_grid_too_small_to_sample_is_measured_directly():
    ladder = pd.DataFrame([{"k": 0, "psat": 8, "sm_count": 132, "blocks_launched": 500}])
    calls = []
    got = Sampling().explain_live(ladder, 500, lambda i, s: calls.append((i, s)) or 42e-6)
    assert calls == [(0, "warm")]
    assert got.seconds == pytest.approx(42e-6)
    assert got.based_on["method"].startswith("direct measurement")
    assert SeedLinear().explain_live(ladder, 500, lambda i, s: 42e-6).seconds == pytest.approx(42e-6)


def test_live_fallback_measures_a_flagged_launch_whole():
    wave = 8 * 132
    # the first blocks hold the work (sssp_relax-like): the line predicts 3x the launch
    times = {2: 5.1e-3, 3: 6.0e-3, 4: 6.05e-3, 0: 6.1e-3}
    ladder = pd.DataFrame([{"k": k, "psat": 8, "sm_count": 132,
                            "blocks_launched": (k or 16) * wave} for k in times])
    calls = []

    def measure(i, state):
        calls.append(list(times)[i])
        return list(times.values())[i]

    # a budget that pays for the two first samples (5 of the 16 waves) and no jump
    got = Sampling(budget=0.32).explain_live(ladder, 16 * wave, measure)
    assert calls == [2, 3, 0]
    assert got.seconds == pytest.approx(6.1e-3)
    assert got.based_on["method"].startswith("direct measurement of the whole launch")
    assert got.based_on["sampled_prediction_s"] > 2 * got.seconds
    calls.clear()
    kept = Sampling(budget=0.32, fallback=False).explain_live(ladder, 16 * wave, measure)
    assert calls == [2, 3] and "warning" in kept.based_on


def _live(times: dict[int, float], waves: int = 16):
    """A live ladder of the rungs of ``times`` (by ``k``; 0 is the whole grid of ``waves``
    waves of 8 blocks on each of 132 SMs), a measure that serves each rung its time, and
    the (k, L2 state) of every rung it measured."""
    wave = 8 * 132
    ladder = pd.DataFrame([{"k": k, "psat": 8, "sm_count": 132,
                            "blocks_launched": (k or waves) * wave} for k in times])
    calls: list[tuple[int, str]] = []

    def measure(i, state):
        calls.append((list(times)[i], state))
        return list(times.values())[i]

    return ladder, measure, calls


def test_a_grid_whose_first_samples_exceed_the_budget_is_run_whole_without_samples():
    wave = 8 * 132
    ladder, measure, calls = _live({2: 2.0e-3, 3: 3.0e-3, 0: 16.0e-3})
    # waves 2 and 3 are 5 of the grid's 16: more than a 10% budget, within a 40% one
    got = Sampling(budget=0.1).explain_live(ladder, 16 * wave, measure)
    assert calls == [(0, "warm")]
    assert got.seconds == pytest.approx(16.0e-3)
    assert "within the budget" in got.based_on["method"]
    assert got.based_on["blocks_done"] == 16 * wave
    calls.clear()
    sampled = Sampling(budget=0.4).explain_live(ladder, 16 * wave, measure)
    assert [k for k, _ in calls] == [2, 3]
    assert sampled.based_on["method"] == "linear extrapolation of sampled waves"


def test_a_front_loaded_line_takes_one_more_jump():
    wave = 4 * 132
    # the first waves ramp up slowly: waves 2 and 3 give a large intercept, waves 5 and
    # 10 the steady time per wave (20 us) and a small one
    times = {1: 60e-6, 2: 92e-6, 3: 103e-6, 4: 120e-6, 5: 136e-6, 10: 236e-6}
    pts = [(k, k * wave, t, "cold") for k, t in times.items()]
    data = _dataset(pts, blocks=120 * wave)
    truth = 136e-6 + 20e-6 * 115
    info = Sampling(budget=0.2).fit(data).explain(data)[0].based_on
    got = Sampling(budget=0.2).fit(data).predict(data)[0]
    assert got == pytest.approx(truth, rel=0.02)
    assert "warning" not in info


@pytest.mark.parametrize("state", ["cold", "paid"])
def test_a_flagged_launch_takes_the_datasets_run_of_its_whole_grid(state):
    wave = 8 * 132
    # sssp_relax-like: the line through waves 2 and 3 predicts 3x the launch; the
    # samples-full experiment timed the whole grid (k 0, cold, also beside paid samples)
    pts = [(2, 2 * wave, 5.1e-3, state), (3, 3 * wave, 6.0e-3, state),
           (0, 16 * wave, 6.1e-3, "cold")]
    data = _dataset(pts, blocks=16 * wave)
    # a budget that pays for the two samples (5 of the 16 waves) and no further
    got = Sampling(budget=0.32).fit(data).explain(data)[0]
    assert got.seconds == pytest.approx(6.1e-3)
    assert got.based_on["method"].startswith("direct measurement of the whole launch")
    assert got.based_on["sampled_prediction_s"] > 2 * got.seconds
    assert got.based_on["sample_seconds"] == pytest.approx(5.1e-3 + 6.0e-3 + 6.1e-3)
    kept = Sampling(budget=0.32, fallback=False).fit(data).explain(data)[0]
    assert kept.seconds > 2 * got.seconds and "warning" in kept.based_on
    # without that run the flagged line stands, and says so
    alone = _dataset(pts[:2], blocks=16 * wave)
    assert "warning" in Sampling(budget=0.32).fit(alone).explain(alone)[0].based_on


def test_a_trusted_line_ignores_the_run_of_the_whole_grid():
    wave = 4 * 132
    pts = [(k, k * wave, 4e-6 + 10e-6 * k, "cold") for k in (1, 2, 3, 4, 5)]
    data = _dataset(pts + [(0, 100 * wave, 1.5e-3, "cold")], blocks=100 * wave)
    for model in (Sampling(), SeedLinear(l2_state="cold")):
        got = model.fit(data).explain(data)[0]
        assert got.seconds == pytest.approx(4e-6 + 10e-6 * 100, rel=1e-6)
        assert got.based_on["method"] == "linear extrapolation of sampled waves"


def test_a_grid_too_short_for_two_samples_is_measured_whole():
    wave = 4 * 132
    data = _dataset([(1, wave, 12e-6, "cold"), (0, int(1.3 * wave), 15e-6, "cold")],
                    blocks=int(1.3 * wave))
    got = Sampling().fit(data).explain(data)[0]
    assert got.seconds == pytest.approx(15e-6)
    assert "too short to sample" in got.based_on["method"]



@pytest.mark.parametrize("state", ["cold", "paid"])
def test_a_direct_measurement_takes_the_whole_grid_timed_warm_where_there_is_one(state):
    wave = 4 * 132
    # a short grid whose data fits in the L2: the cold run pays for the flush's dirty
    # lines (18 us), the warm one is timed as `times` times the launch (15 us)
    short = [(1, wave, 12e-6, state), (0, int(1.3 * wave), 18e-6, "cold"),
             (0, int(1.3 * wave), 15e-6, "warm")]
    data = _dataset(short, blocks=int(1.3 * wave))
    assert Sampling().fit(data).predict(data)[0] == pytest.approx(15e-6)
    assert Sampling(l2_state=state).fit(data).predict(data)[0] == pytest.approx(15e-6)
    # a dataset that timed the whole grid only cold stands on that run
    assert Sampling().fit(_dataset(short[:2], blocks=int(1.3 * wave))).predict(
        _dataset(short[:2], blocks=int(1.3 * wave)))[0] == pytest.approx(18e-6)
    # a flagged line (waves 2 and 3 predict 3x the launch) is answered the same way
    pts = [(2, 2 * wave, 5.1e-3, state), (3, 3 * wave, 6.0e-3, state),
           (0, 16 * wave, 6.3e-3, "cold"), (0, 16 * wave, 6.1e-3, "warm")]
    data = _dataset(pts, blocks=16 * wave)
    assert Sampling(budget=0.32).fit(data).predict(data)[0] == pytest.approx(6.1e-3)

def test_paid_samples_are_taken_where_a_launch_has_them():
    wave = 4 * 132
    # cold samples pay for the flush's dirty lines (a slope of 14 us a wave), paid ones
    # only for their own stores (10 us a wave); the cold run of the whole grid stays
    cold = [(k, k * wave, 4e-6 + 14e-6 * k, "cold") for k in (2, 3, 4, 5, 10, 20)]
    paid = [(k, k * wave, 4e-6 + 10e-6 * k, "paid") for k in (2, 3, 4, 5, 10, 20)]
    whole = [(0, 200 * wave, 2.004e-3, "cold")]
    data = _dataset(cold + paid + whole, blocks=200 * wave)
    assert Sampling().fit(data).predict(data)[0] == pytest.approx(4e-6 + 10e-6 * 200, rel=1e-6)
    assert Sampling(l2_state="cold").fit(data).predict(data)[0] == \
        pytest.approx(4e-6 + 14e-6 * 200, rel=1e-6)
    # a launch without paid samples keeps its cold ones
    alone = _dataset(cold + whole, blocks=200 * wave)
    assert Sampling().fit(alone).predict(alone)[0] == pytest.approx(4e-6 + 14e-6 * 200, rel=1e-6)


def test_live_samples_are_paid_where_the_backend_can_time_the_write_back():
    wave = 8 * 132
    # flagged: the grid is run too
    ladder, measure, calls = _live({2: 5.1e-3, 3: 6.0e-3, 4: 6.05e-3, 0: 6.1e-3})
    Sampling(budget=0.32).explain_live(ladder, 16 * wave, measure, ("warm", "cold", "paid"))
    assert calls == [(2, "paid"), (3, "paid"), (0, "warm")]  # the grid as `times` runs it
    calls.clear()
    Sampling(budget=0.32).explain_live(ladder, 16 * wave, measure, ("warm", "cold"))
    assert calls == [(2, "cold"), (3, "cold"), (0, "warm")]


def _with(rows: Dataset, **columns) -> Dataset:
    """``rows`` with extra sample columns (each a list, row by row)."""
    return Dataset(times=rows.times, samples=rows.samples.assign(**columns))


def test_a_line_the_samples_noise_leaves_wide_is_measured_whole():
    wave = 8 * 132
    # a short launch: waves 2 and 3 a microsecond apart, each timed to +-0.15 us, so the
    # line's 95% interval at the whole grid (60 waves) is about +-12%
    pts = [(2, 2 * wave, 6.4e-6, "cold"), (3, 3 * wave, 7.55e-6, "cold"),
           (0, 60 * wave, 75.2e-6, "cold")]
    base = _dataset(pts, blocks=60 * wave)
    noisy = _with(base, time_ci_low_s=[6.25e-6, 7.4e-6, 75e-6],
                  time_ci_high_s=[6.55e-6, 7.7e-6, 75.4e-6])
    got = Sampling().fit(noisy).explain(noisy)[0]
    assert got.seconds == pytest.approx(75.2e-6)
    assert "timing noise leaves the line" in got.based_on["method"]
    # without intervals, or with a tolerance wide enough, the line stands
    for data, model in ((base, Sampling()), (noisy, Sampling(tolerance=0.5))):
        kept = model.fit(data).explain(data)[0]
        assert kept.based_on["method"] == "linear extrapolation of sampled waves"


def test_noise_of_the_prediction_is_the_points_half_widths_carried_by_the_line():
    x, t = np.array([100.0, 200.0]), np.array([2e-6, 3e-6])
    fit = fit_samples(x, t, blocks=1000, psat=1, n_sm=100, tail=False,
                      half=np.array([0.1e-6, 0.1e-6]))
    # value at 1000 = t1 + 9 (t2 - t1): weights -8 and 9 on the points
    assert fit.seconds == pytest.approx(11e-6)
    assert fit.noise == pytest.approx(np.hypot(8, 9) * 0.1e-6 / 11e-6)


def _middle_dataset(middle_s: float) -> Dataset:
    wave = 4 * 132
    pts = [(k, k * wave, 4e-6 + 10e-6 * k, "cold") for k in (2, 3, 4, 5, 10, 20)]
    pts += [(0, 200 * wave, 1.0e-3, "cold")]
    # the comparison is warm: two waves from the start, and as many from the middle
    pts += [(2, 2 * wave, 23.8e-6, "warm"), (2, 2 * wave, middle_s, "warm")]
    data = _dataset(pts, blocks=200 * wave)
    return _with(data, first_block=[0] * 8 + [100 * wave])


def test_blocks_from_the_middle_that_take_less_time_send_the_launch_to_be_measured_whole():
    # over-launched: the middle of the grid holds blocks that skip the work
    data = _middle_dataset(middle_s=5e-6)
    got = Sampling().fit(data).explain(data)[0]
    assert got.seconds == pytest.approx(1.0e-3)
    assert "middle of the grid took -79%" in got.based_on["method"]
    # a sampler of cold samples reads the same warm pair
    assert Sampling(l2_state="cold").fit(data).explain(data)[0].seconds == \
        pytest.approx(1.0e-3)
    assert got.based_on["sampled_prediction_s"] == pytest.approx(4e-6 + 10e-6 * 200, rel=1e-6)


def test_a_middle_sample_like_the_first_leaves_the_line_and_is_counted():
    data = _middle_dataset(middle_s=24.5e-6)
    # a budget that pays for the two first rungs (5 of the 200 waves) and no further
    got = Sampling(budget=0.03).fit(data).explain(data)[0]
    assert got.seconds == pytest.approx(4e-6 + 10e-6 * 200, rel=1e-6)
    assert got.based_on["method"] == "linear extrapolation of sampled waves"
    # the two first rungs, and the warm pair from the start and the middle
    assert got.based_on["sample_seconds"] == pytest.approx(24e-6 + 34e-6 + 23.8e-6 + 24.5e-6)
    # seed-linear as published never reads the middle sample
    seed = SeedLinear(l2_state="cold").fit(data).predict(data)[0]
    assert seed == pytest.approx(4e-6 + 10e-6 * 200, rel=1e-6)


def test_live_rows_carry_their_intervals_to_the_line():
    wave = 8 * 132
    times = {2: 6.4e-6, 3: 7.55e-6, 0: 75.2e-6}
    ladder = pd.DataFrame([{"k": k, "psat": 8, "sm_count": 132,
                            "blocks_launched": (k or 60) * wave} for k in times])

    def measure(i, state):
        t = list(times.values())[i]
        return {"time_median_s": t, "time_ci_low_s": t - 0.15e-6, "time_ci_high_s": t + 0.15e-6}

    got = Sampling().explain_live(ladder, 60 * wave, measure, ("warm", "cold"))
    assert got.seconds == pytest.approx(75.2e-6)
    assert "timing noise" in got.based_on["method"]


def test_live_the_middle_and_its_twin_from_the_start_are_timed_warm():
    wave = 4 * 132
    rows = [{"k": k, "psat": 4, "sm_count": 132, "blocks_launched": k * wave, "first_block": 0}
            for k in (2, 3, 4, 5, 10, 20)]
    rows += [{"k": 0, "psat": 4, "sm_count": 132, "blocks_launched": 200 * wave,
              "first_block": 0},
             {"k": 2, "psat": 4, "sm_count": 132, "blocks_launched": 2 * wave,
              "first_block": 100 * wave}]
    ladder = pd.DataFrame(rows)
    calls = []

    def measure(i, state):
        calls.append((i, state))
        if i == 6:
            return 1.0e-3
        return 5e-6 if i == 7 else 4e-6 + 10e-6 * ladder["k"][i]

    got = Sampling(budget=0.03).explain_live(ladder, 200 * wave, measure, ("warm", "cold", "paid"))
    assert calls == [(0, "paid"), (1, "paid"), (0, "warm"), (7, "warm"), (6, "warm")]
    assert got.seconds == pytest.approx(1.0e-3)
    assert "middle of the grid" in got.based_on["method"]


def test_a_line_flat_at_the_launch_floor_still_climbs_within_the_budget():
    wave = 8 * 132
    # two and three waves at the launch floor, the later one a little faster (noise): the
    # line through them falls, and a budget on it would climb no further
    times = {2: 5.0e-6, 3: 4.9e-6, 5: 6.5e-6, 10: 12e-6, 20: 20e-6, 40: 36e-6, 80: 68e-6}
    pts = [(k, k * wave, t, "cold") for k, t in times.items()]
    data = _dataset(pts, blocks=1240 * wave)  # about 1 ms
    got = Sampling(tolerance=np.inf).fit(data).explain(data)[0]
    assert got.based_on["points"] > 2
    assert got.seconds == pytest.approx(4e-6 + 0.8e-6 * 1240, rel=0.05)
