"""The process Nsight Compute profiles: launch each (kernel, configuration) of a batch once.

Run as ``python -m kerncast.measure._ncu_child JOB.json``. The job names the backend,
the device, the seed, the corpus root, the prepared-inputs directory, the manifest
path and the items (kernel, size, tunables; or ``user``: one's own kernel and launch as
:func:`kerncast.core.launch_to_dict` writes them). For every item the child compiles,
uploads, launches once and synchronises, and appends a JSON line to the manifest
(``launched`` says whether the launch happened, so that ncu's i-th result can be
matched with the i-th launch). The first manifest line describes the backend.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import traceback
from pathlib import Path
from kerncast.corpus import get_kernel
from kerncast.measure._job import corpus_job, user_job
from kerncast.core import kernel_from_dict, launch_from_dict
from kerncast.measure._cuda_common import entry_symbol
from kerncast.measure._backend import LaunchError
from kerncast.measure._session import Failure, LaunchSession
from kerncast.measure._samples import resident_blocks, sampled_grid
from kerncast.measure._factory import make_backend

__all__ = ["main"]


def _write(handle, record: dict) -> None:
    handle.write(json.dumps(record, default=str) + "\n")
    handle.flush()


def _work(backend, item: dict, job: dict):
    """The measurement job of an item: one's own launch as written by the parent, or a
    corpus kernel's configuration."""
    if "user" in item:
        kernel = kernel_from_dict(item["user"]["kernel"])
        return user_job(kernel, launch_from_dict(item["user"]["launch"])), entry_symbol(kernel)
    root = Path(job["corpus_root"]) if job.get("corpus_root") else None
    kernel = get_kernel(item["kernel"], root)
    config = kernel.launch(item["size"], item.get("tunables") or {})
    return corpus_job(kernel, config, backend.language), kernel.entry


def _one(backend, item: dict, job: dict) -> dict:
    work, entry = _work(backend, item, job)
    config = work.launch
    record = {"kernel": work.name, "entry": entry, "config": work.columns["config"],
              "size": work.columns["size"], "launched": False, "status": "ok", "error": "",
              "block": str(tuple(config.block))}
    try:
        with LaunchSession(backend, work, seed=job.get("seed", 0),
                           prep_dir=job.get("prep_dir")) as session:
            record["resources"] = session.resources
            launch = _sampled(backend, session.launch, session.resources,
                              item.get("sample_k") or 0, record)
            record["grid"] = str(tuple(launch.grid))
            session.restore()
            backend.synchronize()
            record["launched"] = True
            backend.launch(session.compiled, launch, session.dev)
            backend.synchronize()
    except Failure as exc:
        record.update(status=exc.status, error=exc.error)
    except LaunchError as exc:
        record.update(status="launch_failed", error=str(exc))
    return record


def _sampled(backend, config, resources: dict, k: int, record: dict):
    """The launch of the first k·Psat·N_SM blocks (the whole launch when k is 0)."""
    if not k:
        record["blocks_launched"] = config.blocks
        return config

    psat = resident_blocks(backend, config, resources)
    grid = sampled_grid(tuple(config.grid), k * psat * backend.sm_count)
    record.update(psat=psat, blocks_launched=grid[0] * grid[1] * grid[2])
    return dataclasses.replace(config, grid=grid[:len(config.grid)])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job = json.loads(Path(argv[0]).read_text())

    with open(job["manifest"], "a") as manifest:
        # an SM count limits the launches to a green context of that many SMs
        backend = make_backend(job.get("backend", "cupy"), device=job.get("device"),
                               sm_count=job.get("sm_count"))
        _write(manifest, {"describe": backend.describe(), "device_key": backend.device_key,
                          "sm_count": backend.sm_count})
        for index, item in enumerate(job["items"]):
            try:
                record = _one(backend, item, job)
            except Exception as exc:  # noqa: BLE001 (one broken item must not stop the batch)
                record = {"kernel": item["kernel"], "launched": False, "status": "crash",
                          "error": f"{type(exc).__name__}: {exc}",
                          "trace": traceback.format_exc()[-1500:]}
            _write(manifest, {"index": index, **record})
            if record.get("status") == "launch_failed":
                return 3  # the context is unusable: the rest are retried in a new batch
    return 0


if __name__ == "__main__":
    sys.exit(main())
