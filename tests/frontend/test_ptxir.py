"""The bridge to kerncast.ptx: its parameters are used once the parser is there."""

from __future__ import annotations

import types

import pytest

from kerncast.frontend import _ptxir, compile

from .test_compile import PTX


def _fake_ptx_package(monkeypatch, parse):
    fake = types.ModuleType("kerncast.ptx")
    fake.parse = parse
    monkeypatch.setattr(_ptxir.importlib, "import_module",
                        lambda name: fake if name == "kerncast.ptx" else None)


def test_scan_is_used_without_the_parser(monkeypatch):
    monkeypatch.setattr(_ptxir, "parser", lambda: None)
    assert _ptxir.parse_quietly(PTX) is None and _ptxir.params_from_module(None) is None
    (k,) = compile(PTX, lang="ptx").kernels
    assert [p.size for p in k.params] == [8, 16, 4]


def test_parser_parameters_are_preferred(monkeypatch):
    param = types.SimpleNamespace(name="renamed", type=".u64", size=8, count=1, align=None,
                                  ptr_space="global")
    entry = types.SimpleNamespace(name="add_one", params=(param,))
    _fake_ptx_package(monkeypatch, lambda text: types.SimpleNamespace(entries=(entry,)))
    (k,) = compile(PTX, lang="ptx").kernels
    assert [(p.name, p.type, p.size, p.align, p.space) for p in k.params] == [
        ("renamed", "u64", 8, 8, "global")]


def test_parser_failure_falls_back_to_the_scan(monkeypatch):
    from kerncast import InputError

    def broken(text):
        raise InputError("unsupported")

    _fake_ptx_package(monkeypatch, broken)
    (k,) = compile(PTX, lang="ptx").kernels
    assert [p.size for p in k.params] == [8, 16, 4]


@pytest.mark.parametrize("value", [None, 3])
def test_parser_must_be_callable(monkeypatch, value):
    _fake_ptx_package(monkeypatch, value)
    assert _ptxir.parser() is None


def test_module_and_ir_come_from_the_parser(monkeypatch):
    param = types.SimpleNamespace(name="p", type="u64", size=8)
    entry = types.SimpleNamespace(name="add_one", params=(param,))
    calls = []

    def parse(text):
        calls.append(text)
        return types.SimpleNamespace(entries=(entry,))

    _fake_ptx_package(monkeypatch, parse)
    tu = compile(PTX, lang="ptx")
    assert tu.kernel("add_one").ir is entry and tu.module is tu.module
    assert len(calls) == 1  # parsed once, for the parameters and the module


def test_module_without_the_parser(monkeypatch):
    from kerncast import KerncastError

    monkeypatch.setattr(_ptxir, "parser", lambda: None)
    from kerncast.frontend import _unit

    monkeypatch.setattr(_unit, "parser", lambda: None)
    tu = compile(PTX, lang="ptx")
    with pytest.raises(KerncastError, match="PTX parser .* is not available"):
        tu.kernel("add_one").ir
