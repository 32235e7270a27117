"""Folds by kernel: no kernel on both sides."""

from __future__ import annotations

import pytest

from kerncast import InputError
from kerncast.evaluate import kernel_folds

KERNELS = ["e", "a", "d", "b", "c", "a"]


@pytest.mark.parametrize("folds", ["kernel", 2, 3, "4", 99])
def test_every_kernel_is_tested_once_and_never_trained_on_in_its_fold(folds):
    splits = kernel_folds(KERNELS, folds)
    tested = [k for f in splits for k in f.test]
    assert sorted(tested) == ["a", "b", "c", "d", "e"]
    for fold in splits:
        assert not set(fold.train) & set(fold.test)
        assert set(fold.train) | set(fold.test) == set(KERNELS)


def test_leave_one_kernel_out_and_k_folds():
    assert [f.test for f in kernel_folds(KERNELS)] == [("a",), ("b",), ("c",), ("d",), ("e",)]
    assert [f.test for f in kernel_folds(KERNELS, 2)] == [("a", "c", "e"), ("b", "d")]
    assert len(kernel_folds(KERNELS, 99)) == 5


@pytest.mark.parametrize("folds", ["kernels", 1, "2.5", 0, None])
def test_bad_fold_specs_are_refused(folds):
    with pytest.raises(InputError, match="folds must be 'kernel' .* or a whole number of folds "
                                         "of at least 2, not"):
        kernel_folds(KERNELS, folds)
