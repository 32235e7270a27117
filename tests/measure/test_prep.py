"""Inputs and references prepared once per (kernel, size) when the launch does not matter."""

import numpy as np
import pytest

from kerncast.corpus import expected_outputs, get_kernel, make_args
from kerncast.measure._prep import load_prepared, prepare_unit, sharing


def test_matmul_shares_inputs_and_reference_across_configurations():
    share = sharing(get_kernel("matmul_tiled"))
    assert share.inputs and share.reference


def test_prepared_files_give_the_same_arguments_as_inline(tmp_path):
    kernel = get_kernel("matmul_naive")
    configs = kernel.launches("small")
    unit = prepare_unit(kernel, "small", configs, tmp_path, seed=4)
    assert sorted(p.name for p in unit.iterdir()) == ["expected-c0", "inputs-c0", "manifest.json"]
    for config in (configs[0], configs[-1]):
        loaded = load_prepared(kernel, config, seed=4, root=tmp_path)
        inline = make_args(kernel, config, 4)
        for name, value in inline.items():
            if isinstance(value, np.ndarray):
                assert np.array_equal(loaded.args[name], value, equal_nan=True), name
            else:
                assert loaded.args[name] == value and type(loaded.args[name]) is type(value)
        assert np.array_equal(loaded.want["c"], expected_outputs(kernel, inline, config)["c"])


def test_another_seed_or_configuration_is_prepared_inline(tmp_path):
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small")
    prepare_unit(kernel, "small", [config], tmp_path, seed=1)
    other = kernel.launch("small", {"bx": 32, "by": 8})
    loaded = load_prepared(kernel, other, seed=1, root=tmp_path)
    assert np.array_equal(loaded.args["a"], make_args(kernel, other, 1)["a"])
    reseeded = load_prepared(kernel, config, seed=2, root=tmp_path)
    assert np.array_equal(reseeded.args["a"], make_args(kernel, config, 2)["a"])


def test_outputs_are_poisoned_and_references_can_be_skipped(tmp_path):
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small")
    prepare_unit(kernel, "small", [config], tmp_path)
    loaded = load_prepared(kernel, config, root=tmp_path, reference=False)
    assert np.isnan(loaded.args["c"]).all() and loaded.want == {}


def test_configurations_that_compute_different_things_get_their_own_class(tmp_path):
    kernel = get_kernel("convolve_rows")
    share = sharing(kernel)
    by_radius: dict[int, set[int]] = {}
    for config in kernel.launches("medium"):
        by_radius.setdefault(config.tunables["radius"], set()).add(
            share.reference[config.label()])
    # one reference class per radius, whatever the block shape
    assert all(len(classes) == 1 for classes in by_radius.values())
    assert len({next(iter(c)) for c in by_radius.values()}) == len(by_radius)
    configs = kernel.launches("small")[:4]
    prepare_unit(kernel, "small", configs, tmp_path)
    for config in configs:
        loaded = load_prepared(kernel, config, root=tmp_path)
        want = expected_outputs(kernel, make_args(kernel, config), config)
        assert all(np.array_equal(loaded.want[k], v) for k, v in want.items())


def _damage(path, how):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if how == "truncate" else b"\x00garbage")


@pytest.mark.parametrize("target, how", [("manifest.json", "garbage"),
                                          ("manifest.json", "truncate"),
                                          ("inputs", "truncate")])
def test_a_damaged_prepared_unit_is_prepared_again(tmp_path, target, how):
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small")
    unit = prepare_unit(kernel, "small", [config], tmp_path)
    if target == "manifest.json":
        _damage(unit / "manifest.json", how)
    else:
        inputs = sorted(p for p in unit.glob("inputs-*/*.npy"))
        _damage(inputs[0], how)
    loaded = load_prepared(kernel, config, root=tmp_path)
    fresh = make_args(kernel, config)
    for arg in kernel.spec.args:
        if arg.kind == "buffer" and arg.intent != "out":
            assert np.array_equal(loaded.args[arg.name], fresh[arg.name])
