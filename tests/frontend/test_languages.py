"""The language registry: every language kerncast.core declares has a frontend."""

from __future__ import annotations

import pytest

from kerncast import InputError
from kerncast.core import COMPILERS, LANGUAGES, language_of_suffix
from kerncast.frontend._languages import FRONTENDS, Frontend, frontend_of, register_frontend


def test_every_declared_language_has_a_frontend():
    assert set(FRONTENDS) == set(LANGUAGES)
    for name, suffixes in LANGUAGES.items():
        assert all(language_of_suffix(s) == name for s in suffixes)


def test_a_compiler_outside_the_languages_list_is_refused():
    with pytest.raises(InputError, match="does not compile cuda; choose one of auto, nvrtc, nvcc"):
        frontend_of("cuda").compiler("clang")
    assert COMPILERS["ptx"] == ("auto",)
    with pytest.raises(InputError, match="does not compile ptx"):
        frontend_of("ptx").compiler("auto")


def test_only_declared_languages_register():
    with pytest.raises(TypeError, match="not a language kerncast.core declares"):
        register_frontend(Frontend("fortran", None, None))
