"""The device-side output check gives the host check's verdicts (NumPy stands in for CuPy)."""

import numpy as np
import pytest

from kerncast.measure._job import corpus_job
from kerncast.corpus import expected_outputs, get_kernel, make_args
from kerncast.measure import _compare
from kerncast.measure._compare import device_output_problems
from kerncast.measure._run import output_problems


@pytest.fixture
def case():
    kernel = get_kernel("matmul_naive")
    config = kernel.launch("small")
    args = make_args(kernel, config, seed=2)
    want = expected_outputs(kernel, args, config)
    return kernel, args, want


def _both(kernel, got, want):
    host = output_problems(kernel, got, want)
    device = device_output_problems(np, kernel, got, want)
    return host, device


def test_correct_output_passes_on_both(case):
    kernel, args, want = case
    assert _both(kernel, {"c": want["c"].copy()}, want) == ([], [])


@pytest.mark.parametrize("chunk", [1 << 26, 7])
def test_same_messages_for_wrong_and_unwritten(case, monkeypatch, chunk):
    monkeypatch.setattr(_compare, "CHUNK", chunk)
    kernel, args, want = case
    got = want["c"].copy()
    got[10] += 1.0
    got[20:25] = np.nan
    host, device = _both(kernel, {"c": got}, want)
    assert host == device and len(device) == 2
    assert device[0].startswith("c: 5 of 2304 elements never written")
    assert "first at [10]" in device[1]


def test_integer_outputs_compare_exactly():
    kernel = get_kernel("histo_global")
    config = kernel.launch("small")
    args = make_args(kernel, config, seed=1)
    want = expected_outputs(kernel, args, config)
    name = next(iter(want))
    got = want[name].copy()
    got[3] += 1
    host, device = _both(kernel, {name: got}, want)
    assert host == device and "first at [3]" in device[0]


class _CachingBackend:
    """Counts uploads; keeps cached buffers like CupyBackend.cached_upload."""

    def __init__(self):
        self.uploaded, self.cache = [], {}

    def upload(self, args):
        self.uploaded += [n for n, v in args.items() if isinstance(v, np.ndarray)]
        return {n: (v.copy() if isinstance(v, np.ndarray) else v) for n, v in args.items()}

    def cached_upload(self, key, arrays):
        for name, value in arrays.items():
            if (key, name) not in self.cache:
                self.cache[(key, name)] = self.upload({name: value})[name]
        return {n: self.cache[(key, n)] for n in arrays}


def test_shared_inputs_are_uploaded_once(case):
    from kerncast.measure._prep import Prepared
    from kerncast.measure._run import _upload_sets

    kernel, args, want = case
    prepared = Prepared(args, want, key=("matmul_naive", "small", 2, "/u", "inputs", "expected"))
    backend = _CachingBackend()
    for _ in range(3):
        (dev,), pristine = _upload_sets(backend, corpus_job(kernel, kernel.launch("small")),
                                        prepared, 1)
        assert set(dev) == set(args) and pristine == {}
    assert backend.uploaded.count("a") == 1 and backend.uploaded.count("c") == 3


def test_poisoned_outputs_follow_each_configuration_s_size():
    from kerncast.measure._prep import Prepared
    from kerncast.measure._run import _upload_sets

    kernel = get_kernel("reduce_tree")
    backend = _CachingBackend()
    backend.duplicate = lambda buf: buf.copy()
    sizes = set()
    for config in kernel.launches("small")[:6]:
        args = make_args(kernel, config)
        prepared = Prepared(args, {}, key=("reduce_tree", "small", 0, "/u", "inputs-c0", None))
        (dev,), _ = _upload_sets(backend, corpus_job(kernel, config), prepared, 1)
        assert dev["partial"].size == args["partial"].size
        sizes.add(args["partial"].size)
    assert len(sizes) > 1
