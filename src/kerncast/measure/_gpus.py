"""A campaign over several GPUs of one machine: one worker per GPU, each pinned to it.

The pending items are grouped by kernel into shards of about equal estimated cost (the
host's work on an item's buffers: generated, uploaded and checked), a few shards per
GPU so that the GPUs finish together; the shards run on a :mod:`kerncast.execute` executor with
one worker per GPU (``pool``: processes pinned through ``CUDA_VISIBLE_DEVICES``; ``ray``:
each GPU a Ray resource). Each shard is an ordinary campaign over its kernels, in its
own measuring child, writing its own part files into the one dataset directory, so a
shard's rows are exactly what one GPU would record, and a kill loses at most the items
in flight. A shard whose worker died is retried once by the executor; its items still
missing afterwards become failure rows. Every GPU is checked against ``--device``
before anything runs.

A campaign on a CPU (PoCL) runs the same way over ``slices`` of the machine's cores: one
worker per slice, each measuring a device of that many cores (see
:func:`kerncast.execute.pin_cores`), so that the workers never share a core.
"""

from __future__ import annotations

import os
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from kerncast._errors import InputError, ToolchainError
from kerncast.execute import CORES_VARIABLE, Failed, get_executor
from kerncast.measure._campaign import Campaign, CampaignResult
from kerncast.measure._cuda_common import resolve_device_key
from kerncast.measure._nvml import gpu_count, gpu_name
from kerncast.measure._plan import Item, Unit

__all__ = ["SHARDS_PER_GPU", "parse_gpus", "run_on_gpus", "shards_of"]

SHARDS_PER_GPU = 2
#: The buffer bytes an item's host work costs as much as its fixed part (about 25 ms on
#: an H200's host, against about 0.15 s per 4 MiB of buffers to generate, upload and check).
FIXED_BYTES = 4 << 20


def parse_gpus(spec: str | Sequence[str] | None) -> tuple[str, ...]:
    """``all``, or GPU indices / UUIDs separated by commas, as a tuple of names."""
    if spec is None:
        return ()
    names = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec)]
    names = [n for n in names if n]
    if names == ["all"]:
        count = gpu_count()
        if count is None:
            raise ToolchainError("--gpus all needs NVML to count the GPUs (pip install "
                                 "nvidia-ml-py); or list them: --gpus 0,1")
        return tuple(str(i) for i in range(count))
    bad = [n for n in names if not (n.isdigit() or n.startswith(("GPU-", "MIG-")))]
    if bad or not names:
        raise InputError(f"--gpus {','.join(names) or spec!r}: give 'all', or GPU indices "
                         "(0,1) or UUIDs (GPU-...) separated by commas")
    if len(set(names)) != len(names):
        raise InputError(f"--gpus {','.join(names)} names a GPU twice; list each once")
    return tuple(names)


def item_cost(unit: Unit, item: Item) -> float:
    """A relative cost: a fixed part plus the item's buffer bytes. An item's wall time
    is the host's (an SM sweep's items of one kernel took the same time at 8 and at 96
    SMs on an H200), and varies 50-fold between kernels with their buffers."""
    config = unit.kernel.launch(unit.size, dict(item.tunables))
    return 1.0 + unit.kernel.buffer_bytes(config) / FIXED_BYTES


def shards_of(units: list[Unit], gpus: int,
              per_gpu: int = SHARDS_PER_GPU) -> list[list[str]]:
    """Kernel names in shards of about equal cost (longest first into the lightest
    shard), the costliest shard first."""
    cost: dict[str, float] = defaultdict(float)
    for unit in units:
        cost[unit.kernel.name] += sum(item_cost(unit, i) for i in unit.items)
    count = max(1, min(len(cost), per_gpu * gpus))
    shards: list[list[str]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for name in sorted(cost, key=lambda n: (-cost[n], n)):
        lightest = loads.index(min(loads))
        shards[lightest].append(name)
        loads[lightest] += cost[name]
    order = sorted(range(count), key=lambda i: -loads[i])
    return [sorted(shards[i]) for i in order if shards[i]]


def _worker_name() -> str:
    """The GPU this worker is pinned to, or its PID on a slice of the cores."""
    if os.environ.get(CORES_VARIABLE):
        return f"worker {os.getpid()}"
    return f"GPU {os.environ.get('CUDA_VISIBLE_DEVICES', '')}"


def _measure_shard(shared: dict[str, Any], kernels: list[str]) -> dict[str, Any]:
    """One shard, in a worker pinned to its GPU or slice: a campaign over ``kernels``."""
    gpu = _worker_name()
    end_at = shared["end_at"]
    left = None if end_at is None else end_at - time.time()
    if left is not None and left < 15:
        return {"gpu": gpu, "kernels": kernels, "measured": 0, "skipped": True}
    campaign = Campaign(**shared["options"], kernels=kernels, deadline_s=left, compact=False,
                        log=False)
    result = campaign.run()
    return {**result.to_dict(), "gpu": gpu, "kernels": kernels, "skipped": False}


def _check_gpus(campaign: Campaign, gpus: Sequence[str]) -> None:
    """Every GPU must be the ``--device`` (by NVML's name; skipped without NVML)."""
    if campaign.kind is None or campaign.kind.monitor != "nvml" or campaign.device_arg is None:
        return
    for gpu in gpus:
        name = gpu_name(gpu)
        if name is None:
            continue
        try:
            resolve_device_key(name, campaign.device_arg)
        except InputError as exc:
            raise InputError(f"GPU {gpu}: {exc}") from None


def run_on_gpus(campaign: Campaign, gpus: Sequence[str], executor: str = "pool",
                address: str | None = None,
                progress: Callable[[int, int, str], None] | None = None,
                slices: int = 0) -> CampaignResult:
    """Run ``campaign`` over ``gpus``, or over ``slices`` of the cores (see the module);
    one result for all of them."""
    campaign.check_tools()
    _check_gpus(campaign, gpus)
    units, notes, planned = campaign.pending()
    total = sum(len(u.items) for u in units)
    workers = len(gpus) or slices
    shards = shards_of(units, workers)
    run = get_executor(executor, gpus=list(gpus) or None, address=address,
                       workers=None if gpus else slices, slices=not gpus)
    started, report = time.monotonic(), progress or (lambda done, total, what: None)
    campaign.begin(total, report)
    campaign.log_session("started", planned=planned, pending=total, gpus=list(gpus),
                         slices=slices or None, executor=executor, shards=len(shards))
    end_at = None if not campaign.deadline_s else time.time() + campaign.deadline_s
    shared = {"options": campaign.options(), "end_at": end_at}
    done, rows, statuses, stopped, per_gpu = 0, defaultdict(int), defaultdict(int), False, {}
    for index, outcome in run.map(_measure_shard, shards, shared):
        if isinstance(outcome, Failed):
            _record_failed(campaign, shards[index], outcome.error)
            continue
        done += outcome["measured"]
        stopped |= bool(outcome.get("stopped_by_deadline") or outcome["skipped"])
        for table, n in outcome.get("rows", {}).items():
            rows[table] += n
        for status, n in outcome.get("statuses", {}).items():
            statuses[status] += n
        gpu = per_gpu.setdefault(outcome["gpu"], {"items": 0, "shards": 0, "wall_s": 0.0,
                                                  "timed": 0})
        gpu["items"] += outcome["measured"]
        gpu["shards"] += 1
        gpu["wall_s"] += outcome.get("item_wall_s", 0.0)
        gpu["timed"] += outcome.get("items_timed", 0)
        report(done, total, f"{outcome['gpu']}: {', '.join(shards[index])}")
    mine, my_statuses = campaign.counts()  # the failure rows written here
    for table, n in mine.items():
        rows[table] += n
    for status, n in my_statuses.items():
        statuses[status] += n
    remaining = sum(len(u.items) for u in campaign.pending()[0])
    notes = [*notes, *(_gpu_note(g, v) for g, v in sorted(per_gpu.items()))]
    result = CampaignResult(str(campaign.out), planned, total - remaining, remaining,
                            dict(rows), dict(statuses), stopped and remaining > 0, False,
                            False, time.monotonic() - started, notes,
                            sum(v["wall_s"] for v in per_gpu.values()),
                            sum(v["timed"] for v in per_gpu.values()))
    if remaining == 0 and campaign.compact:
        from kerncast.data import compact  # noqa: PLC0415 (on use: pandas)

        compact(campaign.out)
        result.compacted = True
    campaign.log_session("ended", result=result.to_dict())
    return result


def _gpu_note(gpu: str, done: dict[str, Any]) -> str:
    """What one GPU did, with the mean wall time of its items (a host busy with the other
    GPUs' items shows there as a longer mean)."""
    note = f"{gpu}: {done['items']} items in {done['shards']} shards"
    if done["timed"]:
        note += f", {done['wall_s'] / done['timed']:.3f} s wall time per item"
    return note


def _record_failed(campaign: Campaign, kernels: list[str], error: str) -> None:
    """The items of a shard whose worker failed, still unrecorded, as crash rows."""
    for unit in campaign.pending()[0]:
        if unit.kernel.name in kernels:
            for item in unit.items:
                campaign.failure(item, "crash", f"the worker measuring it failed: {error}")
    campaign.flush()
