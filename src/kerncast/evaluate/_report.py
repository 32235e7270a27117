"""The evaluation report: one self-contained HTML page with PNG figures beside it.

``write_report(result, directory)`` writes ``index.html``, ``figures/*.png`` (referenced
by relative paths) and ``result.json`` (the tables, for scripts).
"""

from __future__ import annotations

import html
import json
import math
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from kerncast import __version__
from kerncast._errors import InputError
from kerncast.evaluate import _figures as figs
from kerncast.evaluate import _metrics
from kerncast.evaluate._result import EvaluationResult

__all__ = ["LABELS", "format_value", "html_table", "write_report"]

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f0f0f0; } td.text { text-align: left; max-width: 28em; }
tr.failed td { color: #a00; } img { max-width: 100%; border: 1px solid #eee; margin: 0.3em; }
pre { background: #f7f7f7; padding: 0.8em; white-space: pre-wrap; font-size: 0.8em; }
"""

#: Column headers as people read them (tables keep their column names for scripts).
LABELS = {
    "rows": "rows", "predicted": "predicted", "failed": "failed", "mape_pct": "MAPE %",
    "median_ape_pct": "median APE %", "p90_ape_pct": "p90 APE %", "within_10_pct": "≤10% (%)",
    "within_25_pct": "≤25% (%)", "spearman": "Spearman ρ", "regret_pct": "top-1 regret %",
    "s_per_prediction": "s / prediction", "fit_s": "fit (per fold)", "fit_s_total": "fit (total)",
    "failed_kernels": "failed kernels", "accuracy_mape_pct": "accuracy: MAPE %",
    "accuracy_within_25_pct": "accuracy: ≤25% (%)", "construction_fit_s": "construction: fit time",
    "construction_must_measure": "construction: must measure",
    "evaluation_s_per_prediction": "evaluation: s / prediction",
}

_SECONDS = ("s_per_prediction", "fit_s", "fit_s_total", "construction_fit_s",
            "evaluation_s_per_prediction")


def format_value(column: str, value: object) -> str:
    """A table cell as people read it: percent with one decimal, seconds with units."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        if column in _SECONDS:
            return _seconds(value)
        if column.endswith("_pct"):
            return f"{value:.1f}"
        return f"{value:.2f}"
    return str(value)


def _seconds(value: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(value) >= scale or unit == "ns":
            return f"{value / scale:.3g} {unit}"
    return f"{value:g} s"


def html_table(frame: pd.DataFrame, table_id: str) -> str:
    """``frame`` as an HTML table; rows with failures are marked."""
    head = "".join(f'<th title="{html.escape(str(c))}">{html.escape(LABELS.get(str(c), str(c)))}'
                   "</th>" for c in frame.columns)
    body = []
    for rec in frame.to_dict("records"):
        failed = bool(rec.get("failed")) if isinstance(rec.get("failed"), (int, float)) else False
        cells = "".join(
            f'<td class="{"text" if isinstance(v, str) else "num"}">'
            f"{html.escape(format_value(str(c), v))}</td>" for c, v in rec.items())
        body.append(f'<tr{" class=failed" if failed else ""}>{cells}</tr>')
    return (f'<table id="{table_id}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def _inline(text: str) -> str:
    """``code`` as <code>, the rest escaped."""
    parts = text.split("``")
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p)
                   for i, p in enumerate(parts))


def rst_to_html(doc: str) -> str:
    """The small reStructuredText of kerncast's docstrings as HTML: paragraphs, bullet
    lists (``* `` items, continued by indented lines) and ``code``."""
    blocks, out = [b for b in doc.strip().split("\n\n") if b.strip()], []
    for block in blocks:
        lines = block.splitlines()
        if lines[0].lstrip().startswith("* "):
            items: list[str] = []
            for line in lines:
                if line.lstrip().startswith("* "):
                    items.append(line.lstrip()[2:])
                else:
                    items[-1] += " " + line.strip()
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
        else:
            out.append(f"<p>{_inline(' '.join(x.strip() for x in lines))}</p>")
    return "".join(out)


def _img(path: Path, root: Path, alt: str) -> str:
    return f'<img src="{html.escape(path.relative_to(root).as_posix())}" alt="{html.escape(alt)}">'


def _no_predictions(pred: pd.DataFrame, model: str) -> str:
    """Why ``model`` predicted nothing: its most common error, as the model said it."""
    errors = pred.loc[(pred["model"] == model) & (pred["error"].astype(str) != ""), "error"]
    why = errors.astype(str).value_counts().index[0] if len(errors) else "no rows to predict"
    return (f"<p><b>{html.escape(model)}</b> predicted none of these rows: "
            f"{html.escape(why)}</p>")


def _figures(result: EvaluationResult, root: Path) -> dict[str, list[str]]:
    out = root / "figures"
    out.mkdir(parents=True, exist_ok=True)
    pred = result.predictions
    predicted = set(pred.loc[pred["ok"], "model"])
    parity = [_img(figs.parity_figure(pred[pred["model"] == m], m,
                                      out / f"parity_{figs.safe_name(m)}.png"), root,
                   f"predicted against measured, {m}") if m in predicted
              else _no_predictions(pred, m) for m in result.models]
    ok = pred[pred["ok"]]
    summary = [_img(figs.kernel_error_figure(result.per_kernel, out / "error_per_kernel.png"),
                    root, "error per kernel")]
    if len(ok):
        summary.append(_img(figs.ecdf_figure(pred, out / "error_distribution.png"), root,
                            "distribution of errors"))
    configs = [_img(figs.configs_figure(pred, k, out / f"configs_{figs.safe_name(k)}.png"),
                    root, f"launch configurations of {k}") for k in result.kernels]
    return {"parity": parity, "summary": summary, "configs": configs}


def _survey_section(result: EvaluationResult) -> str:
    found = result.survey_kernels()
    items = "".join(
        f"<li><b>{label}</b>: {html.escape(', '.join(ks)) if ks else 'not in this evaluation'}"
        "</li>" for label, ks in found.items())
    table = (html_table(result.survey, "survey-kernels") if len(result.survey)
             else "<p>None of the survey's kernels are in this evaluation.</p>")
    return ("<h2>The survey's kernels</h2><p>The survey re-ran twelve models on MM, HotSpot "
            "and BFS; here is each model's error on the kernels that stand for them "
            "(found by corpus tag <code>survey-*</code> or by name).</p>"
            f"<ul>{items}</ul>{table}")


def _page(result: EvaluationResult, images: dict[str, list[str]]) -> str:
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    split = ("leave one kernel out" if result.folds == "kernel" else
             "a held-out test dataset" if result.folds == "held-out" else
             f"{result.folds} folds by kernel")
    failures = result.failures()
    made = int(result.predictions["ok"].sum())
    failed = len(result.predictions) - made
    parts = [
        f"<h1>kerncast evaluation: {html.escape(result.dataset)}</h1>",
        f"<p>{len(result.kernels)} kernels, {made} predictions"
        f"{f' ({failed} rows not predicted)' if failed else ''}, "
        f"{len(result.models)} models; split: {split}. kerncast {__version__}, {when}.</p>",
        "<h2>Models</h2>", html_table(result.per_model, "per-model"),
        "<h2>Comparison (the survey's Table 2, measured)</h2>",
        html_table(result.comparison, "comparison"),
        _survey_section(result),
        "<h2>Predicted against measured</h2>", *images["parity"],
        "<h2>Errors per kernel and their distribution</h2>", *images["summary"],
        "<h2>Per kernel</h2>", html_table(result.per_kernel, "per-kernel"),
        "<h2>Launch configurations</h2>", *images["configs"],
        "<h2>Failures</h2>",
        html_table(failures, "failures") if len(failures) else "<p>No model failed.</p>",
        "<h2>Metric definitions</h2>", rst_to_html(_metrics.__doc__ or ""),
    ]
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            f"<title>kerncast evaluation: {html.escape(result.dataset)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(parts)}</body></html>")


def write_report(result: EvaluationResult, directory: str | Path) -> Path:
    """Write the HTML report of ``result`` into ``directory``; returns ``index.html``.

    Raises
    ------
    InputError
        If ``directory`` exists and is not a directory, or cannot be written.
    """
    root = Path(directory)
    try:
        root.mkdir(parents=True, exist_ok=True)
        images = _figures(result, root)
        (root / "result.json").write_text(json.dumps(result.to_dict(), indent=1, default=str))
        index = root / "index.html"
        index.write_text(_page(result, images), encoding="utf-8")
    except (FileExistsError, NotADirectoryError, PermissionError) as exc:
        raise InputError(f"cannot write the report to {root}: {exc.strerror or exc}; "
                         "choose another directory") from None
    return index
