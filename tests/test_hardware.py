"""GPU presets (chapters 1 and 3)."""
from __future__ import annotations

from dataclasses import replace

import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.model.hardware import GPUSpec, get_gpu, list_gpus

GB = 10**9


def test_presets_listed():
    assert list_gpus() == ["a40-48gb", "l40s-48gb", "a100-80gb", "h100-80gb", "h200-141gb"]
    assert kvsim.list_gpus() == list_gpus()


MiB = 2**20
GiB = 2**30


def test_memory_is_what_cuda_reports_with_the_datasheet_and_nvidia_smi_beside_it():
    """vLLM budgets from the CUDA runtime's total (deviceQuery's "Total amount of global
    memory"), not from the datasheet's decimal figure nor from nvidia-smi's listing."""
    expected = {  # name: (CUDA bytes, nvidia-smi MiB, datasheet GB)
        "a40-48gb": (47_608_692_736, 46_068, 48),
        "l40s-48gb": (47_576_711_168, 46_068, 48),
        "a100-80gb": (85_100_068_864, 81_920, 80),
        "h100-80gb": (85_017_755_648, 81_559, 80),
    }
    for name, (cuda, smi, sheet) in expected.items():
        g = get_gpu(name)
        assert g.memory_bytes == cuda, name
        assert g.nvidia_smi_mib == smi and g.datasheet_memory_bytes == sheet * GB, name
        # CUDA sees less than nvidia-smi lists (the driver's reservation), and the
        # GDDR6 cards lose 1/16 of 48 GiB to ECC
        assert g.memory_bytes < g.nvidia_smi_mib * MiB, name
    for name in ("a40-48gb", "l40s-48gb"):
        assert get_gpu(name).nvidia_smi_mib * MiB == pytest.approx(48 * GiB * 15 / 16, rel=0.001)
    # vLLM start-up logs on H100s print total_gpu_memory 79.11-79.33 GiB
    assert 79.1 <= get_gpu("h100-80gb").memory_bytes / GiB <= 79.3
    # H200: the total a vLLM log prints, 139.81 GiB (to 0.01 GiB)
    assert get_gpu("h200-141gb").memory_bytes / GiB == pytest.approx(139.81, abs=0.005)


def test_seed000_48gb_card_at_0_60_is_close_to_the_seeds_28_8_gb():
    """Seed 000: "48 GB x 0.60 = 28.8 GB". The A40's real 47.6 GB gives 28.57 GB."""
    g = get_gpu("a40-48gb")
    assert round(g.datasheet_memory_bytes * 0.60) == 28_800_000_000
    assert round(g.memory_bytes * 0.60) / GB == pytest.approx(28.57, abs=0.01)


def test_seed000_swap_of_1100_tokens_takes_about_30_ms_each_way_at_20_gbps():
    """Seed 000: 1,100 tokens x 0.5 MiB ~ 550 MB, ~30 ms each way at "an effective 20 GB/s"
    (a shared Gen4 link; the presets carry a clean Gen4 link's ~25 GB/s)."""
    nbytes = 1100 * 524_288
    assert nbytes == pytest.approx(550e6, rel=0.05)
    assert nbytes / 20e9 == pytest.approx(0.030, rel=0.05)
    assert get_gpu("a40-48gb").pcie_bytes_per_s == 25 * GB


def test_datasheet_figures_links_and_pcie_generations():
    a40, l40s, a100, h100, h200 = (get_gpu(n) for n in list_gpus())
    assert a40.hbm_bytes_per_s == 696 * GB and a40.peak_flops == pytest.approx(149.7e12, rel=1e-9)
    assert l40s.hbm_bytes_per_s == 864 * GB and l40s.peak_flops == pytest.approx(362.05e12, rel=1e-9)
    assert a100.hbm_bytes_per_s == 2_039 * GB and a100.peak_flops == 312 * 10**12
    assert h100.hbm_bytes_per_s == 3_350 * GB
    assert h100.peak_flops == pytest.approx(989.4e12, rel=1e-9)
    assert h200.hbm_bytes_per_s == 4_800 * GB and h200.peak_flops == h100.peak_flops
    # effective PCIe: Gen4 ~25 GB/s, Gen5 ~50 GB/s, below the nominal 32 / 64 GB/s per direction
    assert a40.pcie_bytes_per_s == l40s.pcie_bytes_per_s == a100.pcie_bytes_per_s == 25 * GB
    assert h100.pcie_bytes_per_s == h200.pcie_bytes_per_s == 50 * GB < 64 * GB
    # NVLink per direction where the board has it; PCIe otherwise
    assert a100.interconnect_bytes_per_s == 300 * GB and h100.interconnect_bytes_per_s == 450 * GB
    assert a40.interconnect_bytes_per_s == a40.pcie_bytes_per_s


def test_descriptions_cite_the_sources():
    for name in list_gpus():
        g = get_gpu(name)
        assert "dense" in g.description and "effective" in g.description, name
        assert "nvidia-smi" in g.description, name
        assert g.calibration, name


def test_custom_gpus_get_round_defaults_and_validate_efficiencies():
    custom = GPUSpec("my-card", 24 * GB, 1000 * GB, 100 * 10**12, 12 * GB, "measured")
    assert (custom.matmul_efficiency, custom.memory_efficiency) == (0.7, 0.8)
    assert custom.interconnect_bytes_per_s == custom.pcie_bytes_per_s
    assert "not calibrated" in custom.calibration
    with pytest.raises(KvsimError, match=r"gpu 'my-card': matmul_efficiency=0 is out of range"):
        replace(custom, matmul_efficiency=0)
    with pytest.raises(KvsimError, match=r"gpu 'my-card': kernel_latency_s=-1 is out of range"):
        replace(custom, kernel_latency_s=-1)


def test_fields_are_ints():
    for name in list_gpus():
        g = get_gpu(name)
        for f in ("memory_bytes", "hbm_bytes_per_s", "peak_flops", "pcie_bytes_per_s",
                  "datasheet_memory_bytes", "nvidia_smi_mib", "interconnect_bytes_per_s"):
            assert type(getattr(g, f)) is int


def test_get_gpu_accepts_spec_and_case():
    g = get_gpu("h100-80gb")
    assert get_gpu(g) is g
    assert get_gpu("H100-80GB") is g
    assert kvsim.get_gpu("h100-80gb") is g


def test_unknown_gpu_lists_valid_names():
    with pytest.raises(KvsimError) as exc:
        get_gpu("b200")
    msg = str(exc.value)
    assert "'b200'" in msg
    for name in list_gpus():
        assert name in msg
    with pytest.raises(KvsimError, match="gpu=None"):
        get_gpu(None)


def test_custom_gpu_validation():
    custom = GPUSpec("my-card", 24 * GB, 1000 * GB, 100 * 10**12, 12 * GB, "measured")
    assert get_gpu(custom).memory_bytes == 24 * GB
    with pytest.raises(KvsimError, match=r"memory_bytes=0 is out of range: expected an integer >= 1"):
        replace(custom, memory_bytes=0)
    whole = replace(custom, pcie_bytes_per_s=2.5e10)
    assert whole.pcie_bytes_per_s == 25 * GB and type(whole.pcie_bytes_per_s) is int
    with pytest.raises(KvsimError, match=r"pcie_bytes_per_s=1.5 is not a whole number"):
        replace(custom, pcie_bytes_per_s=1.5)
    with pytest.raises(KvsimError, match=r"peak_flops='1e15' has the wrong type"):
        replace(custom, peak_flops="1e15")
    with pytest.raises(KvsimError, match="name=''"):
        replace(custom, name="")
