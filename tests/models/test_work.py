"""Work counts and their providers."""

from __future__ import annotations

import pytest

from kerncast import InputError
from kerncast.corpus import get_kernel
from kerncast.models.work import (
    WorkCounts,
    WorkUnavailable,
    _counts,
    compulsory_bytes,
    list_providers,
    work_counts,
)


@pytest.fixture
def matmul():
    kernel = get_kernel("matmul_tiled")
    return kernel, kernel.launch("medium", {"tile": 32})


def test_algorithmic_counts_are_the_textbook_ones(matmul):
    kernel, config = matmul
    counts = work_counts(kernel, config, "algorithmic")
    n = 512
    assert counts.flops_fp32 == 2 * n**3 and counts.flops_fp64 == 0
    assert counts.bytes_global_read == 2 * n * n * 4 and counts.bytes_global_write == n * n * 4
    assert counts.source == "algorithmic" and counts.instructions is None
    assert counts.dominant_precision == "fp32" and counts.flops == 2 * n**3
    assert compulsory_bytes(kernel, config) == (2 * n * n * 4, n * n * 4)


def test_providers_are_ordered_best_first():
    assert list_providers().index("emulator") < list_providers().index("algorithmic")


def test_auto_reports_every_reason_when_none_answers(monkeypatch):
    kernel = get_kernel("copy_vector")  # mem_stride.py defines no work()

    class Refuses:
        name, priority, description = "refuses", 5, "test"

        def counts(self, kernel, config, language="cuda"):
            raise WorkUnavailable("never")

    monkeypatch.setattr(_counts, "_PROVIDERS", {"refuses": Refuses(),
                                                "algorithmic": _counts._PROVIDERS["algorithmic"]})
    with pytest.raises(WorkUnavailable) as err:
        work_counts(kernel, kernel.launch("small"))
    assert str(err.value).startswith("no work source can count copy_vector: refuses: never; "
                                     "algorithmic: the corpus module mem_stride.py defines no "
                                     "work(kernel, params)")


def test_unknown_provider_lists_the_known_ones(matmul):
    with pytest.raises(InputError, match="unknown work source 'emu'; the known ones are: "
                                         "emulator, algorithmic \\(or 'auto'"):
        work_counts(*matmul, provider="emu")


def test_work_counts_must_be_counts():
    with pytest.raises(ValueError, match="flops_fp32 must be a count >= 0"):
        WorkCounts(-1, 0, 0, 0, None, "x")
    with pytest.raises(ValueError, match="bytes_global_read"):
        WorkCounts(0, 0, float("nan"), 0, None, "x")


def test_algorithmic_counts_need_the_modules_work_function(matmul, monkeypatch):
    import types

    bare = types.SimpleNamespace(inputs=None, reference=None)
    monkeypatch.setattr("kerncast.models.work._algorithmic.module_of", lambda kernel: bare)
    with pytest.raises(WorkUnavailable, match="matmul.py defines no work\\(kernel, params\\)"):
        work_counts(*matmul, provider="algorithmic")
