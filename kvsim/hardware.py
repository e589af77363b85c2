"""GPU presets: memory, HBM bandwidth, tensor FLOPS and the effective PCIe link.

Explained in chapter 1, *Bytes per token and capacity* (memory) and chapter 3,
*Swap versus recompute* (bandwidths and the PCIe link).

Memory sizes are **decimal** (``48 GB = 48 * 10**9`` bytes), the way the seed
articles and the datasheets read them: seed 000 ("KV Cache Preemption in
vLLM") puts 28.8 GB in play on "a 48 GB GPU" at 0.60, and seed 003
("Throughput collapse under load") reads "an 80 GB H100 at 0.90" as leaving
"~50 GiB of KV" after ~16 GB of weights and a few GB of activations, which is
80 * 10**9 bytes, not 80 GiB. (What CUDA reports as total memory on a real
board differs from the marketing figure; kvsim follows the seeds so their
worked examples reproduce. Pass a :class:`GPUSpec` of your own for a measured
figure.)

Bandwidth and FLOPS are the datasheet **peaks**: ``hbm_bytes_per_s`` is the
memory bandwidth NVIDIA lists and ``peak_flops`` the dense (no 2:4 sparsity)
FP16/BF16 tensor-core rate. The cost model applies its own efficiency factors
to them. ``pcie_bytes_per_s`` is different: it is the **effective** one-way
host<->device rate a pinned-memory copy reaches, well under the link's
nominal rate (PCIe Gen4 x16 is 32 GB/s per direction nominal, about 25 GB/s
in practice; Gen5 x16 is 64 GB/s nominal, about 50 GB/s in practice). Seed
000 uses "an effective 20 GB/s" for its 48 GB card, which is what the
``l40s-48gb`` preset carries (a Gen4 link shared with other traffic).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from .errors import KvsimError, check_int

__all__ = ["GPUSpec", "get_gpu", "list_gpus"]

_G = 10**9
_T = 10**12


@dataclass(frozen=True)
class GPUSpec:
    """One GPU (explained in chapters 1 and 3).

    ``memory_bytes`` is decimal device memory; ``hbm_bytes_per_s`` the peak
    device-memory bandwidth; ``peak_flops`` the dense FP16/BF16 tensor peak;
    ``pcie_bytes_per_s`` the EFFECTIVE host<->device copy rate in one
    direction (what swap pays); ``description`` says where the figures come from.
    """

    name: str
    memory_bytes: int
    hbm_bytes_per_s: int
    peak_flops: int
    pcie_bytes_per_s: int
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise KvsimError(f"name={self.name!r} is not valid: expected a non-empty string")
        for field in ("memory_bytes", "hbm_bytes_per_s", "peak_flops", "pcie_bytes_per_s"):
            value = getattr(self, field)
            if isinstance(value, str):
                raise KvsimError(f"gpu {self.name!r}: {field}={value!r} has the wrong type: "
                                 f"expected an integer >= 1")
            # whole floats such as 25e9 are accepted and stored as int
            object.__setattr__(self, field, check_int(f"gpu {self.name!r}: {field}", value, min=1))
        if not isinstance(self.description, str):
            raise KvsimError(f"gpu {self.name!r}: description={self.description!r} is not "
                             f"valid: expected a string")

    def to_dict(self) -> dict:
        """The fields as a plain dict (for JSON output)."""
        return asdict(self)


_PRESETS: dict[str, GPUSpec] = {g.name: g for g in (
    GPUSpec(
        name="l40s-48gb",
        memory_bytes=48 * _G,
        hbm_bytes_per_s=864 * _G,
        peak_flops=362_050 * _G,
        pcie_bytes_per_s=20 * _G,
        description=("NVIDIA L40S datasheet: 48 GB GDDR6, 864 GB/s, FP16/BF16 tensor 362.05 "
                     "TFLOPS dense (733 with sparsity), PCIe Gen4 x16 (32 GB/s per direction "
                     "nominal). PCIe set to seed 000's effective 20 GB/s. The seeds' 48 GB card."),
    ),
    GPUSpec(
        name="a100-80gb",
        memory_bytes=80 * _G,
        hbm_bytes_per_s=2_039 * _G,
        peak_flops=312 * _T,
        pcie_bytes_per_s=25 * _G,
        description=("NVIDIA A100 80GB SXM datasheet: 80 GB HBM2e, 2,039 GB/s, BF16 tensor "
                     "312 TFLOPS dense (624 with sparsity), PCIe Gen4 x16: ~25 GB/s effective "
                     "of 32 GB/s nominal per direction. Memory read as decimal 80 GB, as seed 003 does."),
    ),
    GPUSpec(
        name="h100-80gb",
        memory_bytes=80 * _G,
        hbm_bytes_per_s=3_350 * _G,
        peak_flops=989_400 * _G,
        pcie_bytes_per_s=50 * _G,
        description=("NVIDIA H100 SXM datasheet: 80 GB HBM3, 3.35 TB/s, BF16 tensor 989.4 "
                     "TFLOPS dense (1,979 with sparsity), PCIe Gen5 x16: ~50 GB/s effective of "
                     "64 GB/s nominal per direction. Memory read as decimal 80 GB, as seed 003 "
                     "does ('80 GB H100 at 0.90 ... ~50 GiB of KV')."),
    ),
    GPUSpec(
        name="h200-141gb",
        memory_bytes=141 * _G,
        hbm_bytes_per_s=4_800 * _G,
        peak_flops=989_400 * _G,
        pcie_bytes_per_s=50 * _G,
        description=("NVIDIA H200 SXM datasheet: 141 GB HBM3e, 4.8 TB/s, BF16 tensor 989.4 "
                     "TFLOPS dense (1,979 with sparsity), PCIe Gen5 x16: ~50 GB/s effective of "
                     "64 GB/s nominal per direction. Memory read as decimal 141 GB."),
    ),
)}


def list_gpus() -> list[str]:
    """Names of the GPU presets (explained in chapter 1)."""
    return list(_PRESETS)


def get_gpu(name_or_spec) -> GPUSpec:
    """A :class:`GPUSpec` from a preset name or a spec; unknown names list the valid ones."""
    if isinstance(name_or_spec, GPUSpec):
        return name_or_spec
    if isinstance(name_or_spec, str) and name_or_spec.strip().lower() in _PRESETS:
        return _PRESETS[name_or_spec.strip().lower()]
    raise KvsimError(f"gpu={name_or_spec!r} is not known: expected one of {', '.join(list_gpus())}")
