"""The predictor registry: lookup by name, registration checks, error messages."""

from __future__ import annotations

import pytest

from kerncast import InputError
from kerncast.models import Predictor, Roofline, get_predictor, list_predictors, register
from kerncast.models.registry import predictor_class


def test_lookup_by_name_gives_new_instances_with_params():
    model = get_predictor("roofline", launch_overhead_s=5e-6)
    assert isinstance(model, Roofline) and model.launch_overhead_s == 5e-6
    assert get_predictor("roofline") is not get_predictor("roofline")
    assert predictor_class(" Roofline ") is Roofline
    assert list_predictors() == sorted(list_predictors())


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(InputError) as err:
        get_predictor("roofilne")
    message = str(err.value)
    assert message.startswith("unknown model 'roofilne'; did you mean roofline")
    assert "the known models are: " + ", ".join(list_predictors()) in message


def test_unknown_parameter_lists_the_valid_ones():
    with pytest.raises(InputError, match="does not take those parameters.*launch_overhead_s"):
        get_predictor("roofline", overhead=1)


def _model(name="x-for-tests", needs=frozenset()):
    return type("M", (Predictor,), {"name": name, "needs": needs, "__init__": lambda self: None})


@pytest.mark.parametrize(("cls", "message"), [
    (_model(name=""), "must be lower-case words"),
    (_model(name="Bad Name"), "must be lower-case words"),
    (_model(needs=frozenset({"gpu"})), "needs must be a frozenset over"),
    (_model(needs={"spec"}), "needs must be a frozenset over"),
    (_model(name="roofline"), "taken by a built-in model"),
    (int, "only Predictor subclasses"),
])
def test_register_rejects_bad_classes(cls, message):
    with pytest.raises(TypeError, match=message):
        register(cls)


def test_builtin_table_names_the_module_that_registers_each_model():
    """Every model module under kerncast.models, imported, registers exactly the names the
    table sends there (a new model needs its line in BUILTIN to be found)."""
    import importlib
    import pkgutil

    import kerncast.models
    from kerncast.models.registry import _REGISTRY, BUILTIN

    for info in pkgutil.walk_packages(kerncast.models.__path__, "kerncast.models."):
        importlib.import_module(info.name)
    builtin = {name: cls.__module__ for name, cls in _REGISTRY.items()
               if cls.__module__.startswith("kerncast.models.")}
    assert builtin == BUILTIN


def test_a_builtin_name_cannot_be_taken_before_its_module_loads():
    with pytest.raises(TypeError, match="'xapp' is taken by a built-in model"):
        register(_model(name="xapp"))


def test_a_registered_name_cannot_be_taken_by_another_class():
    from kerncast.models.registry import _REGISTRY

    first = register(_model(name="dup-for-tests"))
    try:
        with pytest.raises(TypeError, match="'dup-for-tests' is taken by M"):
            register(_model(name="dup-for-tests"))
    finally:
        _REGISTRY.pop(first.name)
