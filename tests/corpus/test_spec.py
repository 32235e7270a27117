"""Corpus specs: malformed ones are refused at load time, naming the file and field."""

import shutil
from pathlib import Path

import pytest

from kerncast import InputError
from kerncast.corpus import KERNEL_DIR, get_kernel, list_kernels
from kerncast.corpus._catalog import _load


def _copy_matmul(tmp_path: Path, old: str, new: str) -> Path:
    root = tmp_path / "kernels"
    shutil.copytree(KERNEL_DIR / "matmul", root / "matmul")
    spec = root / "matmul" / "spec.toml"
    text = spec.read_text()
    assert old in text, old
    spec.write_text(text.replace(old, new, 1))
    _load.cache_clear()
    return root


def test_shipped_corpus_loads():
    assert len(list_kernels()) >= 2


def test_shipped_corpus_launch_spaces_are_valid():
    """The catalogue trusts the shipped corpus's launch spaces; this is where they are checked."""
    from kerncast.corpus._spec import load_application

    apps = [load_application(d) for d in sorted(KERNEL_DIR.iterdir()) if (d / "spec.toml").exists()]
    assert sum(len(app.kernels) for app in apps) == len(list_kernels())


def test_corpus_prefix_resolves():
    assert get_kernel("corpus:matmul_tiled").name == "matmul_tiled"


def test_unknown_kernel_suggests_names():
    with pytest.raises(InputError, match=r"no corpus kernel 'matmul_tild'; did you mean matmul_tiled"):
        get_kernel("matmul_tild")


def test_missing_buffer_shape_is_named(tmp_path):
    root = _copy_matmul(tmp_path, 'dtype = "float32", shape = "n * n", intent = "in" }',
                        'dtype = "float32", intent = "in" }')
    with pytest.raises(InputError, match=r"matmul/spec.toml: kernels\[0\] \(matmul_naive\)\."
                       r"args\[0\] \(a\): a buffer needs shape and intent"):
        list_kernels(root)


def test_grid_that_does_not_cover_is_named(tmp_path):
    root = _copy_matmul(tmp_path, 'grid = ["ceil(n / bx)", "ceil(n / by)"]',
                        'grid = ["n // bx", "ceil(n / by)"]')
    with pytest.raises(InputError, match=r"\(matmul_naive\)\.launch\.grid: the grid covers 32 x 48 "
                       r"threads at size 'small' with bx=32,by=1, but the kernel needs 48 x 48"):
        list_kernels(root)


def test_tunable_default_outside_its_set_is_named(tmp_path):
    root = _copy_matmul(tmp_path, "defaults = { tile = 16, pad = 0 }", "defaults = { tile = 12, pad = 0 }")
    with pytest.raises(InputError, match=r"\(matmul_tiled\)\.defaults\.tile: value 12 is outside "
                       r"its declared set \[8, 16, 32\]"):
        list_kernels(root)


def test_tunable_outside_its_set_is_refused_at_launch():
    kernel = get_kernel("matmul_tiled")
    with pytest.raises(InputError,
                       match=r"tile=12 is not allowed for matmul_tiled; choose one of \[8, 16, 32\]"):
        kernel.launch("small", {"tile": 12})


def test_a_configuration_the_restrictions_exclude_is_refused_at_launch():
    kernel = get_kernel("convolve_rows")  # restricted to 128-256 threads a block
    assert all(v in kernel.spec.tunables[k] for k, v in {"bx": 16, "by": 2}.items())
    with pytest.raises(InputError, match=r"bx=16,by=2,px=1,radius=4 breaks convolve_rows's "
                       r"restriction 'bx \* by >= 128'"):
        kernel.launch("small", {"bx": 16, "by": 2})
    assert kernel.launch("small", {"bx": 16, "by": 8}).threads_per_block == 128


def test_missing_output_in_check_is_named(tmp_path):
    root = _copy_matmul(tmp_path, 'check = { outputs = ["c"]', 'check = { outputs = ["d"]')
    with pytest.raises(InputError, match=r"check\.outputs: 'd' is not an out or inout buffer"):
        list_kernels(root)


def test_missing_source_is_named(tmp_path):
    root = _copy_matmul(tmp_path, 'entry = "matmul_naive"', 'entry = "matmul_plain"')
    with pytest.raises(InputError, match=r"entry: 'matmul_plain' is not defined in matmul.cu"):
        list_kernels(root)


def test_unknown_field_is_named(tmp_path):
    root = _copy_matmul(tmp_path, 'roi = "roi_matmul"', 'roi = "roi_matmul"\nspeed = 3')
    with pytest.raises(InputError, match=r"spec.toml: kernels.0.speed: Extra inputs are not permitted"):
        list_kernels(root)


def test_finding_one_kernel_validates_only_its_application(tmp_path):
    """A broken application beside it does not stop a kernel from loading; listing the
    corpus still names the broken one."""
    root = tmp_path / "kernels"
    for app in ("matmul", "atomics"):
        shutil.copytree(KERNEL_DIR / app, root / app)
    spec = root / "atomics" / "spec.toml"
    spec.write_text(spec.read_text().replace('entry = "atomic_contention"', "entry = 3", 1))
    assert get_kernel("matmul_tiled", root).name == "matmul_tiled"
    with pytest.raises(InputError, match=r"atomics/spec.toml"):
        list_kernels(root)


def test_a_kernel_name_used_by_two_applications_is_refused_when_looked_up(tmp_path):
    root = tmp_path / "kernels"
    for app in ("matmul", "atomics"):
        shutil.copytree(KERNEL_DIR / app, root / app)
    spec = root / "atomics" / "spec.toml"
    spec.write_text(spec.read_text().replace('name = "atomic_contention"',
                                             'name = "matmul_naive"', 1))
    with pytest.raises(InputError, match=r"'matmul_naive' is used by both atomics and matmul"):
        get_kernel("matmul_naive", root)


def test_kernel_names_are_read_as_the_parsed_toml_gives_them():
    import tomllib

    from kerncast.corpus._catalog import _kernel_names

    for spec in sorted(KERNEL_DIR.glob("*/spec.toml")):
        text = spec.read_text()
        assert _kernel_names(text) == [k["name"] for k in tomllib.loads(text)["kernels"]]
    # a name line in a kernel's sub-table is not the kernel's; quoted keys are parsed
    text = ("[[kernels]]\nname = 'a'  # first\n[kernels.params]\nname = \"p\"\n"
            "[[kernels]]\nblock = 1\n\"name\" = \"b\"\n")
    assert _kernel_names(text) == ["a", "b"]
