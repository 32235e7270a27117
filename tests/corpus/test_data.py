"""Inputs, poisoned outputs and reference checks."""

import numpy as np
import pytest

from kerncast import InputError
from kerncast.corpus import CorpusInputs, compare_outputs, expected_outputs, get_kernel, make_args


def test_args_follow_the_spec():
    kernel = get_kernel("matmul_naive")
    cfg = kernel.launch("small")
    args = make_args(kernel, cfg, seed=1)
    assert args["a"].dtype == np.float32 and args["a"].size == 48 * 48
    assert np.isnan(args["c"]).all()  # outputs start poisoned
    assert args["n"] == 48 and isinstance(args["n"], np.int32)
    again = make_args(kernel, cfg, seed=1)
    assert np.array_equal(args["a"], again["a"])  # seeded


def test_compare_reports_first_difference():
    kernel = get_kernel("matmul_naive")
    cfg = kernel.launch("small")
    args = make_args(kernel, cfg)
    want = expected_outputs(kernel, args, cfg)
    got = {"c": want["c"].copy()}
    assert compare_outputs(kernel, got, want) == []
    got["c"][5] += 1.0
    (problem,) = compare_outputs(kernel, got, want)
    assert problem.startswith("c: 1 of 2304 elements differ, first at [5]")
    assert compare_outputs(kernel, {"c": args["c"]}, want)  # poisoned output never passes


def test_generator_of_wrong_size_is_named(monkeypatch):
    kernel = get_kernel("matmul_naive")
    from kerncast.corpus import module_of

    mod = module_of(kernel)
    monkeypatch.setattr(mod, "inputs", lambda k, p, r: {"a": np.zeros(3, np.float32),
                                                         "b": np.zeros(3, np.float32)})
    with pytest.raises(InputError, match=r"returned 3 elements for 'a', but the spec's shape gives 2304"):
        make_args(kernel, kernel.launch("small"))


def _counting_generator(monkeypatch, kernel, reads: tuple[str, ...]):
    """Replace the kernel's generator by one that reads ``reads`` of its params and counts
    its calls."""
    from kerncast.corpus import module_of

    calls = []

    def inputs(name, params, rng):
        calls.append({key: params[key] for key in reads})
        return {"records": rng.random(2 * params["n"], dtype=np.float32)}

    monkeypatch.setattr(module_of(kernel), "inputs", inputs)
    monkeypatch.setattr(CorpusInputs, "_kept", [])
    return calls


def _draw(kernel, config, seed=0):
    from kerncast.core import Array

    _, launch = kernel.instance(config, seed=seed)
    array = next(a for a, n in zip(launch.args, launch.names) if n == "records")
    assert isinstance(array, Array)
    return array.values(np.random.default_rng(0))


def test_a_sweep_generates_a_problem_once_when_the_generator_reads_no_tunable(monkeypatch):
    kernel = get_kernel("nearest_distance")
    calls = _counting_generator(monkeypatch, kernel, reads=("n",))
    configs = kernel.launches("small")[:4]
    assert len({tuple(c.tunables.items()) for c in configs}) == 4
    first = _draw(kernel, configs[0])
    for config in configs[1:]:
        assert np.shares_memory(_draw(kernel, config), first)
    assert len(calls) == 1
    _draw(kernel, configs[0], seed=1)  # another seed is another problem
    _draw(kernel, kernel.launch("medium"))  # and so is another size
    assert len(calls) == 3


def test_inputs_are_generated_again_when_a_tunable_the_generator_read_changes(monkeypatch):
    kernel = get_kernel("nearest_distance")
    calls = _counting_generator(monkeypatch, kernel, reads=("n", "ipt"))
    one, two, again = [c for c in kernel.launches("small") if c.tunables["bs"] == 32][:3]
    assert one.tunables["ipt"] != two.tunables["ipt"] != again.tunables["ipt"]
    _draw(kernel, one)
    _draw(kernel, two)
    assert [c["ipt"] for c in calls] == [one.tunables["ipt"], two.tunables["ipt"]]


def test_a_generator_that_reads_every_param_gets_inputs_of_its_own_launch(monkeypatch):
    from kerncast.corpus import module_of

    kernel = get_kernel("nearest_distance")
    monkeypatch.setattr(CorpusInputs, "_kept", [])
    seen = []

    def inputs(name, params, rng):
        seen.append(dict(params))  # copies all: any param may matter
        return {"records": rng.random(2 * params["n"], dtype=np.float32)}

    monkeypatch.setattr(module_of(kernel), "inputs", inputs)
    one, two = kernel.launches("small")[:2]
    _draw(kernel, one)
    _draw(kernel, one)
    _draw(kernel, two)
    assert len(seen) == 2


def test_launches_whose_outputs_differ_in_size_share_the_problem(monkeypatch):
    """radix_digit_count's counts hold one row per tile (bx * items), and its generator
    reads only n: the keys are generated once for launches of every tile."""
    from kerncast.core import Array
    from kerncast.corpus import module_of

    kernel = get_kernel("radix_digit_count")
    module = module_of(kernel)
    generate, calls = module.inputs, []

    def counted(name, params, rng):
        calls.append(name)
        return generate(name, params, rng)

    monkeypatch.setattr(module, "inputs", counted)
    monkeypatch.setattr(CorpusInputs, "_kept", [])
    configs = kernel.launches("small")
    tiles = {c.tunables["bx"] * c.tunables["items"] for c in configs}
    assert len(tiles) > 1  # the outputs' size changes across the launches
    keys = []
    for config in configs:
        _, launch = kernel.instance(config)
        array = next(a for a, n in zip(launch.args, launch.names) if n == "keys")
        assert isinstance(array, Array)
        keys.append(array.values(np.random.default_rng(0)))
    assert len(calls) == 1
    assert all(np.shares_memory(k, keys[0]) for k in keys)


def test_outputs_are_compared_as_isclose_compares_them_a_chunk_at_a_time(monkeypatch):
    from kerncast.corpus import _data

    monkeypatch.setattr(_data, "_CHUNK", 1000)  # many chunks, the last one partial
    rng = np.random.default_rng(3)
    want = rng.standard_normal(10_500).astype(np.float32)
    got = want * (1 + rng.standard_normal(want.size).astype(np.float32) * 1e-4)
    got[::97], want[::89] = np.nan, np.nan
    got[::131] = want[::131] = np.inf
    got[7::131], want[5::173] = -np.inf, np.inf
    isclose = np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-4, atol=1e-6)
    bad = _data._not_close(got, want, 1e-4, 1e-6)
    assert np.array_equal(bad, ~isclose) and 0 < bad.sum() < bad.size


def test_the_last_problem_is_let_go_before_the_next_is_generated(monkeypatch):
    from kerncast.corpus import module_of

    kernel = get_kernel("nearest_distance")
    monkeypatch.setattr(CorpusInputs, "_kept", [])
    kept_while_generating = []
    generate = module_of(kernel).inputs

    def noting(name, params, rng):
        kept_while_generating.append(len(CorpusInputs._kept))
        return generate(name, params, rng)

    monkeypatch.setattr(module_of(kernel), "inputs", noting)
    _draw(kernel, kernel.launch("small"))
    _draw(kernel, kernel.launch("medium"))
    assert kept_while_generating == [0, 0] and len(CorpusInputs._kept) == 1


def test_the_scatter_draws_its_keys_once_for_launches_of_every_tile(monkeypatch):
    """radix_scatter's offsets follow the tile, so each tile generates its inputs again;
    the problem's last inputs stay while the next are made, and the keys they share are
    drawn once."""
    from kerncast.core import Array
    from kerncast.corpus import module_of

    kernel = get_kernel("radix_scatter")
    module = module_of(kernel)
    draw, drawn = module._draw_keys, []

    def counted(rng, n):
        drawn.append(n)
        return draw(rng, n)

    monkeypatch.setattr(module, "_draw_keys", counted)
    monkeypatch.setattr(module, "_LAST_KEYS", [])
    monkeypatch.setattr(CorpusInputs, "_kept", [])
    configs = [c for c in kernel.launches("small") if c.tunables["items"] == 1][:3]
    arrays = []
    for config in configs:
        _, launch = kernel.instance(config)
        arrays.append({n: a.values(np.random.default_rng(0))
                       for a, n in zip(launch.args, launch.names)
                       if isinstance(a, Array) and n != "out"})
    assert len({a["offsets"].size for a in arrays}) == 3  # three tiles
    assert all(np.shares_memory(a["keys"], arrays[0]["keys"]) for a in arrays)
    assert len(drawn) == 1
    n = configs[0].params["n"]
    assert np.array_equal(arrays[0]["keys"], draw(np.random.default_rng(0), n))
    last = make_args(kernel, configs[-1])  # the same inputs, with or without kept keys
    assert np.array_equal(last["offsets"], arrays[-1]["offsets"])


@pytest.mark.parametrize("name, kept", [("pathfinder_rows", [0, 0]), ("radix_scatter", [0, 1])])
def test_only_a_generator_that_reuses_them_keeps_the_last_launchs_inputs(monkeypatch, name,
                                                                          kept):
    """pathfinder_rows' generator reads its tunable pyr, and its inputs go before another
    launch's are made; the radix-sort pass (KEEPS_PROBLEM) keeps them meanwhile."""
    from kerncast.core import Array
    from kerncast.corpus import module_of

    kernel = get_kernel(name)
    module = module_of(kernel)
    monkeypatch.setattr(CorpusInputs, "_kept", [])
    seen, generate = [], module.inputs

    def noting(kernel_name, params, rng):
        seen.append(len(CorpusInputs._kept))
        return generate(kernel_name, params, rng)

    monkeypatch.setattr(module, "inputs", noting)
    names = {"pathfinder_rows": "pyr", "radix_scatter": "bx"}
    tunable = names[name]
    configs = kernel.launches("small")
    first = configs[0]
    other = next(c for c in configs if c.tunables[tunable] != first.tunables[tunable])
    for config in (first, other):
        _, launch = kernel.instance(config)
        array = next(a for a in launch.args if isinstance(a, Array) and a.intent != "out")
        array.values(np.random.default_rng(0))
    assert seen == kept
