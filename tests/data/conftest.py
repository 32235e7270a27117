"""Rows for the data tests, built by the harness (fake backend) so that they follow the schema."""

import pytest

from kerncast.corpus import get_kernel
from kerncast.measure._run import measure_config
from kerncast.measure._timing import TimingPolicy

from tests.measure.fakes import FakeBackend

QUICK = TimingPolicy(warmup=1, warmup_s=0.0, min_reps=5, max_reps=6, budget_s=0.2)


class Clocked(FakeBackend):
    """A fake whose rows have clocks (a monitor reads them)."""


class Monitor:
    def clocks(self):
        return 1980.0, 2619.0


@pytest.fixture(scope="session")
def times_rows():
    kernel = get_kernel("matmul_tiled")
    backend = FakeBackend(device="h100")
    return [measure_config(backend, kernel, c, policy=QUICK, monitor=Monitor())
            for c in kernel.launches("small")]
