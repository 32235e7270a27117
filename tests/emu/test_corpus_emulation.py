"""Every corpus kernel, in every language it has, emulated with all blocks at size
``small`` (default configuration and the first and last of its launch space) matches
its NumPy reference."""

import pytest

from kerncast.corpus import list_kernels
from kerncast.emu import emulate_corpus

pytestmark = pytest.mark.toolchain

CASES = []
for _kernel in list_kernels():
    _space = _kernel.launches("small")
    _picks = {c.label(): c.tunables for c in (_kernel.launch("small"), _space[0], _space[-1])}
    for _language in _kernel.languages:
        for _label, _tunables in _picks.items():
            CASES.append(pytest.param(_kernel.name, _language, _tunables,
                                      id=f"{_kernel.name}-{_language}-{_label}"))


@pytest.mark.parametrize("name,language,tunables", CASES)
def test_corpus_kernel_matches_its_reference(name, language, tunables):
    result = emulate_corpus(name, "small", tunables, language)
    assert result.problems == []
    assert result.steps > 0 and len(result.blocks) == result.launch.blocks
