"""The shipped device catalogue: every GPU the project needs, unique names, and
occupancy and peak rates that follow from documented facts.

The expected numbers below are worked out by hand from the CUDA programming guide's
limits, the occupancy calculator's allocation rules, AMD's occupancy rule (waves per
SIMD = min(slots, VGPR file / VGPRs rounded to the granule)) and the vendors'
datasheets; each test says which fact it rests on.
"""

from collections import defaultdict

import pytest

from kerncast.devices import get_device, list_devices, occupancy
from kerncast.devices._catalog import _normalise

# Short name a user types -> the spec it must resolve to.
REQUESTED = {
    # GPUs of the seed papers
    "gtx280": "gtx-280",
    "gtx480": "gtx-480",
    "gtx580": "gtx-580",
    "gtx660ti": "gtx-660-ti",
    "gtx680": "gtx-680",
    "c2050": "tesla-c2050",
    "k20x": "tesla-k20xm",
    "k20xm": "tesla-k20xm",
    "gtx-titan": "gtx-titan",
    "k600": "quadro-k600",
    "gtx645": "gtx-645",
    "k620": "quadro-k620",
    "940m": "geforce-940m",
    "hd6970": "radeon-hd-6970",
    "hd7970": "radeon-hd-7970",
    # current GPUs
    "v100": "v100-sxm2-32gb",
    "t4": "t4",
    "a100": "a100-40gb",
    "a100-80gb": "a100-80gb",
    "a10": "a10",
    "l4": "l4",
    "l40s": "l40s",
    "h100": "h100-sxm",
    "h100-pcie": "h100-pcie",
    "h200": "h200",
    "b200": "b200",
    "mi250x": "mi250x",
    "mi300x": "mi300x",
}

# Names the drivers report (cudaGetDeviceProperties / nvidia-smi, HIP).
DRIVER_NAMES = {
    "Tesla V100-SXM2-32GB": "v100-sxm2-32gb",
    "Tesla T4": "t4",
    "NVIDIA A100-SXM4-40GB": "a100-40gb",
    "NVIDIA A100-SXM4-80GB": "a100-80gb",
    "NVIDIA A10": "a10",
    "NVIDIA L4": "l4",
    "NVIDIA L40S": "l40s",
    "NVIDIA H100 PCIe": "h100-pcie",
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA B200": "b200",
    "Tesla K20Xm": "tesla-k20xm",
    "GeForce GTX 680": "gtx-680",
    "AMD Instinct MI300X": "mi300x",
}


@pytest.mark.parametrize("alias, key", sorted(REQUESTED.items()))
def test_every_requested_gpu_resolves_by_a_short_alias(alias, key):
    assert get_device(alias).key == key


@pytest.mark.parametrize("name, key", sorted(DRIVER_NAMES.items()))
def test_driver_names_resolve(name, key):
    assert get_device(name).key == key


def test_every_shipped_spec_is_requested():
    assert {d.key for d in list_devices()} == set(REQUESTED.values())


def test_names_and_aliases_are_unique_across_specs():
    owners = defaultdict(set)
    for dev in list_devices():
        for label in (dev.key, dev.name, *dev.aliases):
            owners[_normalise(label)].add(dev.key)
    shared = {label: keys for label, keys in owners.items() if len(keys) > 1}
    assert not shared


def test_ptx_targets_match_the_compute_capability():
    for dev in list_devices():
        if dev.vendor == "nvidia":
            assert dev.ptx_target == "sm_" + dev.compute_capability.replace(".", "")
        else:
            assert dev.ptx_target is None and dev.arch_number is None


@pytest.mark.parametrize(
    "key, blocks",
    # CUDA guide: 8 resident blocks on 1.x/2.x, 16 on 3.x and 7.5 and 8.6, 24 on 8.9,
    # 32 on 5.x, 7.0, 8.0, 9.0, 10.0.
    [("gtx280", 8), ("gtx480", 8), ("c2050", 8), ("gtx680", 16), ("k20x", 16), ("k620", 32),
     ("v100", 32), ("t4", 16), ("a100", 32), ("a10", 16), ("l4", 24), ("l40s", 24),
     ("h100-pcie", 32), ("b200", 32)],
)
def test_resident_block_limit_per_compute_capability(key, blocks):
    assert get_device(key).limits.blocks_per_sm == blocks


def test_v100_two_blocks_of_1024_fill_an_sm():
    # CC 7.0: 2048 threads per SM, so two 1024-thread blocks; 32 registers x 2048 threads
    # = 65536, exactly the register file.
    occ = occupancy("v100", 1024, 32, 0)
    assert (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy) == (2, 64, 1.0)


def test_k20xm_256_threads_32_registers_gives_8_blocks():
    # CC 3.5: 8 warps per block, 64 warps per SM -> 8 blocks; 32 x 32 = 1024 registers per
    # warp, 8192 per block, 65536 / 8192 = 8; the 16-block limit does not bind.
    occ = occupancy("k20x", 256, 32, 0)
    assert (occ.blocks_per_sm, occ.warps_per_sm * 32) == (8, 2048)


def test_gtx680_small_blocks_hit_the_16_block_limit():
    # CC 3.0 holds at most 16 blocks: 64-thread blocks reach 32 of 64 warps.
    occ = occupancy("gtx680", 64, 16, 0)
    assert (occ.blocks_per_sm, occ.limiting, occ.occupancy) == (16, "blocks", 0.5)


def test_gtx280_registers_are_allocated_per_block():
    # CC 1.3 (occupancy calculator): a 256-thread block of 24-register threads holds
    # ceil(24 x 32 x 8, 512) = 6144 registers; 16384 / 6144 -> 2 blocks, 16 of 32 warps.
    occ = occupancy("gtx280", 256, 24, 0)
    assert (occ.blocks_per_sm, occ.limiting, occ.occupancy) == (2, "registers", 0.5)
    full = occupancy("gtx280", 128, 16, 0)  # 8 blocks x 4 warps = 32 warps, 16384 registers
    assert (full.blocks_per_sm, full.occupancy) == (8, 1.0)


def test_fermi_seed_example_holds_on_the_gtx480():
    # Sampling seed (GTX 580, same CC 2.0 limits): 256 work-items with 20 registers give
    # 6 resident work-groups (48 warps).
    assert occupancy("gtx480", 256, 20, 0).blocks_per_sm == 6


def test_t4_holds_1024_threads():
    # CC 7.5: 1024 threads (32 warps) and 16 blocks per SM.
    assert occupancy("t4", 1024, 32, 0).blocks_per_sm == 1
    small = occupancy("t4", 32, 32, 0)
    assert (small.blocks_per_sm, small.occupancy) == (16, 0.5)


def test_a100_reserves_1_kib_of_shared_memory_per_block():
    # CC 8.0: 164 KB of shared memory per SM and 1 KB reserved per block:
    # (48 KB + 1 KB) per block -> floor(167936 / 50176) = 3 blocks.
    occ = occupancy("a100", 128, 32, 48 * 1024)
    assert (occ.blocks_per_sm, occ.limiting) == (3, "shared_memory")


def test_ada_holds_24_blocks_and_ampere_ga10x_16():
    # CC 8.9 allows 24 resident blocks, CC 8.6 16; both hold 1536 threads.
    assert occupancy("l4", 32, 16, 0).blocks_per_sm == 24
    assert occupancy("a10", 32, 16, 0).blocks_per_sm == 16
    assert occupancy("l40s", 512, 32, 0).blocks_per_sm == 3


def test_b200_block_may_use_227_kib_of_shared_memory():
    # Blackwell tuning guide: 228 KB per SM, 1 KB reserved, so one block of 227 KB.
    dev = get_device("b200")
    assert dev.limits.shared_per_block_optin == 227 * 1024
    assert occupancy(dev, 256, 32, 227 * 1024).blocks_per_sm == 1


@pytest.mark.parametrize(
    "vgprs, groups",
    # GCN occupancy table (CLRX): 24 VGPRs -> 10 waves per SIMD, 84 -> 3, 128 -> 2; a
    # 256-work-item group is 4 wavefronts, one per SIMD.
    [(24, 10), (84, 3), (128, 2), (256, 1)],
)
def test_hd7970_waves_per_simd_follow_the_vgpr_file(vgprs, groups):
    occ = occupancy("hd7970", 256, vgprs, 0)
    assert occ.blocks_per_sm == groups
    assert occ.warps_per_sm == 4 * groups


@pytest.mark.parametrize("key", ["mi250x", "mi300x"])
def test_cdna_has_8_waves_per_simd_and_a_512_register_lane(key):
    # CDNA 2/3: 8 wave slots per SIMD, 512 VGPRs (incl. AccVGPRs) per lane, granule 8.
    assert occupancy(key, 256, 64, 0).warps_per_sm == 32  # 512 / 64 = 8 per SIMD
    assert occupancy(key, 256, 128, 0).warps_per_sm == 16  # 4 per SIMD
    # A 1024-work-item group puts 4 wavefronts on each SIMD: at most 128 VGPRs each.
    assert occupancy(key, 1024, 128, 0).blocks_per_sm == 1
    assert occupancy(key, 1024, 136, 0).blocks_per_sm == 0


def test_geforce_and_tesla_fp64_rates_differ():
    # CUDA guide / datasheets: GeForce GF100 and GK104 run fp64 at 1/8 and 1/24 rate,
    # Tesla GF100 and GK110 at 1/2 and 1/3.
    assert get_device("gtx480").throughput.fp64 == 4
    assert get_device("c2050").throughput.fp64 == 16
    assert get_device("gtx680").throughput.fp64 == 8
    assert get_device("k20x").throughput.fp64 == 64


@pytest.mark.parametrize(
    "key, fp32_tflops, fp64_tflops",
    # Datasheet peaks (vector, non-tensor; AMD fp32 without packed math), which round to
    # two or three digits.
    [("v100", 15.7, 7.8), ("t4", 8.1, None), ("a100", 19.5, 9.7), ("a100-80gb", 19.5, 9.7),
     ("a10", 31.2, None), ("l4", 30.3, None), ("l40s", 91.6, None), ("h100-pcie", 51, 26),
     ("c2050", 1.03, 0.515), ("hd7970", 3.79, 0.947), ("hd6970", 2.7, None),
     ("mi250x", 47.9 / 2, 47.9 / 2), ("mi300x", 81.7, 81.7)],
)
def test_peak_rates_match_the_datasheets(key, fp32_tflops, fp64_tflops):
    dev = get_device(key)
    assert dev.peak_fp32_gflops / 1e3 == pytest.approx(fp32_tflops, rel=0.02)
    if fp64_tflops is not None:
        assert dev.peak_fp64_gflops / 1e3 == pytest.approx(fp64_tflops, rel=0.02)


@pytest.mark.parametrize(
    "key, gbs",
    # Datasheet bandwidth = bus width x data rate; checks bus and clock agree with it.
    [("gtx280", 141.7), ("gtx480", 177.4), ("gtx680", 192.2), ("hd7970", 264), ("hd6970", 176),
     ("a100-80gb", 2039), ("mi250x", 1638.4)],
)
def test_bus_width_and_memory_clock_give_the_datasheet_bandwidth(key, gbs):
    mem = get_device(key).memory
    # GDDR5 (NVIDIA's quoted clock) and HBM are double data rate on the quoted clock;
    # GDDR3 likewise; TechPowerUp-style GDDR5 clocks are quad rate.
    per_pin = {"gtx280": 2, "gtx480": 2, "gtx680": 4, "hd7970": 4, "hd6970": 4,
               "a100-80gb": 2, "mi250x": 2}[key]
    derived = mem.bus_width_bits / 8 * mem.clock_mhz * per_pin / 1e3
    assert derived == pytest.approx(gbs, rel=0.01)
    assert mem.peak_bandwidth_gbs == pytest.approx(gbs, rel=0.001)


def test_an_alias_claimed_by_two_spec_files_is_refused(tmp_path, monkeypatch):
    """Names are indexed from the TOML alone; a clash names both files."""
    from kerncast import InputError
    from kerncast.devices import _catalog

    shipped = (_catalog.SPEC_DIR / "h100-sxm.toml").read_text()
    for stem in ("gpu-a", "gpu-b"):  # the same spec under two keys: its aliases clash
        (tmp_path / f"{stem}.toml").write_text(shipped)
    monkeypatch.setattr(_catalog, "SPEC_DIR", tmp_path)
    _catalog._index.cache_clear()
    try:
        with pytest.raises(InputError, match=r"is claimed by both gpu-a.toml and gpu-b.toml"):
            get_device("h100")
    finally:
        _catalog._index.cache_clear()


def test_the_index_reads_each_specs_top_level_keys_as_the_whole_toml_gives_them():
    import tomllib

    from kerncast.devices import _catalog

    for path in sorted(_catalog.SPEC_DIR.glob("*.toml")):
        whole = tomllib.loads(path.read_text())
        top = _catalog._top_level(path.read_text())
        assert {k: v for k, v in whole.items() if not isinstance(v, dict)} == top, path.name


def test_top_level_keys_whose_text_opens_a_line_with_a_bracket_are_read_whole():
    from kerncast.devices import _catalog

    text = 'key = "x"\nnote = """two\n[lines]"""\naliases = ["y"]\n\n[compute]\nsm_count = 2\n'
    top = _catalog._top_level(text)
    assert top["aliases"] == ["y"] and top["note"] == "two\n[lines]"
