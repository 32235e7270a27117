"""Which kernels need real inputs for their trace, and the arguments they are emulated with."""

from __future__ import annotations

import numpy as np
import pytest

from kerncast.corpus import get_kernel, make_args
from kerncast.emu import build_program
from kerncast.frontend import compile as compile_source
from kerncast.ptx import parse
from kerncast.sim._inputs import data_dependent, emulation_args

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _ptx_program(body: str, regs: str):
    module = parse(HEADER + f"""
.visible .entry k(.param .u64 x, .param .u64 y, .param .u32 n)
{{
{regs}
{body}
ret;
}}
""")
    return build_program(module.kernel("k"), module)


PROLOGUE = """ld.param.u64 %rd1, [x]; ld.param.u64 %rd2, [y]; ld.param.u32 %r9, [n];
mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 4; add.u64 %rd4, %rd1, %rd3;
add.u64 %rd5, %rd2, %rd3;"""
REGS = ".reg .u32 %r<10>; .reg .u64 %rd<10>; .reg .f32 %f<4>; .reg .pred %p<3>;"


def test_a_copy_does_not_depend_on_the_data():
    program = _ptx_program(PROLOGUE + """
ld.global.f32 %f1, [%rd4]; mul.f32 %f2, %f1, %f1; st.global.f32 [%rd5], %f2;""", REGS)
    assert not data_dependent(program)


def test_a_branch_on_a_loaded_value_depends_on_the_data():
    program = _ptx_program(PROLOGUE + """
ld.global.f32 %f1, [%rd4]; setp.gt.f32 %p1, %f1, 0f00000000;
@%p1 bra SKIP; st.global.f32 [%rd5], %f1;
SKIP:""", REGS)
    assert data_dependent(program)


def test_an_address_formed_from_a_loaded_value_depends_on_the_data():
    program = _ptx_program(PROLOGUE + """
ld.global.u32 %r2, [%rd4]; mul.wide.u32 %rd6, %r2, 4; add.u64 %rd7, %rd2, %rd6;
st.global.u32 [%rd7], %r1;""", REGS)
    assert data_dependent(program)


def test_a_parameter_guards_and_addresses_without_making_the_trace_data_dependent():
    program = _ptx_program(PROLOGUE + """
setp.ge.u32 %p1, %r1, %r9; @%p1 bra DONE;
mul.wide.u32 %rd6, %r9, 4; add.u64 %rd7, %rd4, %rd6;
ld.global.f32 %f1, [%rd7]; st.global.f32 [%rd5], %f1;
DONE:""", REGS)
    assert not data_dependent(program)


def _corpus_program(name: str):
    kernel = get_kernel(name)
    config = kernel.launch("small")
    tu = compile_source(str(kernel.source_path("cuda")), lang="cuda", arch="h100-sxm",
                        defines=dict(config.defines))
    return kernel, config, build_program(tu.module.kernel(tu.kernel(kernel.entry).entry),
                                         tu.module)


@pytest.mark.toolchain
@pytest.mark.parametrize("name,dependent", [
    ("copy_vector", False), ("matmul_tiled", False), ("arith_fp32", False),
    ("histo_global", True), ("bfs_frontier_expand", True), ("spmv_csr_scalar", True),
])
def test_corpus_kernels(name, dependent):
    _, _, program = _corpus_program(name)
    assert data_dependent(program) is dependent


def _args(kernel, config, program, seed=0):
    """The emulation's values by argument name, and how they were made."""
    launch = kernel.instance(config, seed=seed)[1]
    values, inputs = emulation_args(launch, program)
    return dict(zip(launch.names, values)), inputs


@pytest.mark.toolchain
def test_data_independent_kernels_get_zero_buffers_of_the_launch_sizes():
    kernel, config, program = _corpus_program("copy_vector")
    args, inputs = _args(kernel, config, program)
    assert inputs == "zeros"
    n = config.params["n"]
    assert set(args) == {"x", "y", "n"}
    for name in ("x", "y"):
        assert args[name].dtype == np.float32 and args[name].shape == (n,)
        assert not args[name].any()
    assert args["n"] == n and isinstance(args["n"], np.int32)


@pytest.mark.toolchain
def test_data_dependent_kernels_get_their_generated_inputs():
    kernel, config, program = _corpus_program("histo_global")
    args, inputs = _args(kernel, config, program, 3)
    assert inputs == "generated"
    expected = make_args(kernel, config, seed=3)
    assert set(args) == set(expected)
    assert np.array_equal(args["img"], expected["img"])
    assert args["img"].any()  # real data, not zeros
    other, _ = _args(kernel, config, program, 4)
    assert not np.array_equal(other["img"], args["img"])


@pytest.mark.toolchain
def test_generated_inputs_come_read_only_and_outputs_are_new_each_time():
    kernel, config, program = _corpus_program("histo_global")
    args, _ = _args(kernel, config, program, 3)
    assert not args["img"].flags.writeable and not args["bins"].flags.writeable  # in, inout
    kernel, config, program = _corpus_program("nearest_distance")
    first, inputs = _args(kernel, config, program)
    again, _ = _args(kernel, config, program)
    assert inputs == "generated"
    assert first["dist"].flags.writeable and not first["dist"].any()
    assert not np.shares_memory(first["dist"], again["dist"])
    assert np.shares_memory(first["records"], again["records"])  # generated once


@pytest.mark.toolchain
def test_a_prediction_leaves_the_kept_inputs_as_generated():
    from kerncast.sim import predict_launch

    kernel, config, program = _corpus_program("histo_global")
    expected = make_args(kernel, config, seed=0)
    predict_launch(*kernel.instance(config), "h100")  # its atomics add into bins (inout)
    args, _ = _args(kernel, config, program)
    assert np.array_equal(args["bins"], expected["bins"])
    assert np.array_equal(args["img"], expected["img"])


def test_a_data_independent_kernel_runs_on_zeros_whatever_data_its_arrays_hold():
    from kerncast.core import Array, Launch, Scalar

    data = np.arange(1, 4097, dtype=np.float32)
    launch = Launch(grid=(16, 1, 1), block=(256, 1, 1),
                    args=(Array(data.dtype, data.shape, data=data),
                          Array(data.dtype, data.shape, data=np.ones(4096, np.float32)),
                          Scalar(4096, np.dtype(np.uint32))), names=("x", "y", "n"))
    program = _ptx_program(PROLOGUE + "ld.global.f32 %f1, [%rd4]; st.global.f32 [%rd5], %f1;",
                           REGS)
    values, inputs = emulation_args(launch, program)
    assert inputs == "zeros"
    assert values[0].shape == (4096,) and values[0].flags.writeable and not values[0].any()
    assert not np.shares_memory(values[0], data)
    assert np.array_equal(launch.materialise(generate=False)[0], data)


def test_values_are_repeatable_only_where_a_generator_draws_them_afresh(tmp_path):
    from kerncast.core import Array, Launch, Scalar
    from kerncast.sim._inputs import values_repeatable

    def launch(*arrays):
        return Launch(grid=(1, 1, 1), block=(32, 1, 1), args=(*arrays, Scalar(3, np.int32)))

    drawn = Array(np.float32, (8,), generator="uniform(0, 1)")
    assert values_repeatable(launch(drawn, Array(np.float32, (8,))))
    # a caller's array may change between predictions, and so may a file
    assert not values_repeatable(launch(drawn, Array.of(np.zeros(8, np.float32))))
    np.save(tmp_path / "x.npy", np.zeros(8, np.float32))
    assert not values_repeatable(launch(Array(np.float32, (8,),
                                              generator=f"npy({tmp_path / 'x.npy'})")))
    # a corpus launch draws every input from its application's generator
    kernel = get_kernel("bfs_queue_expand")
    assert values_repeatable(kernel.instance(kernel.launch("small"))[1])
