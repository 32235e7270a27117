"""Campaign plans: items per experiment, and the keys that make resuming exact."""

from types import SimpleNamespace

import pytest

from kerncast import InputError
from kerncast.corpus import get_kernel
from kerncast.measure._ncu_child import _sampled
from kerncast.measure._plan import SAMPLE_COUNTER_KS, done_keys, item_key, plan_units


def test_sample_counters_plan_one_item_per_multiplier():
    kernel = get_kernel("matmul_naive")
    units, _ = plan_units([kernel], ["large"], ["counters", "sample-counters"],
                          language="cuda", total_sms=132)
    items = units[0].items
    sampled = [i for i in items if i.experiment == "sample-counters"]
    assert [i.sample_k for i in sampled] == list(SAMPLE_COUNTER_KS)  # default configuration
    assert all(i.table == "counters" for i in items)
    full = [i for i in items if i.experiment == "counters"]
    assert len(full) == len(kernel.tunable_space()) and {i.sample_k for i in full} == {0}
    keys = {item_key(i, "h100-sxm") for i in items}
    assert len(keys) == len(items)  # a sampled launch never hides the full one


def test_sampled_launch_takes_whole_rows_of_the_first_waves():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("large", {"bx": 16, "by": 16})  # 128 x 128 blocks of 256 threads
    backend = SimpleNamespace(kind="gpu", device_key="h100-sxm", sm_count=132)
    record: dict = {}
    launch = _sampled(backend, config, {"registers": 32, "static_shared": 0}, 2, record)
    assert record["psat"] == 8
    assert launch.grid == (128, 17)  # 2 * 8 * 132 = 2112 blocks -> 17 rows of 128
    assert record["blocks_launched"] == 128 * 17
    record = {}
    assert _sampled(backend, config, {}, 0, record) is config
    assert record["blocks_launched"] == config.blocks


def test_energy_sweep_plans_the_default_launch_at_each_sm_count():
    kernel = get_kernel("matmul_naive")
    units, notes = plan_units([kernel], ["large"], ["energy", "energy-sweep"], language="cuda",
                              sm_counts=(16, 64, 132), total_sms=132)
    items = units[0].items
    assert [(i.experiment, i.sm_count) for i in items] == [
        ("energy", None), ("energy-sweep", 16), ("energy-sweep", 64)]
    assert all(i.table == "energy" for i in items)
    assert any("energy experiment's row" in n for n in notes)  # 132 is the whole-GPU row
    keys = [item_key(i, "h100-sxm") for i in items]
    assert len(set(keys)) == 3


def test_recorded_energy_rows_mark_their_sm_count_done():
    import pandas as pd

    kernel = get_kernel("matmul_naive")
    units, _ = plan_units([kernel], ["large"], ["energy", "energy-sweep"], language="cuda",
                          sm_counts=(16, 64), total_sms=132)
    items = units[0].items
    base = {"kernel": "matmul_naive", "language": "cuda", "size": "large",
            "config": items[0].config, "device": "h100-sxm", "status": "ok"}
    frame = pd.DataFrame([{**base, "sm_count": 132}, {**base, "sm_count": 16}])
    dataset = SimpleNamespace(tables=lambda: {"energy": frame})
    done = done_keys(dataset, 132)
    assert [item_key(i, "h100-sxm") in done for i in items] == [True, True, False]


def _ladder_and(other: str):
    """The samples item and ``other``'s of matmul_naive at size large, a recorded ladder
    of two warm and cold rungs, and which of the two items a samples table marks done."""
    import pandas as pd

    units, _ = plan_units([get_kernel("matmul_naive")], ["large"], ["samples", other],
                          language="cuda", configs="default", total_sms=132)
    ladder, item = units[0].items
    base = {"kernel": "matmul_naive", "language": "cuda", "size": "large",
            "config": ladder.config, "device": "h100-sxm", "status": "ok"}
    rungs = pd.DataFrame([{**base, "k": k, "l2_state": s, "grid_fraction": 0.01 * k}
                          for k in (1, 2) for s in ("warm", "cold")])

    def done(frame) -> list[bool]:
        keys = done_keys(SimpleNamespace(tables=lambda: {"samples": frame}), 132)
        return [item_key(i, "h100-sxm") in keys for i in (ladder, item)]

    return ladder, item, base, rungs, done


def test_a_recorded_ladder_leaves_the_full_grid_to_measure():
    import pandas as pd

    ladder, full, base, rungs, done = _ladder_and("samples-full")
    assert (ladder.table, full.table) == ("samples", "samples")
    assert done(rungs) == [True, False]
    whole = {**base, "k": 0, "grid_fraction": 1.0}
    assert done(pd.DataFrame([{**whole, "l2_state": "warm"}])) == [False, True]
    # a whole grid timed only cold, as samples-full once did, is measured again (warm too)
    assert done(pd.DataFrame([{**whole, "l2_state": "cold"}])) == [False, False]
    assert done(pd.DataFrame([{**whole, "l2_state": "warm", "status": "compile_failed"}])) \
        == [False, True]


def test_recorded_paid_samples_mark_the_paid_ladder_done_and_only_it():
    import pandas as pd

    ladder, paid, _, rungs, done = _ladder_and("samples-paid")
    assert (ladder.experiment, paid.experiment, paid.table) == ("samples", "samples-paid", "samples")
    assert done(rungs) == [True, False]
    assert done(pd.concat([rungs, rungs.assign(l2_state="paid")])) == [True, True]


def test_spread_configs_are_the_default_and_the_extremes_of_threads_per_block():
    from kerncast.corpus import get_kernel
    from kerncast.measure._plan import spread_configs

    kernel = get_kernel("matmul_naive")
    chosen = spread_configs(kernel, "medium")
    threads = sorted(c.threads_per_block for c in kernel.launches("medium"))
    assert chosen[0].label() == kernel.launch("medium").label()
    assert [c.threads_per_block for c in chosen[1:]] == [threads[0], threads[-1]]
    units, _ = plan_units([kernel], ["medium"], ["sm-sweep"], language="cuda",
                          configs="spread", sm_counts=(16,), total_sms=132)
    assert len(units[0].items) == 3
    with pytest.raises(InputError, match="spread"):
        plan_units([kernel], ["medium"], ["times"], language="cuda", configs="some")
