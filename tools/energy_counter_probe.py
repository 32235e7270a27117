"""How often NVML's total-energy counter moves: polls it for 2 s on GPU 0 (read only) and
prints the gaps between its updates and the step of each (an H100: every 100 ms).

    python3 tools/energy_counter_probe.py
"""

from __future__ import annotations

import time

import pynvml


def main() -> None:
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    last = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    updates: list[tuple[float, int]] = []
    end = time.perf_counter() + 2.0
    while time.perf_counter() < end:
        energy = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        if energy != last:
            updates.append((time.perf_counter(), energy - last))
            last = energy
        time.sleep(0.0005)
    gaps = [round((b[0] - a[0]) * 1000, 1) for a, b in zip(updates, updates[1:])]
    print(f"counter updates in 2 s: {len(updates)}; gaps, ms: {gaps[:30]}; "
          f"steps, mJ: {[step for _, step in updates[:10]]}")


if __name__ == "__main__":
    main()
