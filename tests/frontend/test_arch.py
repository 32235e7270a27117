"""Target names: arch spellings and device names."""

import pytest

from kerncast import InputError
from kerncast.frontend import DEFAULT_ARCH, resolve_arch
from kerncast.frontend._arch import arch_number, compute_name


@pytest.mark.parametrize("given,arch", [
    (None, "sm_90"), ("sm_90", "sm_90"), ("SM_80", "sm_80"), ("compute_86", "sm_86"),
    ("90a", "sm_90a"), ("sm_100", "sm_100"), ("h100", "sm_90"), ("H200", "sm_90"),
    ("gtx580", "sm_20"),
])
def test_resolve(given, arch):
    assert resolve_arch(given) == arch


def test_default_is_the_h100():
    assert DEFAULT_ARCH == "sm_90"


def test_numbers_and_virtual_names():
    assert arch_number("sm_90a") == 90 and arch_number("sm_100") == 100
    assert compute_name("sm_90a") == "compute_90a"
    with pytest.raises(InputError, match="'volta' is not a GPU arch"):
        arch_number("volta")


def test_unknown_device():
    with pytest.raises(InputError, match="unknown device 'z9000'"):
        resolve_arch("z9000")
