"""GPU presets (chapters 1 and 3)."""
from __future__ import annotations

from dataclasses import replace

import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.hardware import GPUSpec, get_gpu, list_gpus

GB = 10**9


def test_presets_listed():
    assert list_gpus() == ["l40s-48gb", "a100-80gb", "h100-80gb", "h200-141gb"]
    assert kvsim.list_gpus() == list_gpus()


def test_seed000_48gb_card_is_decimal_with_effective_20_gbps_pcie():
    """Seed 000 ("KV Cache Preemption in vLLM"): a 48 GB GPU, PCIe at "an effective 20 GB/s"."""
    g = get_gpu("l40s-48gb")
    assert g.memory_bytes == 48 * 10**9
    assert g.pcie_bytes_per_s == 20 * GB
    assert g.hbm_bytes_per_s == 864 * GB
    assert g.peak_flops == pytest.approx(362e12, rel=0.001)
    # 28.8 GB in play at 0.60 only with the decimal reading
    assert round(g.memory_bytes * 0.60) == 28_800_000_000


def test_seed000_swap_of_1100_tokens_takes_about_30_ms_each_way():
    """Seed 000: 1,100 tokens x 0.5 MiB ~ 550 MB, ~30 ms each way at an effective 20 GB/s."""
    nbytes = 1100 * 524_288
    assert nbytes == pytest.approx(550e6, rel=0.05)
    seconds = nbytes / get_gpu("l40s-48gb").pcie_bytes_per_s
    assert seconds == pytest.approx(0.030, rel=0.05)


def test_seed003_80gb_cards_are_decimal():
    """Seed 003 ("Throughput collapse under load"): "80 GB H100 at 0.90" is 72 * 10**9 bytes usable."""
    for name in ("a100-80gb", "h100-80gb"):
        assert get_gpu(name).memory_bytes == 80 * 10**9
    assert round(get_gpu("h100-80gb").memory_bytes * 0.90) == 72 * GB
    assert get_gpu("h200-141gb").memory_bytes == 141 * GB


def test_datasheet_figures_and_pcie_generations():
    a100, h100, h200 = (get_gpu(n) for n in ("a100-80gb", "h100-80gb", "h200-141gb"))
    assert a100.hbm_bytes_per_s == 2_039 * GB and a100.peak_flops == 312 * 10**12
    assert h100.hbm_bytes_per_s == 3_350 * GB
    assert h100.peak_flops == pytest.approx(989e12, rel=0.001)
    assert h200.hbm_bytes_per_s == 4_800 * GB and h200.peak_flops == h100.peak_flops
    # effective PCIe: Gen4 ~25 GB/s, Gen5 ~50 GB/s, below the nominal 32 / 64 GB/s per direction
    assert a100.pcie_bytes_per_s == 25 * GB < 32 * GB
    assert h100.pcie_bytes_per_s == h200.pcie_bytes_per_s == 50 * GB < 64 * GB


def test_descriptions_cite_datasheet_and_say_effective():
    for name in list_gpus():
        d = get_gpu(name).description
        assert "datasheet" in d and "effective" in d and "dense" in d, name


def test_fields_are_ints():
    for name in list_gpus():
        g = get_gpu(name)
        for f in ("memory_bytes", "hbm_bytes_per_s", "peak_flops", "pcie_bytes_per_s"):
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
