"""The HTML report: files, tables, figures, and a real browser that loads them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kerncast.models import list_predictors

from kerncast.evaluate import evaluate, write_report
from kerncast.evaluate._report import format_value
from tests.synthetic import evaluated_synthetic, synthetic_dataset

TABLES = ("per-model", "comparison", "survey-kernels", "per-kernel", "failures")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return write_report(evaluated_synthetic(), tmp_path_factory.mktemp("report") / "synthetic")


def test_report_files_and_sections(report):
    page = report.read_text()
    for table in TABLES:
        assert f'<table id="{table}">' in page
    sources = re.findall(r'<img src="([^"]+)"', page)
    assert {"figures/parity_roofline.png", "figures/parity_launch-regression.png",
            "figures/error_per_kernel.png", "figures/error_distribution.png",
            "figures/configs_matmul_naive.png"} <= set(sources)
    for src in sources:
        assert not src.startswith("/") and (report.parent / src).stat().st_size > 1000
    assert "The survey's kernels" in page and "<b>MM</b>: matmul_naive, matmul_tiled" in page
    assert "<b>BFS</b>: not in this evaluation" in page
    assert "top-1 regret of a group" in page  # the metric definitions
    assert (report.parent / "result.json").exists()


def test_cells_read_as_people_expect():
    assert format_value("mape_pct", 12.345) == "12.3"
    assert format_value("s_per_prediction", 2.5e-5) == "25 µs"
    assert format_value("fit_s", 1.5) == "1.5 s"
    assert format_value("spearman", float("nan")) == "–"
    assert format_value("error", None) == "–"


def test_a_model_that_predicted_nothing_says_why_instead_of_an_empty_figure(tmp_path):
    data = synthetic_dataset(kernels=("matmul_tiled", "synthetic_stream"))
    data = type(data)(times=data.times, samples=data.samples, name="no-counters")
    result = evaluate(data, "roofline,sampling-svr")
    svr = result.predictions[result.predictions["model"] == "sampling-svr"]
    assert not svr["ok"].any()
    page = write_report(result, tmp_path / "report").read_text()
    assert 'src="figures/parity_sampling-svr.png"' not in page
    assert 'src="figures/parity_roofline.png"' in page
    reason = svr["error"].astype(str).value_counts().index[0]
    assert "<b>sampling-svr</b> predicted none of these rows: " in page
    assert reason and __import__("html").escape(reason) in page
    made = int(result.predictions["ok"].sum())
    assert f"{made} predictions ({len(result.predictions) - made} rows not predicted)" in page


def test_metric_definitions_read_as_html(report):
    page = report.read_text()
    section = page[page.index("<h2>Metric definitions</h2>"):]
    assert "``" not in section and "<code>mape_pct</code>" in section and "<li>" in section


def test_report_directory_that_is_a_file_is_refused(tmp_path):
    from kerncast import InputError

    target = tmp_path / "taken"
    target.write_text("")
    result = evaluate(synthetic_dataset(kernels=("matmul_tiled", "synthetic_stream")), "roofline")
    with pytest.raises(InputError, match="cannot write the report to"):
        write_report(result, target)


def test_matplotlib_is_imported_only_for_reports():
    code = "import sys, kerncast.evaluate, kerncast.models; print('matplotlib' in sys.modules)"
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env)
    assert out.stdout.strip() == "False"


def _browser():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("Chromium and chromedriver are not installed (./install.sh --test)")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--allow-file-access-from-files"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options)


def test_report_renders_in_chromium(report):
    browser = _browser()
    try:
        browser.get(report.resolve().as_uri())
        ids = browser.execute_script(
            "return Array.from(document.querySelectorAll('table')).map(t => t.id)")
        assert set(TABLES) <= set(ids)
        rows = browser.execute_script(
            "return document.querySelectorAll('#per-model tbody tr').length")
        assert rows == len(list_predictors())
        images = browser.execute_script(
            "return Array.from(document.images).map(i => [i.getAttribute('src'), "
            "i.complete, i.naturalWidth])")
        assert len(images) >= 8
        broken = [src for src, complete, width in images if not (complete and width > 0)]
        assert broken == []
    finally:
        browser.quit()


def test_sampling_figures_are_drawn(tmp_path):
    import pandas as pd

    from kerncast.evaluate._figures import sample_ladder_figure, tradeoff_figure

    ladder = pd.DataFrame({"waves": [1.0, 2.0, 3.0, 5.0], "time_median_s": [6e-6, 9e-6, 11e-6, 15e-6]})
    path = sample_ladder_figure({"k bx=256": (ladder, 2e-3, 1000.0)}, tmp_path / "ladders.png")
    sweep = pd.DataFrame({"mean_error_pct": [8.0, 3.0], "median_error_pct": [2.0, 0.5],
                          "mean_overhead_pct": [40.0, 44.0], "median_overhead_pct": [5.0, 16.0]},
                         index=["5%", "20%"])
    other = tradeoff_figure(sweep, tmp_path / "tradeoff.png")
    for png in (path, other):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_a_ladder_with_several_l2_states_gets_a_line_per_state(tmp_path, monkeypatch):
    import pandas as pd

    from kerncast.evaluate import _figures

    seen = {}
    real = _figures._save

    def save(fig, path):
        seen["labels"] = [line.get_label() for line in fig.axes[0].get_lines()]
        return real(fig, path)

    monkeypatch.setattr(_figures, "_save", save)
    ladder = pd.DataFrame({"waves": [1.0, 2.0, 3.0] * 2, "time_median_s": [6e-6, 9e-6, 11e-6,
                                                                           5e-6, 7e-6, 9e-6],
                           "l2_state": ["cold"] * 3 + ["paid"] * 3})
    _figures.sample_ladder_figure({"k": (ladder, 2e-3, 1000.0)}, tmp_path / "ladders.png")
    assert seen["labels"] == ["cold: each further wave", "paid: each further wave",
                              "full run, per wave"]
