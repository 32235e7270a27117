"""Launch files and --arg strings."""

from __future__ import annotations

import numpy as np
import pytest

from kerncast import InputError
from kerncast.core import (Array, Scalar, Struct, View, load_launch_file, parse_arg,
                           parse_args)

SAXPY = 'extern "C" __global__ void saxpy(int n, float a, float *x, float *y) {}\n'


@pytest.mark.parametrize("spec, name, expected", [
    ("n=int32:1024", "n", Scalar(1024, "int32")),
    ("flag=bool:true", "flag", Scalar(True, "bool")),
    ("a=float64:-2.5", "a", Scalar(-2.5, "float64")),
    ("u=uint32:0xff", "u", Scalar(255, "uint32")),
])
def test_scalars(spec, name, expected):
    assert parse_arg(spec) == (name, expected)


def test_arrays_views_and_structs():
    name, arr = parse_arg("x=float32[64,32]:normal(0, 2)")
    assert name == "x" and isinstance(arr, Array) and arr.shape == (64, 32)
    assert str(arr.generator) == "normal(0, 2)"
    assert parse_arg("float16[8]")[1].generator is None
    name, view = parse_arg("p=view:J+129")
    assert isinstance(view, View) and (view.of, view.offset) == ("J", 129)
    name, struct = parse_arg("s=struct:float32=2,int32=7,float64=1")
    assert isinstance(struct, Struct) and len(struct.raw) == 16


def test_shapes_may_use_earlier_scalars():
    args, names = parse_args(["n=int32:100", "x=float32[n*2]", "view:x+n"])
    assert names == ("n", "x", "arg2") and args[1].shape == (200,) and args[2].offset == 100


def test_npy_arrays_take_the_files_dtype_and_shape(tmp_path):
    np.save(tmp_path / "rows.npy", np.arange(12, dtype=np.int64).reshape(3, 4))
    _, arr = parse_arg("rows=npy:rows.npy", base=tmp_path)
    assert arr.dtype == np.int64 and arr.shape == (3, 4)
    _, same = parse_arg("int64[12]:npy(rows.npy)", base=tmp_path)
    values = same.generator.draw(np.random.default_rng(), same.dtype, same.shape)
    assert values.tolist() == list(range(12))


@pytest.mark.parametrize("spec, message", [
    ("x=complex64[4]", "not a kernel argument type"),
    ("x=float32[4]:gauss(0, 1)", "unknown generator 'gauss'"),
    ("n=int32:1.5", "is not a int32"),
    ("flag=bool:maybe", "true or false"),
    ("x=float32[m]", "argument 'x=float32\\[m\\]': shape"),
    ("view:", "view:ARRAY\\+OFFSET"),
    ("struct:float32", "TYPE=VALUE"),
    ("hello", "cannot read the argument"),
])
def test_bad_arguments_say_what_is_wrong(spec, message):
    with pytest.raises(InputError, match=message):
        parse_arg(spec)


def test_duplicate_names_are_refused():
    with pytest.raises(InputError, match="two arguments are named 'n'"):
        parse_args(["n=int32:1", "n=int32:2"])


def _write(tmp_path, text: str):
    (tmp_path / "saxpy.cu").write_text(SAXPY)
    path = tmp_path / "saxpy.toml"
    path.write_text(text)
    return path


def test_a_launch_file_gives_the_kernel_and_launch(tmp_path):
    path = _write(tmp_path, 'kernel = "saxpy"\nsource = "saxpy.cu"\ngrid = [16]\nblock = [64]\n'
                            'options = ["--use_fast_math"]\n'
                            'args = ["n=int32:1024", "a=float32:2", "x=float32[n]", '
                            '"y=float32[n]:uniform(0, 1)"]\n')
    kernel, launch = load_launch_file(path).launch()
    assert kernel.name == "saxpy" and kernel.path == tmp_path / "saxpy.cu"
    assert kernel.options == ("--use_fast_math",) and kernel.language == "cuda"
    assert launch.grid == (16, 1, 1) and launch.names == ("n", "a", "x", "y")
    assert launch.buffer_bytes() == 2 * 1024 * 4


def test_a_kernel_tuner_launch_file_sweeps_its_parameters(tmp_path):
    path = _write(tmp_path, 'kernel = "saxpy"\nsource = "saxpy.cu"\nproblem_size = [1000]\n'
                            'restrictions = ["block_size_x >= 64"]\n'
                            'args = ["n=int32:1000", "a=float32:2", "x=float32[n]", '
                            '"y=float32[n]"]\n[params]\nblock_size_x = 128\n'
                            '[tune_params]\nblock_size_x = [32, 64, 128]\n')
    lf = load_launch_file(path)
    assert lf.configs() == [{"block_size_x": 64}, {"block_size_x": 128}]
    kernel, launch = lf.launch()
    assert launch.grid == (8, 1, 1) and launch.block == (128, 1, 1)
    assert kernel.defines["block_size_x"] == 128 and kernel.defines["grid_size_x"] == 8
    with pytest.raises(InputError, match="excluded by the restrictions"):
        lf.launch({"block_size_x": 32})


@pytest.mark.parametrize("text, message", [
    ('kernel = "saxpy"\n', "'source' must name"),
    ('kernel = "saxpy"\nsource = "saxpy.cu"\n', "give the launch's grid"),
    ('kernel = "saxpy"\nsource = "saxpy.cu"\ngrid = [1]\nblok = [1]\n', "unknown key 'blok'"),
    ('kernel = "saxpy"\nsource = "nope.cu"\ngrid = [1]\n', "no such file"),
    ('kernel = saxpy\n', "not valid TOML"),
])
def test_bad_launch_files_say_what_is_wrong(tmp_path, text, message):
    with pytest.raises(InputError, match=message):
        load_launch_file(_write(tmp_path, text))


def test_a_missing_launch_file_is_named(tmp_path):
    with pytest.raises(InputError, match="no such launch file"):
        load_launch_file(tmp_path / "missing.toml")
