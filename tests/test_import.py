"""``import kerncast`` stays light: no GPU libraries, no Ray, no matplotlib."""

from tests.fresh import fresh_python, modules_after

HEAVY = ("cupy", "pyopencl", "ray", "matplotlib", "cuda", "pynvml", "sklearn", "pandas")


def test_import_pulls_in_no_optional_dependency():
    code = (
        "import sys, kerncast\n"
        f"heavy = {HEAVY!r}\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in heavy)\n"
        "print(','.join(loaded))\n"
    )
    assert fresh_python(code) == ""


def test_public_names_resolve_lazily():
    import kerncast

    assert callable(kerncast.occupancy)
    assert kerncast.get_device("h100").compute.sm_count == 132


def test_a_static_prediction_loads_no_learned_model_library():
    """``kerncast predict`` with the static model imports neither scikit-learn nor pandas
    (about a second of start-up between them), nor SciPy's subpackages but those Numba
    takes: it imports SciPy's package (10 ms) to check its version, and where it compiles
    the event loop (the first prediction on a machine), SciPy's LAPACK bindings."""
    loaded = modules_after(["predict", "corpus:copy_vector", "--size", "small", "--json"])
    heavy = {"sklearn", "pandas", "matplotlib"}
    assert {m.split(".")[0] for m in loaded} & heavy == set()
    subpackages = {m.split(".")[1] for m in loaded if m.startswith("scipy.")}
    assert {p for p in subpackages if not p.startswith("_")} <= {"version", "linalg"}
