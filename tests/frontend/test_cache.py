"""The on-disk cache: hits run no compiler, keys cover defines, damaged entries are rebuilt."""

from __future__ import annotations

import json

import pytest

from kerncast.frontend import _cache, cache_root, find_nvrtc
from kerncast.frontend import compile as _compile

from .conftest import SAXPY_CL, SAXPY_CU

pytestmark = pytest.mark.toolchain


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("KERNCAST_CACHE", str(root))
    return root


def compile(source, **kwargs):
    """Compile, through NVRTC for CUDA where it is there (in-process, fast)."""
    if kwargs.get("lang") == "cuda" and find_nvrtc() is not None:
        kwargs.setdefault("toolchain", "nvrtc")
    return _compile(source, **kwargs)


def _entries(root, kind):
    return sorted((root / _cache.LAYOUT / kind).glob("*/*.json"))


def test_cache_root_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNCAST_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("KERNCAST_CACHE")
    assert cache_root().parts[-3:] == (".cache", "kerncast", "frontend")


@pytest.mark.parametrize("lang,text", [("cuda", SAXPY_CU), ("opencl", SAXPY_CL)])
def test_second_compile_is_a_cache_hit_without_any_process(fresh_cache, count_runs, lang, text,
                                                            have_cuda, have_clang):
    runs, builds = count_runs
    first = _compile(text, lang=lang)  # the default route: NVRTC (in process) or clang
    first_res = first.kernel("saxpy").resources()
    assert builds.calls == 1 and runs.calls >= 1 and not first.cached  # ptxas at least
    runs.calls = builds.calls = 0
    second = _compile(text, lang=lang)
    assert second.cached and second.ptx == first.ptx and second.notes == first.notes
    assert second.kernel("saxpy").resources() == first_res
    assert runs.calls == 0 and builds.calls == 0
    assert len(_entries(fresh_cache, "ptx")) == 1 and len(_entries(fresh_cache, "ptxas")) == 1


def test_nvrtc_route_hits_the_cache_too(fresh_cache, count_runs, monkeypatch, have_cuda):
    if find_nvrtc() is None:
        pytest.skip("needs the nvidia-cuda-nvrtc wheel")
    runs, builds = count_runs
    first = _compile(SAXPY_CU, lang="cuda", toolchain="nvrtc")
    second = _compile(SAXPY_CU, lang="cuda", toolchain="nvrtc")
    assert builds.calls == 1 and second.cached and second.toolchain.name == "nvrtc"
    assert _compile(SAXPY_CU, lang="cuda", toolchain="nvcc").ptx  # another toolchain: a miss
    assert builds.calls == 2 and first.ptx == second.ptx


def test_changed_defines_miss_the_cache(fresh_cache, count_runs, have_cuda):
    _, builds = count_runs
    a = compile(SAXPY_CU, lang="cuda", defines={"SCALE": "2.0f"})
    b = compile(SAXPY_CU, lang="cuda", defines={"SCALE": "3.0f"})
    c = compile(SAXPY_CU, lang="cuda", defines={"SCALE": "2.0f"})
    assert builds.calls == 2 and not b.cached and c.cached
    assert a.ptx != b.ptx and a.ptx == c.ptx
    assert "0f40400000" in b.ptx  # 3.0f


def test_changed_arch_and_options_miss_the_cache(fresh_cache, count_runs, have_cuda):
    _, builds = count_runs
    compile(SAXPY_CU, lang="cuda")
    compile(SAXPY_CU, lang="cuda", arch="sm_80")
    compile(SAXPY_CU, lang="cuda", options=["-DEXTRA=1"])
    assert builds.calls == 3


def test_changed_header_misses_the_cache(tmp_path, fresh_cache, count_runs, have_cuda):
    _, builds = count_runs
    (tmp_path / "scale.h").write_text("#define SCALE 2.0f\n")
    src = tmp_path / "k.cu"
    src.write_text('#include "scale.h"\n' + SAXPY_CU)
    first = compile(src, lang="cuda")
    (tmp_path / "scale.h").write_text("#define SCALE 5.0f\n")
    second = compile(src, lang="cuda")
    assert builds.calls == 2 and first.ptx != second.ptx


def test_corrupt_entry_is_ignored_and_rebuilt(fresh_cache, count_runs, have_cuda):
    _, builds = count_runs
    good = compile(SAXPY_CU, lang="cuda")
    (entry,) = _entries(fresh_cache, "ptx")
    entry.write_text('{"key": {"trunc')
    again = compile(SAXPY_CU, lang="cuda")
    assert builds.calls == 2 and not again.cached and again.ptx == good.ptx
    assert json.loads(entry.read_text())["value"]["ptx"] == good.ptx
    assert compile(SAXPY_CU, lang="cuda").cached


def test_entry_holding_another_key_is_ignored(fresh_cache, count_runs, have_cuda):
    _, builds = count_runs
    compile(SAXPY_CU, lang="cuda")
    (entry,) = _entries(fresh_cache, "ptx")
    data = json.loads(entry.read_text())
    data["key"]["arch"] = "sm_1"
    data["value"]["ptx"] = "not this"
    entry.write_text(json.dumps(data))
    assert compile(SAXPY_CU, lang="cuda").ptx != "not this" and builds.calls == 2


def test_corrupt_resource_entry_is_rebuilt(fresh_cache, count_runs, have_cuda):
    runs, _ = count_runs
    want = compile(SAXPY_CU, lang="cuda").kernel("saxpy").resources()
    (entry,) = _entries(fresh_cache, "ptxas")
    entry.write_bytes(b"\x00\xff garbage")
    runs.calls = 0
    assert compile(SAXPY_CU, lang="cuda").kernel("saxpy").resources() == want
    assert runs.calls == 1  # ptxas only; the PTX itself came from the cache


def test_cache_can_be_turned_off(fresh_cache, count_runs, have_cuda):
    _, builds = count_runs
    compile(SAXPY_CU, lang="cuda", cache=False)
    compile(SAXPY_CU, lang="cuda", cache=False)
    assert builds.calls == 2 and not _entries(fresh_cache, "ptx")


def test_store_is_atomic_and_leaves_no_temporary_files(fresh_cache):
    key = {"k": 1}
    _cache.store("ptx", key, {"ptx": "x"})
    _cache.store("ptx", key, {"ptx": "y"})
    assert _cache.load("ptx", key) == {"ptx": "y"}
    files = list((fresh_cache / _cache.LAYOUT).rglob("*"))
    assert not [f for f in files if f.name.startswith(".tmp-")]


def test_unwritable_cache_is_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("KERNCAST_CACHE", str(blocker))
    _cache.store("ptx", {"k": 2}, {"ptx": "x"})  # no error
    assert _cache.load("ptx", {"k": 2}) is None


def _compile_in_a_process(root: str, defines: dict) -> tuple:
    import os

    os.environ["KERNCAST_CACHE"] = root
    unit = compile(SAXPY_CU, lang="cuda", defines=defines)
    return unit.ptx, unit.kernel("saxpy").resources()


def test_two_processes_compiling_at_once_share_the_cache_without_damage(fresh_cache,
                                                                       have_cuda):
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    jobs = [{"N": str(n)} for n in (1, 2, 3, 4)] * 3
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        got = list(pool.map(_compile_in_a_process, [str(fresh_cache)] * len(jobs), jobs))
    for defines, result in zip(jobs, got):
        assert result == got[jobs.index(defines)]  # every process saw the same unit
    entries = list((fresh_cache / _cache.LAYOUT).rglob("*.json"))
    assert entries and all(json.loads(e.read_text())["value"] for e in entries)
    assert not [f for f in (fresh_cache / _cache.LAYOUT).rglob("*") if f.name.startswith(".tmp-")]
    assert compile(SAXPY_CU, lang="cuda", defines={"N": "2"}).cached
