"""Sampling predictors: time a few waves of the first blocks, extrapolate to the grid.

``seed-linear`` is the sampling seed's linear model (its section 5.1) exactly: two
samples of the first 2·Psat·N_SM and 3·Psat·N_SM blocks and a line through them,

    t(N) = t1 + (t2 - t1) / (P2 - P1) · (N - P1).

``sampling`` is kerncast's own sampler for GPUs with many SMs, where two or three waves
last a few microseconds, close to the launch floor, and a warm L2 flatters the
samples (docs/DESIGN.md, facts measured on the H100). It takes cold-L2 samples,
drops those still in the launch-overhead regime, adds points in order of the work
they cover while the sampling stays within a budget (a fraction of the predicted
full time), fits a line over every point it keeps with the fit's uncertainty, models
the tail wave, and flags kernels whose waves are too uneven to trust. It also flags a
line whose samples' timing noise, carried through the line, leaves the whole grid's
time uncertain by more than its tolerance (short launches, whose affordable samples sit
near the launch floor), and a grid whose blocks from the middle take another time than
as many from its start (a grid launched past its data, a triangular one): the samples
from the start do not stand for it.

Both read the ``samples`` table of a dataset (one row per sampled launch: ``k``,
``psat``, ``blocks_launched``, ``grid_fraction``, ``l2_state``, timing statistics) and
the target rows' ``blocks``. A launch whose grid is too short to sample (fewer than two
samples fit before its full grid, or, for ``sampling``, its first two samples would
launch a larger share of its blocks than the budget: they would cost more than the run
of the whole grid they stand for) is predicted by a direct measurement of its whole
grid, and the explanation says so. ``sampling`` also measures the whole launch where
its samples say they cannot be trusted (uneven waves, work held by the first blocks,
too much noise, or another time in the middle of the grid), in live mode and, where
the dataset recorded that run (the ``samples-full`` experiment), on a dataset; the
explanation keeps the sampled prediction it replaced, and the cost counts both. The
whole grid is timed warm, as the ground truth is (the cold run of a dataset that has no
warm one stands in for it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from kerncast.data import Dataset
from kerncast.models._base import LaunchInputs, Prediction, Predictor
from kerncast.models.registry import register

__all__ = ["SampleFit", "Sampling", "SeedLinear", "fit_samples", "sample_groups"]

JOIN = ["kernel", "language", "size", "config", "device", "sm_count"]
#: A line whose intercept is this share of its longest sample, and longer than a launch
#: floor could explain, says the first blocks hold most of the work (sssp_relax on the
#: H100: 3.1 ms of a 6.1 ms sample at three waves, and the full grid takes 6.0 ms).
FRONT_SHARE, FRONT_FLOOR_S = 0.5, 50e-6
#: The ladder starts at its second rung only where that rung and the next together
#: launch at most this share of the grid's blocks.
SHORT_GRID_SHARE = 0.5
#: A line that says the first blocks hold most of the work may be the slow ramp of the
#: first waves: it gets one more jump, paid up to this share of its predicted time
#: (less than measuring the launch whole, which live mode does for a flagged launch).
#: spmv_csr_vector on the H100: 71 us of intercept from waves 2 and 3, 50 us from
#: waves 5 and 10, and 38% -> 2% error.
FRONT_BUDGET = 0.5
#: The columns of a sample's 95% interval of its median time (a dataset's, or a live run's).
CI_COLUMNS = ("time_ci_low_s", "time_ci_high_s")


def sample_groups(dataset: Dataset, l2_state: str) -> dict[tuple, pd.DataFrame]:
    """Successful samples of each launch key, ordered by blocks launched: those timed in
    ``l2_state``, with the run of the whole grid (``k`` 0) timed warm where the launch
    has one (:func:`_whole_warm`)."""
    s = dataset.samples
    if s is None or not len(s):
        return {}
    s = s[(s["status"] == "ok") & np.isfinite(s["time_median_s"]) & (s["time_median_s"] > 0)]
    s = _whole_warm(s, l2_state)
    cols = [c for c in JOIN if c in s.columns]
    return {key: grp.sort_values("blocks_launched").reset_index(drop=True)
            for key, grp in s.groupby(cols, sort=False)}


def _whole_warm(samples: pd.DataFrame, l2_state: str) -> pd.DataFrame:
    """The samples timed in ``l2_state``, where a launch's whole grid was also timed warm
    with that run in place of its own: a direct measurement extrapolates nothing, so it
    is timed as the ``times`` experiment times the launch. A cold run of a launch whose
    data fits in the L2 pays for the flush's dirty lines (10-68% on the H200's launches
    of 3-17 us)."""
    mine = samples[samples["l2_state"] == l2_state]
    if l2_state == "warm" or "k" not in samples.columns:
        return mine
    whole = samples[(samples["k"] == 0) & (samples["grid_fraction"] >= 1)]
    warm = whole[whole["l2_state"] == "warm"]
    if not len(warm):
        return mine
    cols = [c for c in JOIN if c in samples.columns]
    has_warm = pd.MultiIndex.from_frame(mine[cols]).isin(pd.MultiIndex.from_frame(warm[cols]))
    replaced = has_warm & (mine["k"] == 0).to_numpy() & (mine["grid_fraction"] >= 1).to_numpy()
    keys = pd.MultiIndex.from_frame(warm[cols]).isin(pd.MultiIndex.from_frame(mine[cols]))
    return pd.concat([mine[~replaced], warm[keys]])


def _ladder(group: pd.DataFrame) -> pd.DataFrame:
    """The samples from the grid's start (and the whole grid) that a line goes through."""
    keep = pd.Series(True, index=group.index)
    if "first_block" in group.columns:
        keep &= group["first_block"].fillna(0) == 0
    if "check" in group.columns:
        keep &= ~group["check"].fillna(False).astype(bool)
    return group[keep]


def _checks(group: pd.DataFrame) -> pd.DataFrame:
    """The samples that compare the middle of the grid with its start (:func:`with_checks`)."""
    if "check" not in group.columns:
        return group.head(0)
    return group[group["check"].fillna(False).astype(bool)].sort_values("blocks_launched")


def with_checks(group: pd.DataFrame, warm: pd.DataFrame | None) -> pd.DataFrame:
    """``group`` with the samples that compare the middle of the grid with its start
    (``check``): each sample of ``warm`` from the middle and the one of as many blocks
    from the start. They are taken warm: a warm sample is timed to within about 1%,
    where one after a flush pays for the flush's varying cost (paid samples of two waves
    from the start and the middle of the same uniform grid differ by up to 23% on the
    H200, warm ones by under 2%)."""
    group = group.assign(check=False)
    if warm is None or "first_block" not in warm.columns:
        return group
    middles = warm[warm["first_block"].fillna(0) > 0]
    starts = warm[(warm["first_block"].fillna(0) == 0)
                  & warm["blocks_launched"].isin(middles["blocks_launched"])]
    if not len(middles) or not len(starts):
        return group
    return pd.concat([group, middles.assign(check=True), starts.assign(check=True)],
                     ignore_index=True)


def _half(frame: pd.DataFrame) -> np.ndarray | None:
    """Half the width of each sample's 95% interval (None where the rows have none)."""
    if not all(c in frame.columns for c in CI_COLUMNS):
        return None
    low, high = (frame[c].to_numpy(float) for c in CI_COLUMNS)
    return np.nan_to_num((high - low) / 2, nan=0.0)


def _key(row: pd.Series, cols: list[str]) -> tuple:
    return tuple(row[c] for c in cols)


@dataclass(frozen=True)
class SampleFit:
    """A line through sampled (blocks, seconds) points, evaluated at the full grid."""

    seconds: float
    intercept: float
    per_block: float
    points: int
    stderr: float
    direct: bool
    uneven: bool
    sample_seconds: float
    front_loaded: bool = False
    #: half the width of the prediction's 95% interval from the samples' timing noise, as a
    #: share of the prediction (0 where the samples have no interval)
    noise: float = 0.0
    #: that interval is wider than the sampler's tolerance
    imprecise: bool = False
    #: a sample from the middle of the grid against as many blocks from its start
    #: (its time over theirs, less 1; NaN where none was run), and whether they differ by
    #: more than the tolerance and their timing noise
    across: float = float("nan")
    uneven_grid: bool = False
    #: the sampled prediction that a direct measurement replaced, and why
    replaced_seconds: float | None = None
    replaced_because: str = ""
    #: the launch's own blocks, from its first, that one of the runs taken executed whole
    #: (the largest sample from the grid's start, or the whole grid): work that a run
    #: keeping the samples' output (``kerncast split``) does not repeat
    blocks_done: int = 0
    #: measured whole because its first two samples would launch more of the grid's
    #: blocks than the budget's share of it
    over_budget: bool = False


def _measured(frame: pd.DataFrame) -> pd.DataFrame:
    """Samples already timed (a dataset's): nothing to measure."""
    return frame


def _direct(group: pd.DataFrame, blocks: int, fill=_measured) -> SampleFit | None:
    """The launch's whole grid, measured (None where no sample holds it)."""
    group = _ladder(group)
    whole = group[group["blocks_launched"] >= blocks]
    if not len(whole):
        return None
    t = float(fill(whole.head(1))["time_median_s"].iloc[0])
    return SampleFit(t, t, 0.0, 1, 0.0, True, False, t, blocks_done=blocks)


def _distrusted(fit: SampleFit) -> str:
    """Why a sampled line may not be trusted ('' where it may)."""
    if fit.direct:
        return ""
    if fit.uneven:
        return "waves differ by more than 5%: sampling may not be trusted"
    if fit.front_loaded:
        return ("most of the sampled time is a fixed cost the blocks do not explain: the first "
                "blocks hold more work than the rest, so sampling may not be trusted")
    if fit.uneven_grid:
        return (f"blocks from the middle of the grid took {100 * fit.across:+.0f}% of the time of "
                "as many from its start: the work differs across the grid, so sampling may not "
                "be trusted")
    if fit.imprecise:
        return (f"the samples' timing noise leaves the line \u00b1{100 * fit.noise:.0f}% at the "
                "whole grid: samples that fit the budget are too short to predict it, so "
                "sampling may not be trusted")
    return ""


def _direct_method(fit: SampleFit) -> str:
    """How a launch measured whole came to be."""
    if fit.over_budget:
        return ("direct measurement: the grid is too short to sample within the budget (its "
                "first two samples would launch a larger share of its blocks than the budget "
                "allows), so it was run whole")
    return ("direct measurement: the grid is too short to sample (fewer than two samples fit "
            "before its full grid)")


def fit_samples(x: np.ndarray, t: np.ndarray, blocks: float, psat: int, n_sm: int,
                tail: bool = True, half: np.ndarray | None = None) -> SampleFit:
    """Least-squares line t = a + b·x through the points, evaluated at ``blocks``.

    With ``tail``, a partial last wave is charged by the blocks its busiest SM holds:
    ``ceil(rest / n_sm)`` of the ``psat`` a full wave puts on each SM. ``half``, the half
    widths of the points' 95% intervals, gives the prediction's own (``noise``): the
    line's value is a weighted sum of the points, and its interval the root of the sum of
    their weighted squared half widths.
    """
    x, t = np.asarray(x, float), np.asarray(t, float)
    design = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(design, t, rcond=None)
    a, b = float(coef[0]), float(coef[1])
    effective = float(blocks)
    wave = psat * n_sm
    if tail and wave > 0:
        full_waves, rest = divmod(int(blocks), int(wave))
        if rest:
            effective = full_waves * wave + -(-rest // n_sm) * n_sm
    resid = t - design @ coef
    sigma = float(np.sqrt(resid @ resid / (len(x) - 2))) if len(x) > 2 else 0.0
    spread = float(np.sqrt(np.sum((x - x.mean()) ** 2))) or 1.0
    stderr = sigma * float(np.sqrt(1 / len(x) + (effective - x.mean()) ** 2 / spread**2))
    uneven = len(x) > 2 and sigma > 0.05 * float(np.mean(t))
    seconds = a + b * effective
    front = a > FRONT_SHARE * float(t.max()) and a > FRONT_FLOOR_S
    return SampleFit(seconds, a, b, len(x), stderr, False, bool(uneven), float(t.sum()),
                     bool(front), noise=_noise(design, effective, half) / max(seconds, 1e-12))


def _noise(design: np.ndarray, at: float, half: np.ndarray | None) -> float:
    """Half the width of the 95% interval of the least-squares line's value at ``at`` from
    the points' half widths ``half`` (0 where there are none)."""
    if half is None:
        return 0.0
    half = np.nan_to_num(np.asarray(half, float), nan=0.0)
    weights = np.array([1.0, at]) @ np.linalg.pinv(design)
    return float(np.sqrt(np.sum((weights * half) ** 2)))


def _rising(fit: SampleFit, x: float, t: float, blocks: int) -> SampleFit:
    """``fit``, or where its time does not grow with the blocks (two samples at the launch
    floor, whose noise tilts the line), the line through the origin and the largest
    sample ``(x, t)``: what the walk's budget and costs then rest on (copy_offset on the
    H200: 5.0 and 4.9 us at two and three waves, a line that gave the 1 ms launch 5 us
    and no budget to climb)."""
    if fit.per_block > 0:
        return fit
    per_block = t / max(x, 1.0)
    return replace(fit, intercept=0.0, per_block=per_block, seconds=per_block * blocks)


class _SamplingBase(Predictor):
    needs = frozenset({"sampled_runs", "spec"})
    #: measure the whole launch (live, or a dataset's samples-full run) when the samples
    #: say they cannot be trusted
    fallback = False
    columns = ("kernel", "language", "size", "config", "device", "sm_count", "blocks")

    def _fits(self, dataset: Dataset) -> list[SampleFit | None]:
        groups = self._groups(dataset)
        cols = [c for c in JOIN if c in dataset.times.columns]
        out = []
        for _, row in dataset.times.iterrows():
            group = groups.get(_key(row, cols))
            out.append(None if group is None else self._settled(group, int(row["blocks"])))
        return out

    def _settled(self, group: pd.DataFrame, blocks: int, fill=_measured) -> SampleFit | None:
        """The fit for one launch, or with ``fallback``, where the samples say they cannot
        be trusted and the whole grid was (or, through ``fill``, can be) measured, that
        measurement: on such kernels the samples already cost about as much as the launch
        (sssp_relax on the H100: 11 ms of samples for a 6 ms launch)."""
        fit = self._fit_one(group, blocks, fill)
        why = "" if fit is None else _distrusted(fit)
        if not (self.fallback and why):
            return fit
        whole = _direct(group, blocks, fill)
        if whole is None:
            return fit
        return replace(whole, sample_seconds=fit.sample_seconds + whole.seconds,
                       points=fit.points, replaced_seconds=fit.seconds, replaced_because=why)

    def _predict(self, dataset: Dataset) -> np.ndarray:
        return np.array([np.nan if f is None else f.seconds for f in self._fits(dataset)])

    def _groups(self, dataset: Dataset) -> dict[tuple, pd.DataFrame]:
        """The samples of each launch key this model fits (with the whole-grid runs)."""
        return sample_groups(dataset, self._l2_state())

    def explain_live(self, ladder: pd.DataFrame, blocks: int, measure,
                     l2_states: tuple[str, ...] = ("warm", "cold")) -> Prediction:
        """Predict one launch from samples run on demand: ``ladder`` has a row per sample
        the launch allows, smallest first, then its full grid (``k``, ``psat``,
        ``sm_count``, ``blocks_launched``; samples from the middle of the grid, with
        ``first_block`` > 0, may follow), and ``measure(i, l2_state)`` runs row ``i`` and
        returns its median seconds, or its row with the median's 95% interval
        (``l2_states``: those the backend has). Only the samples this model takes are
        run; the full grid, where it is run, and the samples that compare the middle of
        the grid with its start are run warm (:func:`_whole_warm`, :func:`with_checks`)."""
        frame = ladder.reset_index(drop=True).assign(
            rung=lambda f: np.arange(len(f)), time_median_s=np.nan,
            **{c: np.nan for c in CI_COLUMNS})
        frame = with_checks(frame, frame)
        state = self._live_state(l2_states)
        check_state = "warm" if "warm" in l2_states else state

        def timed(rung: int, k: int, check: bool) -> tuple[float, float, float]:
            got = measure(rung, check_state if check or k == 0 else state)
            if isinstance(got, dict):
                return tuple(float(got.get(c, np.nan))
                             for c in ("time_median_s", *CI_COLUMNS))  # type: ignore[return-value]
            return float(got), np.nan, np.nan

        def fill(part: pd.DataFrame) -> pd.DataFrame:
            done = [(t, lo, hi) if np.isfinite(t) else timed(int(r), int(k), bool(c))
                    for r, k, c, t, lo, hi in zip(part["rung"], part["k"], part["check"],
                                                  part["time_median_s"],
                                                  *(part[c] for c in CI_COLUMNS))]
            columns = ("time_median_s", *CI_COLUMNS)
            return part.assign(**{c: [d[i] for d in done] for i, c in enumerate(columns)})

        return self._explain_one(self._settled(frame, blocks, fill))

    def explain_launch(self, kernel: Any, launch: Any, inputs: LaunchInputs) -> Prediction:
        """The launch's samples run live on the driver's backend (only those this model
        takes; see :meth:`explain_live`), then predicted."""
        from kerncast.models._live import sampled, stamp  # noqa: PLC0415 (cycle: _live imports _base)

        made: list[Prediction] = []
        backend = inputs.backend

        def choose(rungs: list[dict], time) -> None:
            ladder = pd.DataFrame(rungs).assign(sm_count=backend.sm_count)
            made.append(self.explain_live(ladder, launch.blocks, time, backend.l2_states))

        rows = sampled(inputs, choose)
        return stamp(made[0], inputs, rows, launch)

    def explain(self, dataset: Dataset) -> list[Prediction]:
        return [self._explain_one(f) for f in self._fits(dataset)]

    def _explain_one(self, fit: SampleFit | None) -> Prediction:
        if fit is None:
            return Prediction(float("nan"), self.name, based_on={"error": "no sampled runs"})
        if fit.replaced_seconds is not None:
            return Prediction(fit.seconds, self.name, bottleneck="unknown", based_on={
                "method": "direct measurement of the whole launch: " + fit.replaced_because,
                "sampled_prediction_s": fit.replaced_seconds, "points": fit.points,
                "sample_seconds": fit.sample_seconds, "blocks_done": fit.blocks_done})
        based_on: dict[str, Any] = {
            "points": fit.points, "per_block_s": fit.per_block, "intercept_s": fit.intercept,
            "stderr_s": fit.stderr, "sample_seconds": fit.sample_seconds,
            "blocks_done": fit.blocks_done,
            "method": _direct_method(fit) if fit.direct
            else "linear extrapolation of sampled waves",
        }
        if why := _distrusted(fit):
            based_on["warning"] = why
        # a direct measurement has no fixed cost apart from its blocks' time
        breakdown = {} if fit.direct else {"launch": max(fit.intercept, 0.0)}
        return Prediction(fit.seconds, self.name, breakdown=breakdown,
                          bottleneck="unknown", based_on=based_on)

    def _l2_state(self) -> str:
        raise NotImplementedError

    def _live_state(self, l2_states: tuple[str, ...]) -> str:
        """The L2 state this model times its samples with on a backend that has
        ``l2_states``."""
        return self._l2_state()

    def _fit_one(self, group: pd.DataFrame, blocks: int, fill=_measured) -> SampleFit | None:
        """The fit for one launch; ``fill`` times the samples it takes that have none."""
        raise NotImplementedError


@register
class SeedLinear(_SamplingBase):
    """The sampling seed's linear model (section 5.1), as published."""

    name = "seed-linear"
    description = ("The sampling seed's linear model: samples of the first 2·Psat·N_SM and "
                   "3·Psat·N_SM blocks, a line through the two")
    insight = "how the time grows with blocks; nothing about why"

    def __init__(self, *, first_k: int = 2, second_k: int = 3, l2_state: str = "warm"):
        self.first_k = first_k
        self.second_k = second_k
        self.l2_state = l2_state

    def _l2_state(self) -> str:
        return self.l2_state

    def _fit_one(self, group: pd.DataFrame, blocks: int, fill=_measured) -> SampleFit | None:
        group = _ladder(group)
        if int(group["blocks_launched"].iloc[0]) >= blocks:
            return _direct(group, blocks, fill)
        picks = [group[(group["k"] == k) & (group["blocks_launched"] < blocks)].head(1)
                 for k in (self.first_k, self.second_k)]
        if any(not len(p) for p in picks):
            return _direct(group, blocks, fill)
        picks = [fill(p) for p in picks]
        (b1, t1), (b2, t2) = [(float(p["blocks_launched"].iloc[0]), float(p["time_median_s"].iloc[0]))
                              for p in picks]
        if b2 <= b1:
            return _direct(group, blocks, fill)
        slope = (t2 - t1) / (b2 - b1)
        seconds = t1 + slope * (blocks - b1)
        intercept = t1 - slope * b1
        front = intercept > FRONT_SHARE * max(t1, t2) and intercept > FRONT_FLOOR_S
        return SampleFit(seconds, intercept, slope, 2, 0.0, False, False, t1 + t2, front,
                         blocks_done=int(b2))


@register
class Sampling(_SamplingBase):
    """kerncast's sampler: cold-L2 samples chosen by the work they cover, fitted together.

    ``l2_state`` ``auto`` takes paid samples (a cold L2, each sample timed with the
    write-back of its own stores) where the dataset or the backend has them, else cold
    ones. With ``fallback``, a launch whose samples are flagged (uneven waves, work held by
    the first blocks, a 95% interval from the samples' timing noise wider than
    ``tolerance`` either side, or a sample from the middle of the grid that differs from
    as many blocks from its start by more than ``tolerance`` and their noise) is measured
    whole instead, live or from a dataset's ``samples-full`` run, and the prediction says
    so."""

    name = "sampling"
    description = ("Cold-L2 samples of whole waves beyond the launch-overhead regime, "
                   "chosen within a time budget and fitted together, with the tail wave")
    insight = "the time per wave, the fixed cost, the fit's uncertainty and whether waves are even"

    def __init__(self, *, l2_state: str = "auto", min_seconds: float = 20e-6,
                 budget: float = 0.1, tail: bool = True, first_wave: bool = False,
                 fallback: bool = True, tolerance: float = 0.05):
        self.l2_state = l2_state
        self.min_seconds = min_seconds
        self.budget = budget
        self.tail = tail
        self.first_wave = first_wave
        self.fallback = fallback
        self.tolerance = tolerance

    def _l2_state(self) -> str:
        return "cold" if self.l2_state == "auto" else self.l2_state

    def _live_state(self, l2_states: tuple[str, ...]) -> str:
        if self.l2_state == "auto":
            return "paid" if "paid" in l2_states else "cold"
        return self.l2_state

    def _groups(self, dataset: Dataset) -> dict[tuple, pd.DataFrame]:
        """With ``l2_state`` auto: a launch's paid samples where it has them, else its
        cold ones; its cold run of the whole grid either way; and the warm samples that
        compare the middle of the grid with its start (:func:`with_checks`)."""
        warm = sample_groups(dataset, "warm")
        if self.l2_state != "auto":
            return {key: with_checks(group, warm.get(key))
                    for key, group in super()._groups(dataset).items()}
        cold = sample_groups(dataset, "cold")
        out = dict(cold)
        for key, paid in sample_groups(dataset, "paid").items():
            whole = cold[key][cold[key]["grid_fraction"] >= 1] if key in cold else paid.head(0)
            out[key] = pd.concat([paid[paid["grid_fraction"] < 1], whole]) \
                .sort_values("blocks_launched").reset_index(drop=True)
        return {key: with_checks(group, warm.get(key)) for key, group in out.items()}

    def _fit_one(self, group: pd.DataFrame, blocks: int, fill=_measured) -> SampleFit | None:
        ladder = _ladder(group)
        partial = ladder[ladder["blocks_launched"] < blocks]
        if len(partial) < 2:
            return _direct(ladder, blocks, fill) or (
                self._line(fill(partial), blocks) if len(partial) else None)
        points = self._first_rungs(partial.reset_index(drop=True), blocks)
        if points["blocks_launched"].iloc[:2].sum() > self.budget * blocks and \
                (whole := _direct(ladder, blocks, fill)) is not None:
            return replace(whole, over_budget=True)
        return self._walk(points, blocks, fill, _checks(group))

    def _first_rungs(self, points: pd.DataFrame, blocks: int) -> pd.DataFrame:
        """The ladder from the rung the walk starts at: its second rung unless
        ``first_wave``. A single wave pays alone for fetching the data every block
        shares (a cold L2) and drains alone, so the step from one wave to two
        understates the time per wave (matmul_naive on the H100: 123 ns per block from
        one wave to two, 197 from two to three, 175-196 further up). On a grid so short
        that the second and third rungs would cost more than half of it (under ten
        waves), the ladder keeps its first rung: two rungs that cost three waves instead
        of five, for the same line (arith_fp32 on the H100, 3.9 waves: 0.1% from one
        wave to two)."""
        later = points[points["k"] > 1]
        if not self.first_wave and len(later) >= 2 and \
                later["blocks_launched"].iloc[:2].sum() <= SHORT_GRID_SHARE * blocks:
            return later.reset_index(drop=True)
        return points

    def _walk(self, points: pd.DataFrame, blocks: int, fill=_measured,
              checks: pd.DataFrame | None = None) -> SampleFit:
        """Take the two smallest rungs of the ladder of samples (``points``, from the
        rung :meth:`_first_rungs` starts at), then jump: the largest
        rung that, with its partner at about half its blocks, the budget still pays for
        (costs as the current line predicts them; ``budget`` is a share of the predicted
        full time). The line goes through that pair, so each jump doubles the work the
        fit rests on without paying for every rung in between, and the partner's half
        step measures the time per block where the blocks still to come run (on the
        H100 the time per wave falls as samples grow past the launch ramp: reduce_tree
        costs 1.8 µs per wave from two waves to three and 1.5 from twenty to forty)."""
        x = points["blocks_launched"].to_numpy(float)
        t = points["time_median_s"].to_numpy(float).copy()

        def have(idx: list[int]) -> pd.DataFrame:  # the samples idx, timed
            nonlocal points
            need = [i for i in idx if not np.isfinite(t[i])]
            if need:
                got = fill(points.iloc[need])
                t[need] = got["time_median_s"].to_numpy(float)
                kept = [c for c in CI_COLUMNS if c in got.columns]
                if kept:
                    points = points.copy()
                    points.loc[points.index[need], kept] = got[kept].to_numpy(float)
            return points.iloc[idx].assign(time_median_s=t[idx])

        taken = [0, 1]
        fit = self._line(have(taken), blocks)
        while (pair := self._jump(x, float(t[taken].sum()), taken,
                                  _rising(fit, x[taken[-1]], t[taken[-1]], blocks))) is not None:
            taken = sorted(set(taken) | set(pair))
            fit = self._line(have(list(pair)), blocks)
        if fit.front_loaded and (pair := self._jump(x, float(t[taken].sum()), taken, fit,
                                                    FRONT_BUDGET)) is not None:
            taken = sorted(set(taken) | set(pair))
            fit = self._line(have(list(pair)), blocks)
        spread = self._line(self._past_floor(have(taken)), blocks)
        across, differs, extra = self._across(x, taken, checks, fill, blocks)
        # the full grid holds every sampled block: it takes at least the longest sample
        seconds = max(fit.seconds, float(t[taken].max()))
        return replace(fit, seconds=seconds, sample_seconds=float(t[taken].sum()) + extra,
                       points=len(taken), stderr=spread.stderr, uneven=spread.uneven,
                       imprecise=fit.noise > self.tolerance, across=across,
                       uneven_grid=differs, blocks_done=int(x[taken].max()))

    def _across(self, x: np.ndarray, taken: list[int], checks: pd.DataFrame | None,
                fill, blocks: int) -> tuple[float, bool, float]:
        """A sample from the middle of the grid against as many blocks from its start
        (``checks``, :func:`with_checks`): (its time over theirs less 1, whether they
        differ by more than the tolerance and their timing noise, the seconds of the two).
        The pair is that of the walk's first rung where there is one, else the smallest;
        without one, NaN and False. Nor is it run where the walk's largest sample already
        holds half the grid or more: that sample runs past the middle, and a sample from
        the middle would run blocks it ran (a grid of a few waves)."""
        if checks is None or not len(checks) or 2 * x[taken].max() >= blocks:
            return float("nan"), False, 0.0
        middles = checks[checks["first_block"] > 0]
        starts = checks[checks["first_block"] == 0]
        sizes = middles["blocks_launched"][middles["blocks_launched"].isin(
            starts["blocks_launched"])]
        if not len(sizes):
            return float("nan"), False, 0.0
        size = x[taken[0]] if (sizes == x[taken[0]]).any() else sizes.min()
        pair = fill(pd.concat([starts[starts["blocks_launched"] == size].head(1),
                               middles[middles["blocks_launched"] == size].head(1)]))
        t_start, t_middle = pair["time_median_s"].to_numpy(float)
        half = _half(pair)
        noise = 0.0 if half is None else float(half.sum())
        differs = abs(t_middle - t_start) > self.tolerance * t_start + noise
        return t_middle / t_start - 1, bool(differs), t_start + t_middle

    def _jump(self, x: np.ndarray, spent: float, taken: list[int], fit: SampleFit,
              budget: float | None = None) -> tuple[int, int] | None:
        """The next (partner, rung) pair that the budget (``self.budget`` unless given)
        left after ``spent`` seconds of samples pays for, as the current line predicts
        their cost, or None."""
        left = (self.budget if budget is None else budget) * max(fit.seconds, 1e-12) - spent
        best = None
        for rung in range(taken[-1] + 1, len(x)):
            partner = int(np.argmin(np.abs(x - x[rung] / 2)))
            cost = sum(fit.intercept + fit.per_block * x[i]
                       for i in {rung, partner} if i not in taken)
            if cost <= left:
                best = (partner, rung)
        return best

    def _past_floor(self, points: pd.DataFrame) -> pd.DataFrame:
        long_enough = points[points["time_median_s"] >= self.min_seconds]
        return long_enough if len(long_enough) >= 2 else points.tail(2)

    def _line(self, points: pd.DataFrame, blocks: int) -> SampleFit:
        return fit_samples(points["blocks_launched"].to_numpy(), points["time_median_s"].to_numpy(),
                           blocks, int(points["psat"].iloc[0]), int(points["sm_count"].iloc[0]),
                           tail=self.tail, half=_half(points))
