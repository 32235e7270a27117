"""A stand-in for Nsight Compute's command line, for tests without a GPU.

It answers ``--version`` and ``--query-metrics`` (listing every metric of kerncast's
set but ``smsp__inst_executed_op_branch``) and, for a profiling run, starts the
application, then writes a CSV in ncu's format with one result per launch that the
kerncast child recorded in its manifest. ``FAKE_NCU_ARGS`` (a file) receives the
arguments it was called with.
"""

import json
import os
import subprocess
import sys

_METRICS = os.path.join(os.path.dirname(__file__), "..", "..", "src", "kerncast", "data",
                        "_metrics.py")


def metric_names():
    """The metric set, read without importing kerncast.data (and pandas)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fake_metrics", _METRICS)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fake_metrics"] = module
    spec.loader.exec_module(module)
    return module.metric_names()

DROPPED = "smsp__inst_executed_op_branch"
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
          '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
          '"Metric Value"')


def _value(name):
    if name.startswith("gpu__time_duration"):
        return "usecond", "12.5"
    if "bytes" in name:
        return "Kbyte", "1,024.5"
    return "inst", "4,096"


def main(argv):
    if "--version" in argv:
        print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (build 1)")
        return 0
    if "--query-metrics" in argv:
        print("Metric Name    Metric Type   Metric Unit   Metric Description")
        for name in sorted({m.split(".")[0] for m in metric_names()} - {DROPPED}):
            print(f"{name:60s} Counter   inst   a metric")
        return 0
    if os.environ.get("FAKE_NCU_ARGS"):
        with open(os.environ["FAKE_NCU_ARGS"], "a") as handle:
            handle.write(json.dumps(argv) + "\n")
    log = argv[argv.index("--log-file") + 1]
    metrics = argv[argv.index("--metrics") + 1].split(",")
    app = argv[argv.index("kerncast.measure._ncu_child") - 2:]  # python -m module job
    code = subprocess.run(app).returncode
    job = json.loads(open(app[-1]).read())
    records = [json.loads(x) for x in open(job["manifest"]).read().splitlines()]
    lines = ["==PROF== Connected to process", HEADER]
    rid = 0
    for rec in records:
        if not rec.get("launched") or rec.get("status") != "ok":
            continue
        for name in metrics:
            unit, value = _value(name)
            lines.append(f'"{rid}","1","python3","host","{rec["entry"]}","1","7",'
                         f'"{rec["block"]}","{rec["grid"]}","0","9.0",'
                         f'"Command line profiler metrics","{name}","{unit}","{value}"')
        rid += 1
    with open(log, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
