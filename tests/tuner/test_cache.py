"""Kernel Tuner cache files: real ones read, ours written, round trips and bad input."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from kerncast._errors import InputError
from kerncast.tuner import KTCache, cache_key, read_cache, write_cache

DATA = Path(__file__).parent / "data"

VECTOR_ADD = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i<n) {
        c[i] = a[i] + b[i];
    }
}
"""
BLOCK_SIZES = [32, 64, 128, 256, 512, 1024]
PREDICTED = {32: 0.412, 64: 0.236, 128: 0.1591, 256: 0.1523, 512: 0.1554, 1024: 0.1627}


def _write_vector_add(path: Path, size: int = 10_000_000) -> Path:
    rows = [{"block_size_x": b, "time_ms": t} for b, t in PREDICTED.items()]
    return write_cache(path, kernel_name="vector_add", device_name="NVIDIA H100 80GB HBM3",
                       problem_size=size, tune_params={"block_size_x": BLOCK_SIZES},
                       rows=rows)


def _mixed_cache(path: Path) -> Path:
    tune_params = {"block_size_x": [128, 256], "algo": ["alg_1", "alg_2"],
                   "use_shmem": [True, False], "scale": [2.45]}
    rows = [
        {"block_size_x": 128, "algo": "alg_2", "use_shmem": True, "scale": 2.45,
         "time_ms": 0.25},
        {"block_size_x": np.int64(256), "algo": "alg_1", "use_shmem": False,
         "scale": np.float64(2.45), "time_ms": np.float32(0.5), "GFLOP/s": 812.5},
        {"block_size_x": 256, "algo": "alg_2", "use_shmem": True, "scale": 2.45,
         "status": "CompilationFailedConfig"},
    ]
    return write_cache(path, kernel_name="k", device_name="NVIDIA A100-PCIE-40GB",
                       problem_size=(4096, 4096), tune_params=tune_params, rows=rows)


# --------------------------------------------------------------------------- real files


def test_reads_kernel_tuner_vector_add_measured_on_an_a4000() -> None:
    cache = read_cache(DATA / "test_cache_file.json")
    assert isinstance(cache, KTCache)
    assert (cache.kernel_name, cache.device_name) == ("vector_add", "NVIDIA RTX A4000")
    assert cache.problem_size == 100
    assert cache.objective == "time"  # the file names none: Kernel Tuner's default
    assert cache.closed
    assert cache.tune_params_keys == ["block_size_x"]
    assert cache.tune_params["block_size_x"] == list(range(128, 1025, 64))
    res = cache.results
    assert list(res.columns) == ["block_size_x", "time_ms", "status", "key"]
    assert len(res) == 15 and (res["status"] == "ok").all()
    assert res["key"].tolist() == [str(b) for b in range(128, 1025, 64)]
    fastest = res.loc[res["time_ms"].idxmin()]
    assert fastest["block_size_x"] == 768
    assert fastest["time_ms"] == 0.03175771422684193


def test_reads_a_cache_kernel_tuner_left_open() -> None:
    text = (DATA / "open_cache_with_comma.json").read_text()
    assert text.rstrip().endswith(",")  # as Kernel Tuner leaves it mid-run
    cache = read_cache(DATA / "open_cache_with_comma.json")
    assert not cache.closed
    assert cache.kernel_name == "convolution_kernel"
    assert cache.problem_size == (4096, 4096)
    assert cache.tune_params_keys == ["block_size_x", "block_size_y"]
    assert cache.results["key"].tolist() == ["16,1", "16,2"]
    assert cache.results["time_ms"].tolist() == [3.8753279224038124, 4.59481605887413]


def test_reads_a_failed_configuration_as_nan_with_its_status() -> None:
    cache = read_cache(DATA / "t4_cache_invalids.json")
    assert len(cache.tune_params_keys) == 10
    (row,) = cache.results.to_dict("records")
    assert row["status"] == "CompilationFailedConfig"
    assert math.isnan(row["time_ms"])
    assert row["key"] == "16,1,1,1,0,0,0,1,15,15"
    assert row["filter_width"] == 15


def test_reads_the_error_field_of_kernel_tuner_1x(tmp_path: Path) -> None:
    data = json.loads((DATA / "test_cache_file.json").read_text())
    entry = data["cache"]["128"]
    del entry["time"], entry["times"]
    entry["__error__"] = "RuntimeFailedConfig"
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    res = read_cache(path).results.set_index("key")
    assert res.loc["128", "status"] == "RuntimeFailedConfig"
    assert math.isnan(res.loc["128", "time_ms"])
    assert (res.drop(index="128")["status"] == "ok").all()


# --------------------------------------------------------------------------- open files


@pytest.mark.parametrize("tail", [",", ",\n", "", "\n"])
def test_reads_every_way_a_run_can_stop(tmp_path: Path, tail: str) -> None:
    closed = _write_vector_add(tmp_path / "c.json").read_text()
    body = closed.rstrip().removesuffix("}\n}")
    path = tmp_path / "open.json"
    path.write_text(body + tail)
    cache = read_cache(path)
    assert not cache.closed
    assert cache.results.equals(read_cache(tmp_path / "c.json").results)


def test_reads_a_run_stopped_before_its_first_entry(tmp_path: Path) -> None:
    closed = _write_vector_add(tmp_path / "c.json").read_text()
    header = closed[: closed.index('"cache": {') + len('"cache": {')]
    path = tmp_path / "open.json"
    path.write_text(header)
    cache = read_cache(path)
    assert not cache.closed and cache.results.empty
    assert cache.tune_params == {"block_size_x": BLOCK_SIZES}


def test_a_half_written_entry_is_an_error_that_says_what_to_do(tmp_path: Path) -> None:
    text = (DATA / "open_cache_with_comma.json").read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[:-40])
    with pytest.raises(InputError, match=r"cut\.json: not valid JSON.*incomplete last entry"):
        read_cache(path)


# --------------------------------------------------------------------------- writing


def test_round_trip_keeps_values_types_keys_and_failures(tmp_path: Path) -> None:
    cache = read_cache(_mixed_cache(tmp_path / "m.json"))
    assert cache.closed and cache.problem_size == (4096, 4096)
    assert cache.tune_params_keys == ["block_size_x", "algo", "use_shmem", "scale"]
    records = cache.results.to_dict("records")
    assert [r["key"] for r in records] == ["128,alg_2,True,2.45", "256,alg_1,False,2.45",
                                           "256,alg_2,True,2.45"]
    assert records[0]["use_shmem"] is True and records[1]["block_size_x"] == 256
    assert records[1]["time_ms"] == pytest.approx(0.5)
    assert records[2]["status"] == "CompilationFailedConfig"
    assert math.isnan(records[2]["time_ms"])


def test_written_entries_have_the_fields_kernel_tuner_reads(tmp_path: Path) -> None:
    path = _mixed_cache(tmp_path / "m.json")
    text = path.read_text()
    assert text.rstrip().endswith("}\n}")  # closed, as Kernel Tuner closes a cache
    data = json.loads(text)
    assert list(data)[:7] == ["device_name", "kernel_name", "problem_size",
                              "tune_params_keys", "tune_params", "objective", "cache"]
    ok = data["cache"]["256,alg_1,False,2.45"]
    for field in ("time", "times", "compile_time", "verification_time", "benchmark_time",
                  "strategy_time", "framework_time", "timestamp"):
        assert field in ok
    assert ok["GFLOP/s"] == 812.5 and ok["times"] == [ok["time"]]
    failed = data["cache"]["256,alg_2,True,2.45"]
    assert failed["time"] == failed["__error__"] == "CompilationFailedConfig"


def test_cache_key_is_kernel_tuners() -> None:
    assert cache_key([128, "alg_2", 15, True, 2.45]) == "128,alg_2,15,True,2.45"
    assert cache_key([np.int32(64), np.float64(0.5)]) == "64,0.5"


@pytest.mark.parametrize(("row", "message"), [
    ({"time_ms": 1.0}, r"rows\[0\]: no value for tune parameter 'block_size_x'"),
    ({"block_size_x": 48, "time_ms": 1.0}, r"block_size_x=48 is not one of"),
    ({"block_size_x": 64.0, "time_ms": 1.0}, r"block_size_x=64.0 is not one of"),
    ({"block_size_x": 64}, r"needs 'time_ms' \(milliseconds\) or a failure 'status'"),
    ({"block_size_x": 64, "time_ms": math.nan}, r"must be finite and > 0"),
    ({"block_size_x": 64, "time_ms": "fast"}, r"time_ms='fast' is not a number"),
    ({"block_size_x": 64, "status": "Crashed"}, r"status 'Crashed' is not 'ok' or one of"),
    ({"block_size_x": 64, "time_ms": 1.0, "note": math.nan}, r"cannot write the cache as JSON"),
])
def test_bad_rows_are_named(tmp_path: Path, row: dict, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        write_cache(tmp_path / "c.json", kernel_name="k", device_name="d", problem_size=1,
                    tune_params={"block_size_x": [32, 64]}, rows=[row])
    assert info.value.exit_code == 2
    assert not list(tmp_path.iterdir())


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    args = dict(kernel_name="k", device_name="d", problem_size=1,
                tune_params={"x": [1, 2]})
    row = {"x": 1, "time_ms": 1.0}
    cases = [
        (tmp_path / "c.cache", dict(rows=[row]), r"c\.cache: .* must end in \.json"),
        (tmp_path / "c.json", dict(rows=[]), r"c\.json: no rows to write"),
        (tmp_path / "c.json", dict(rows=[row, row]), r"configuration '1' appears twice"),
        (tmp_path / "c.json", dict(rows=[(1, 1.0)]), r"rows\[0\] is a tuple"),
        (tmp_path / "c.json", dict(rows=[row], objective="GFLOP/s"),
         r"no value for the objective 'GFLOP/s'"),
        (tmp_path / "c.json", dict(rows=[row], objective=["time", "energy"]),
         r"objective must be the name of one result field"),
        (tmp_path / "c.json", dict(rows=[row], tune_params={"time": [1]}),
         r"tune parameter name 'time' is not allowed"),
        (tmp_path / "c.json", dict(rows=[row], tune_params={"x": 5}),
         r"tune_params\['x'\] must be a list"),
    ]
    for path, extra, message in cases:
        with pytest.raises(InputError, match=message):
            write_cache(path, **{**args, **extra})
    assert not list(tmp_path.iterdir())


def test_unwritable_paths_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "c.json"
    with pytest.raises(InputError, match=r"c\.json: cannot write, .*such is not an existing"):
        _write_vector_add(missing)
    folder = tmp_path / "folder.json"
    folder.mkdir()
    with pytest.raises(InputError, match=r"folder\.json: is a directory"):
        _write_vector_add(folder)


@pytest.mark.parametrize("fail_in", ["fsync", "replace"])
def test_a_failed_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               fail_in: str) -> None:
    path = _write_vector_add(tmp_path / "c.json")
    before = path.read_bytes()

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, fail_in, refuse)
    with pytest.raises(InputError, match=r"c\.json: cannot write \(No space left on device\)"):
        _write_vector_add(path, size=20_000_000)
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temporary file left
    assert path.read_bytes() == before  # the old cache is untouched


def test_overwrites_atomically_and_keeps_the_umask_mode(tmp_path: Path) -> None:
    path = _write_vector_add(tmp_path / "c.json")
    _write_vector_add(path, size=20_000_000)
    assert read_cache(path).problem_size == 20_000_000
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


# --------------------------------------------------------------------------- bad files


@pytest.mark.parametrize(("text", "message"), [
    ("hello", r"not valid JSON"),
    ("", r"not valid JSON"),
    ("[1, 2]", r"not a Kernel Tuner cache file \(the JSON is a list"),
    ('{"device_name": "d", "cache": {}}',
     r"lacks 'kernel_name', 'tune_params_keys', 'tune_params'"),
    ('{"device_name": 1, "kernel_name": "k", "tune_params_keys": ["x"], '
     '"tune_params": {"x": [1]}, "cache": []}', r"field\(s\) 'device_name', 'cache' have"),
    ('{"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x", "y"], '
     '"tune_params": {"x": [1]}, "cache": {}}', r"'tune_params_keys' .* do not match"),
    ('{"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], '
     '"tune_params": {"x": [1]}, "cache": {"1": {"time": 1.0}}}',
     r"cache entry '1' lacks tune parameter\(s\) \['x'\]"),
    ('{"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], '
     '"tune_params": {"x": [1]}, "cache": {"1": {"x": 1, "GFLOP/s": 3.0}}}',
     r"cache entry '1' has no 'time' \(milliseconds\) and no failure name"),
    ('{"device_name": "d", "kernel_name": "k", "tune_params_keys": ["x"], '
     '"tune_params": {"x": [1]}, "cache": {"1": 5}}', r"cache entry '1' is a int"),
])
def test_bad_files_name_the_file_and_the_problem(tmp_path: Path, text: str,
                                                 message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_cache(path)
    assert str(path) in str(info.value)
    assert info.value.exit_code == 2


def test_unreadable_paths_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.json: no such file"):
        read_cache(tmp_path / "nope.json")
    with pytest.raises(InputError, match=r"is a directory"):
        read_cache(tmp_path)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(InputError, match=r"bin\.json: not a text file"):
        read_cache(binary)


# --------------------------------------------------------------------------- Kernel Tuner


def test_kernel_tuner_simulates_on_a_written_cache(tmp_path: Path) -> None:
    kernel_tuner = pytest.importorskip("kernel_tuner")
    size = 10_000_000
    path = _write_vector_add(tmp_path / "vector_add.json", size)
    before = path.read_bytes()
    a = np.zeros(size, dtype=np.float32)
    args = [np.zeros_like(a), a, a, np.int32(size)]
    tune_params = {"block_size_x": BLOCK_SIZES}
    results, env = kernel_tuner.tune_kernel("vector_add", VECTOR_ADD, size, args, tune_params,
                                            simulation_mode=True, cache=str(path),
                                            verbose=False, quiet=True)
    assert {r["block_size_x"]: r["time"] for r in results} == PREDICTED
    assert env["best_config"]["block_size_x"] == 256
    assert env["device_name"] == "NVIDIA H100 80GB HBM3"
    assert path.read_bytes() == before  # simulation mode leaves the cache as it was
    back = read_cache(path)
    times = back.results.set_index("block_size_x")["time_ms"].to_dict()
    assert times == PREDICTED


def test_kernel_tuner_search_strategies_skip_failed_configurations(tmp_path: Path) -> None:
    kernel_tuner = pytest.importorskip("kernel_tuner")
    size = 4096
    rows = [{"block_size_x": b, "time_ms": t} for b, t in PREDICTED.items() if b != 256]
    rows.append({"block_size_x": 256, "status": "RuntimeFailedConfig"})
    path = write_cache(tmp_path / "v.json", kernel_name="vector_add", device_name="d",
                       problem_size=size, tune_params={"block_size_x": BLOCK_SIZES},
                       rows=rows)
    a = np.zeros(size, dtype=np.float32)
    results, env = kernel_tuner.tune_kernel(
        "vector_add", VECTOR_ADD, size, [a, a, a, np.int32(size)],
        {"block_size_x": BLOCK_SIZES}, simulation_mode=True, cache=str(path),
        strategy="random_sample", strategy_options={"max_fevals": 6}, verbose=False,
        quiet=True)
    assert len({r["block_size_x"] for r in results}) == 6
    assert env["best_config"]["block_size_x"] == 512


def test_records_of_a_read_cache_write_back_unchanged(tmp_path: Path) -> None:
    first = read_cache(_mixed_cache(tmp_path / "a.json"))
    write_cache(tmp_path / "b.json", kernel_name=first.kernel_name,
                device_name=first.device_name, problem_size=first.problem_size,
                tune_params=first.tune_params, rows=first.results.to_dict("records"))
    second = read_cache(tmp_path / "b.json")
    assert second.results.equals(first.results)
    entry = json.loads((tmp_path / "b.json").read_text())["cache"]["128,alg_2,True,2.45"]
    assert "key" not in entry
