"""Assembling many modules at once (:func:`kerncast.trace._sasscode.assemble_many`)."""

from __future__ import annotations

import pytest

from kerncast.corpus import get_kernel
from kerncast.frontend import _process, module_header
from kerncast.sim import cached_program, cached_unit
from kerncast.trace import _sasscode
from kerncast.trace._sasscode import assemble, assemble_many
from kerncast.trace._sassmap import printed_module
from tests.emu.ptxkit import HEADER

pytestmark = pytest.mark.skipif(bool(_sasscode.missing_tools()),
                                reason="ptxas or nvdisasm is not installed")

#: modules with several kernels (matmul), internal subroutines numbered across a cubin
#: (black_scholes's division and square root slow paths), shared arrays and barriers
#: (reduce_tree), a jump table (histo_shared) and warp shuffles (reduce_shuffle)
KERNELS = ("matmul_tiled", "black_scholes", "reduce_tree", "reduce_shuffle", "histo_shared",
           "gauss_update")

GLOBAL_DATA = HEADER + """
.global .align 4 .u32 counter;

.visible .entry bump(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.global.u32 %r1, [counter];
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


def _modules() -> list[str]:
    texts = []
    for name in KERNELS:
        corpus = get_kernel(name)
        for config in corpus.launches("small")[:2]:
            kernel, _ = corpus.instance(config, "cuda")
            tu, module = cached_unit(kernel, "h100")
            program = cached_program(module, tu.kernel(kernel.name).entry)
            texts.append(printed_module(program.module)[0])
    return list(dict.fromkeys(texts))


def _shape(code) -> dict:
    """Every function's blocks: successors, and each instruction as parsed."""
    return {name: [(block.successors, block.labels,
                    [(i.offset, i.opcode, i.guard, i.text, i.line, i.targets, i.inherited)
                     for i in block.instructions]) for block in function.blocks]
            for name, function in code.functions.items()}


def _fresh_cache(monkeypatch, path) -> None:
    monkeypatch.setenv("KERNCAST_CACHE", str(path))
    _sasscode._RECENT.clear()


def test_modules_assembled_together_have_the_code_each_has_alone(tmp_path, monkeypatch):
    modules = _modules()
    _fresh_cache(monkeypatch, tmp_path / "alone")
    alone = [_shape(assemble(m)) for m in modules]
    _fresh_cache(monkeypatch, tmp_path / "together")
    assert assemble_many(modules) == len(modules)
    calls: list = []
    monkeypatch.setattr(_process, "run_tool", lambda argv, **kw: calls.append(argv))
    together = [_shape(assemble(m)) for m in modules]
    assert calls == []  # every module's code came from the disk cache
    assert together == alone


def test_one_ptxas_and_one_nvdisasm_run_per_batch(tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path)
    modules = _modules()
    tools: list[str] = []
    real = _process.run_tool
    monkeypatch.setattr(_process, "run_tool",
                        lambda argv, **kw: tools.append(str(argv[0])) or real(argv, **kw))
    monkeypatch.setattr(_sasscode, "BATCH", 4)
    assert assemble_many(modules + modules[:2]) == len(modules)  # repeats assembled once
    batches = -(-len(modules) // 4)
    assert sum("ptxas" in t for t in tools) == batches
    # nvdisasm runs again with its dataflow analysis where a batch has a jump table
    assert batches <= sum("nvdisasm" in t for t in tools) <= 2 * batches
    tools.clear()
    assert assemble_many(modules) == 0 and tools == []  # all kept already


def test_a_module_with_global_data_is_left_to_be_assembled_alone(tmp_path, monkeypatch):
    # ptxas lays out global and constant data for the whole batch: an address that moves
    # can change the code
    _fresh_cache(monkeypatch, tmp_path)
    assert assemble_many([GLOBAL_DATA]) == 0
    assert "bump" in assemble(GLOBAL_DATA).functions


def test_a_batch_ptxas_rejects_is_left_to_each_module(tmp_path, monkeypatch):
    _fresh_cache(monkeypatch, tmp_path)
    good = _modules()[0]
    header = "\n".join(module_header(good))  # the same: one batch
    broken = header + "\n.visible .entry broken()\n{\n    frobnicate.u32 %r1;\n}\n"
    assert assemble_many([good, broken]) == 0
    assert assemble(good).functions  # still assembled, alone
    with pytest.raises(Exception, match="broken"):
        assemble(broken, name="broken")
