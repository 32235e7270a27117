"""The ``counters`` experiment of a campaign: Nsight Compute batches into rows.

Items are profiled in batches (one ncu child per batch). Each launch the child made
is matched with ncu's result of the same rank, and the kernel name and grid are
checked. A batch that dies or times out leaves items without a result: those are
retried one per batch, so that one hanging kernel costs only its own row.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

from kerncast.corpus import get_kernel
from kerncast.measure._ncu import NcuBatch, NcuObserver, NcuResult, available_metrics
from kerncast.measure._plan import Item
from kerncast.measure._provenance import row_provenance
from kerncast.measure._run import launch_columns
from kerncast.core import kernel_to_dict, launch_to_dict
from kerncast.measure._cuda_common import entry_symbol
from kerncast._errors import KerncastError

__all__ = ["observer_for", "profile_job", "profile_sampled", "run_counters"]


def observer_for(out: Path) -> NcuObserver:
    """An observer whose metric set is checked against this GPU's ncu (cached in ``out``)."""
    observer = NcuObserver()
    cache = out / "ncu_metrics.json"
    version = observer.version
    available = None
    if cache.exists():
        saved = json.loads(cache.read_text())
        if saved.get("ncu_version") == version:
            available = set(saved["available"])
    if available is None:
        available = available_metrics(observer.ncu)
        cache.write_text(json.dumps({"ncu_version": version, "available": sorted(available)}))
    observer.check_metrics(available)
    return observer


def _row(campaign, item: Item, record: dict, result: NcuResult, batch: NcuBatch,
         observer: NcuObserver, clocks: tuple) -> dict:
    kernel = get_kernel(item.kernel, campaign.corpus_root)
    config = kernel.launch(item.size, dict(item.tunables))
    header = batch.describe or {}
    sms = int(batch.describe.get("sm_count", 0)) if batch.describe else 0
    row = launch_columns(kernel, config, item.language, campaign.device_key,
                         sms or campaign.total_sms)
    row.update(record.get("resources", {}))
    row.update(ncu_id=result.id, ncu_kernel_name=result.kernel_name,
               metrics_missing=",".join(observer.missing), status="ok", error="",
               sample_k=item.sample_k, psat=record.get("psat"),
               blocks_launched=record.get("blocks_launched", config.blocks))
    row.update({k: v for k, v in result.metrics.items() if k in observer.metrics})
    static = campaign._static(item)
    static.update({k: header[k] for k in ("device_name", "driver_version", "runtime_version")
                   if header.get(k)})
    static["backend"] = "ncu"
    static["tool_versions"] = {**static["tool_versions"], **header.get("tool_versions", {}),
                               "ncu": observer.version}
    row.update(row_provenance(static, clocks[0], clocks[1], campaign.seed))
    return row


def _resolve(campaign, batch_items: list[Item], batch: NcuBatch, observer: NcuObserver,
             clocks: tuple) -> list[Item]:
    """Write the rows of a batch; return the items left without an answer."""
    records = {m["index"]: m for m in batch.manifest}
    results = iter(batch.results)
    unresolved = []
    for index, item in enumerate(batch_items):
        record = records.get(index)
        if record is None:
            unresolved.append(item)
            continue
        if record.get("status") != "ok":
            campaign.failure(item, record.get("status", "crash"), record.get("error", ""))
            continue
        result = next(results, None)
        expected = (record.get("entry"), record.get("grid"))
        if result is None or (result.kernel_name, result.grid) != expected:
            got = f"{result.kernel_name} {result.grid}" if result else "nothing"
            campaign.failure(item, "profiler_failed",
                             f"Nsight Compute returned {got} for launch {index} "
                             f"({expected[0]} {expected[1]}); ncu said: {batch.log_tail[-600:]}")
            continue
        campaign._accept(item, [("counters", _row(campaign, item, record, result, batch,
                                                  observer, clocks))])
    return unresolved


def run_counters(campaign, items: list[Item], prep_dir: str | None) -> None:
    """Profile ``items`` in batches and commit their ``counters`` rows."""
    observer = getattr(campaign, "_ncu_observer", None) or observer_for(campaign.out)
    campaign._ncu_observer = observer
    # a batch runs in one profiled process, on one backend: one SM count per batch
    queue = [group[i:i + campaign.ncu_batch]
             for sms in sorted({i.sm_count or 0 for i in items})
             for group in [[i for i in items if (i.sm_count or 0) == sms]]
             for i in range(0, len(group), campaign.ncu_batch)]
    while queue and not campaign._past_stop():
        batch_items = queue.pop(0)
        job: dict[str, Any] = {
            "backend": campaign.backend if ":" in campaign.backend else "cupy",
            "device": campaign.device_arg, "seed": campaign.seed,
            "corpus_root": str(campaign.corpus_root) if campaign.corpus_root else None,
            "prep_dir": prep_dir, "sm_count": batch_items[0].sm_count,
            "items": [{"kernel": i.kernel, "size": i.size, "tunables": dict(i.tunables),
                       "sample_k": i.sample_k} for i in batch_items]}
        timeout = 60.0 + 30.0 * len(batch_items)
        if campaign._hard is not None:
            timeout = max(1.0, min(timeout, campaign._hard - time.monotonic()))
        entries = sorted({get_kernel(i.kernel, campaign.corpus_root).entry for i in batch_items})
        before = campaign._monitor.clocks()
        batch = observer.profile(job, entries, timeout)
        clocks = (before, campaign._monitor.clocks())
        if batch.describe:
            campaign._describe.update({k: v for k, v in batch.describe.items()
                                       if k not in ("tool_versions", "sm_count", "device_key")})
        left = _resolve(campaign, batch_items, batch, observer, clocks)
        if not left:
            continue
        if batch.timed_out and campaign._hard is not None and time.monotonic() >= campaign._hard - 1:
            campaign._deadline_hit = True  # cut by the deadline: resumed next time, no rows
            return
        if len(batch_items) > 1:
            queue = [[i] for i in left] + queue
            continue
        status = "timeout" if batch.timed_out else "crash"
        campaign.failure(left[0], status, f"ncu exited {batch.returncode}: "
                         f"{batch.log_tail[-800:]}" if not batch.timed_out
                         else f"ncu did not finish within {math.ceil(timeout)} s")


def profile_sampled(backend, device: str | None, kernel, config, ks: tuple[int, ...], *,
                    seed: int = 0, timeout: float = 300.0,
                    child_backend: str | None = None) -> list[dict]:
    """Counters of sampled launches of one configuration, outside a campaign.

    One Nsight Compute child (on ``backend``'s kind of backend and ``device``) launches
    the first ``k·Psat·N_SM`` blocks for each ``k`` in ``ks``, Psat as the sampled runs
    define it; returns one ``counters`` row per ``k`` with the launch columns, the
    compiler statistics and the metrics. A launch ncu could not profile raises
    :class:`~kerncast._errors.KerncastError` with ncu's words. ``child_backend`` names
    the child's backend where ``backend.name`` does not (``module:Class``).
    """
    from kerncast.measure._job import corpus_job  # noqa: PLC0415 (cycle)

    job = corpus_job(kernel, config, backend.language)
    item = {"kernel": kernel.name, "size": config.size, "tunables": dict(config.tunables)}
    return _profile(backend, device, job, item, kernel.entry, ks, seed=seed, timeout=timeout,
                    child_backend=child_backend,
                    corpus_root=str(kernel.app.directory.parent))


def profile_job(backend, device: str | None, job, ks: tuple[int, ...], *, seed: int = 0,
                timeout: float = 300.0, child_backend: str | None = None,
                sm_count: int | None = None) -> list[dict]:
    """:func:`profile_sampled` of a :class:`~kerncast.measure.Job`: a corpus launch, or one's
    own, written for the profiled process (arrays with data as ``.npy`` files); with
    ``sm_count``, one's own launch is profiled in a green context of that many SMs."""
    if job.corpus is not None:
        return profile_sampled(backend, device, *job.corpus, ks, seed=seed, timeout=timeout,
                               child_backend=child_backend)
    with tempfile.TemporaryDirectory(prefix="kerncast-launch-") as folder:
        item = {"kernel": job.name, "user": {"kernel": kernel_to_dict(job.kernel),
                                             "launch": launch_to_dict(job.launch, folder)}}
        return _profile(backend, device, job, item, entry_symbol(job.kernel), ks, seed=seed,
                        timeout=timeout, child_backend=child_backend, sm_count=sm_count)


def _profile(backend, device: str | None, job, item: dict, entry: str, ks: tuple[int, ...], *,
             seed: int, timeout: float, child_backend: str | None,
             corpus_root: str | None = None, sm_count: int | None = None) -> list[dict]:
    observer = NcuObserver()
    observer.check_metrics(available_metrics(observer.ncu))
    request = {"backend": child_backend or backend.name, "device": device, "seed": seed,
               "corpus_root": corpus_root, "prep_dir": None,
               "items": [{**item, "sample_k": k} for k in ks],
               **({"sm_count": sm_count} if sm_count else {})}
    batch = observer.profile(request, [entry], timeout)
    records = {m["index"]: m for m in batch.manifest}
    results = iter(batch.results)
    rows = []
    for index, k in enumerate(ks):
        record = records.get(index) or {}
        result = next(results, None) if record.get("status") == "ok" else None
        if result is None or (result.kernel_name, result.grid) != (record.get("entry"),
                                                                  record.get("grid")):
            why = record.get("error") or ("timed out" if batch.timed_out
                                          else f"exit code {batch.returncode}")
            raise KerncastError(f"Nsight Compute returned no counters for the sample k={k} of "
                                f"{job.name} ({why}); ncu said: {batch.log_tail[-400:]}")
        row = launch_columns(job, None, backend.language, backend.device_key,
                             backend.sm_count)
        row.update(record.get("resources", {}))
        row.update(status="ok", error="", sample_k=k, psat=record.get("psat"),
                   blocks_launched=record.get("blocks_launched"),
                   metrics_missing=",".join(observer.missing))
        row.update({m: v for m, v in result.metrics.items() if m in observer.metrics})
        rows.append(row)
    return rows
