"""Every corpus kernel compiles in every language it declares and ptxas sizes it for sm_90."""

from __future__ import annotations

import pytest

from kerncast.corpus import list_kernels
from kerncast.frontend import compile

pytestmark = pytest.mark.toolchain

CASES = [(k, lang) for k in list_kernels() for lang in k.languages]


@pytest.mark.parametrize("kernel,lang", CASES, ids=[f"{k.name}-{lang}" for k, lang in CASES])
def test_corpus_kernel_compiles_and_has_resources(kernel, lang, have_cuda, have_clang):
    defines = kernel.launch("small").defines
    tu = compile(kernel.source_path(lang), defines=defines, arch="sm_90")
    k = tu.kernel(kernel.entry)
    assert len(k.params) == len(kernel.spec.args), "PTX parameters differ from the spec's args"
    res = k.resources("sm_90")
    assert res.arch == "sm_90" and 0 < res.registers <= 255
    assert res.shared_static <= 48 * 1024
