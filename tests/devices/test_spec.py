"""Device spec files: every shipped one validates; broken ones are named precisely."""

from pathlib import Path

import pytest

from kerncast import InputError
from kerncast.devices import SPEC_DIR, get_device, list_devices, load_spec

H100 = SPEC_DIR / "h100-sxm.toml"


def test_every_shipped_spec_loads_and_cites_its_sources():
    devices = list_devices()
    assert devices
    for dev in devices:
        for section in ("compute", "limits", "allocation", "memory", "throughput"):
            sec = getattr(dev, section)
            for field in type(sec).model_fields:
                if field not in ("source", "sources", "notes"):
                    assert dev.source_of(section, field), (dev.key, section, field)


@pytest.mark.parametrize("name", ["h100", "H100", "h100-sxm", "NVIDIA H100 SXM5 80GB", "H100_SXM5"])
def test_names_resolve_case_insensitively(name):
    assert get_device(name).key == "h100-sxm"


def test_unknown_device_lists_closest_names():
    with pytest.raises(InputError, match=r"unknown device 'h1000'.*did you mean: .*h100"):
        get_device("h1000")


def test_spec_path_is_accepted():
    assert get_device(str(H100)).key == "h100-sxm"


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = H100.read_text()
    assert old in text
    path = tmp_path / "broken.toml"
    path.write_text(text.replace(old, new, 1))
    return path


def test_missing_field_is_named(tmp_path):
    path = _broken(tmp_path, "warps_per_sm = 64\n", "")
    with pytest.raises(InputError, match=r"broken.toml: field 'limits.warps_per_sm': Field required"):
        load_spec(path)


def test_unknown_field_is_named(tmp_path):
    path = _broken(tmp_path, "warps_per_sm = 64\n", "warps_per_sm = 64\nwarp_per_sm = 3\n")
    with pytest.raises(InputError, match=r"field 'limits.warp_per_sm'"):
        load_spec(path)


def test_negative_value_is_refused(tmp_path):
    path = _broken(tmp_path, "sm_count = 132", "sm_count = -4")
    with pytest.raises(InputError, match=r"field 'compute.sm_count'.*greater than 0"):
        load_spec(path)


def test_dangling_reference_is_named(tmp_path):
    path = _broken(tmp_path, 'source = "cuda_guide"', 'source = "nowhere"')
    with pytest.raises(InputError, match=r"cites reference 'nowhere'"):
        load_spec(path)


def test_inconsistent_limits_are_refused(tmp_path):
    path = _broken(tmp_path, "threads_per_sm = 2048", "threads_per_sm = 4096")
    with pytest.raises(InputError, match=r"warps_per_sm \* compute.warp_size is below"):
        load_spec(path)


def test_malformed_toml_is_reported(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("name = [unclosed\n")
    with pytest.raises(InputError, match=r"bad.toml is not valid TOML"):
        load_spec(path)


def test_missing_file_is_reported(tmp_path):
    with pytest.raises(InputError, match=r"cannot read device spec"):
        load_spec(tmp_path / "nope.toml")


def test_derived_peaks():
    h100 = get_device("h100")
    assert h100.peak_fp32_gflops == pytest.approx(2 * 128 * 132 * 1980 / 1e3)
    assert h100.arch_number == 90
