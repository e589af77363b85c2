"""GPU presets: memory as vLLM sees it, bandwidths, FLOPS, links and calibrated efficiencies.

Explained in chapter 1, *Bytes per token and capacity* (memory) and chapter 3,
*Swap versus recompute* (bandwidths, the PCIe link and the cost model).

**Memory.** vLLM budgets from the total the CUDA runtime reports to the
process (``torch.cuda.mem_get_info()``; its start-up log prints it as
``total_gpu_memory (79.11GiB)`` on an H100). That is neither the datasheet's
decimal figure ("80 GB") nor what ``nvidia-smi`` lists (81,559 MiB on the same
H100): the driver keeps a few hundred MiB for itself, and GDDR6 boards (A40,
L40S) give 1/16 of their memory to ECC. ``memory_bytes`` is the CUDA figure,
from a real ``deviceQuery`` listing (``Total amount of global memory``);
``nvidia_smi_mib`` and ``datasheet_memory_bytes`` sit beside it, with the
sources in ``description``.

**Speed.** ``hbm_bytes_per_s`` and ``peak_flops`` are datasheet peaks (dense
FP16/BF16 tensor cores, no 2:4 sparsity). ``matmul_efficiency``,
``memory_efficiency`` and ``kernel_latency_s`` are the cost model's constants
for this GPU (:mod:`kvsim.engine.costs`), fitted to measured kernel timings where
they exist (``calibration`` says which) and borrowed from the closest measured
GPU otherwise. ``attention_latency_s`` (the shortest attention kernel; ``None``:
``kernel_latency_s``) and ``attention_s_per_seq_head`` (what each sequence adds to
one layer's attention kernel per KV head, beyond reading its KV) are fitted to
Vidur's measured FlashAttention decode kernels
(:data:`kvsim.engine.attention_profiles.ATTENTION_MEASURED`) on the A100 and the A40
and borrowed elsewhere. ``pcie_bytes_per_s`` is the *effective* one-way host<->device
copy rate (PCIe Gen4 x16: 32 GB/s nominal per direction, about 25 GB/s in
practice; Gen5 x16: 64 and about 50). ``interconnect_bytes_per_s`` is the
per-direction GPU-to-GPU bandwidth tensor parallelism's all-reduces use
(NVLink where the board has it, else PCIe).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from kvsim.errors import KvsimError, check_float, check_int

__all__ = ["GPUSpec", "get_gpu", "list_gpus"]

_G = 10**9
_T = 10**12
_MiB = 2**20


@dataclass(frozen=True)
class GPUSpec:
    """One GPU (explained in chapters 1 and 3; fields as in the module docstring).

    Only the first five fields are required; a custom GPU without measured
    efficiencies gets round defaults (0.7 of peak FLOPs, 0.8 of peak
    bandwidth, 5 microseconds per kernel, attention kernels with the same floor
    and the A100's 43 ns per sequence and KV head), which
    :mod:`kvsim.engine.calibration` can replace with a fit to your own kernel timings.
    """

    name: str
    memory_bytes: int
    hbm_bytes_per_s: int
    peak_flops: int
    pcie_bytes_per_s: int
    description: str = ""
    datasheet_memory_bytes: int | None = None
    nvidia_smi_mib: int | None = None
    matmul_efficiency: float = 0.7
    memory_efficiency: float = 0.8
    kernel_latency_s: float = 5e-6
    interconnect_bytes_per_s: int | None = None
    calibration: str = "not calibrated: round default efficiencies"
    attention_latency_s: float | None = None
    attention_s_per_seq_head: float = 43e-9

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise KvsimError(f"name={self.name!r} is not valid: expected a non-empty string")
        p = f"gpu {self.name!r}: "
        for field in ("memory_bytes", "hbm_bytes_per_s", "peak_flops", "pcie_bytes_per_s"):
            self._int(field, getattr(self, field))
        for field in ("datasheet_memory_bytes", "nvidia_smi_mib", "interconnect_bytes_per_s"):
            if getattr(self, field) is not None:
                self._int(field, getattr(self, field))
        if self.interconnect_bytes_per_s is None:
            object.__setattr__(self, "interconnect_bytes_per_s", self.pcie_bytes_per_s)
        for field in ("matmul_efficiency", "memory_efficiency"):
            object.__setattr__(self, field, check_float(p + field, getattr(self, field), min=0,
                                                        max=1, min_open=True))
        object.__setattr__(self, "kernel_latency_s",
                           check_float(p + "kernel_latency_s", self.kernel_latency_s, min=0, max=1))
        if self.attention_latency_s is None:
            object.__setattr__(self, "attention_latency_s", self.kernel_latency_s)
        for field in ("attention_latency_s", "attention_s_per_seq_head"):
            object.__setattr__(self, field, check_float(p + field, getattr(self, field), min=0,
                                                        max=1))
        for field in ("description", "calibration"):
            if not isinstance(getattr(self, field), str):
                raise KvsimError(f"{p}{field}={getattr(self, field)!r} is not valid: expected a "
                                 f"string")

    def _int(self, field: str, value: object) -> None:
        if isinstance(value, str):
            raise KvsimError(f"gpu {self.name!r}: {field}={value!r} has the wrong type: "
                             f"expected an integer >= 1")
        # whole floats such as 25e9 are accepted and stored as int
        object.__setattr__(self, field, check_int(f"gpu {self.name!r}: {field}", value, min=1))

    def to_dict(self) -> dict[str, object]:
        """The fields as a plain dict (for JSON output)."""
        return asdict(self)


def _fitted(gpu: str) -> str:
    return (f"fitted to Vidur's measured {gpu} per-layer matmul timings (batches of 1-4,096 "
            "tokens, tensor parallelism 1-8; kvsim.engine.calibration)")


# The efficiencies below are what `python scripts/calibrate_costs.py` prints for
# the shared profiles (one minimax fit per GPU over every row of every model).
_PRESETS: dict[str, GPUSpec] = {g.name: g for g in (
    GPUSpec(
        name="a40-48gb",
        memory_bytes=47_608_692_736,
        datasheet_memory_bytes=48 * _G,
        nvidia_smi_mib=46_068,
        hbm_bytes_per_s=696 * _G,
        peak_flops=149_700 * _G,
        pcie_bytes_per_s=25 * _G,
        matmul_efficiency=0.95, memory_efficiency=0.98, kernel_latency_s=7.5e-6,
        attention_latency_s=6.4e-6, attention_s_per_seq_head=59e-9,
        calibration=_fitted("A40"),
        description=("NVIDIA A40 (Ampere GA102, 84 SMs): 48 GB GDDR6 with ECC, 696 GB/s, "
                     "FP16/BF16 tensor 149.7 TFLOPS dense, PCIe Gen4 x16 (~25 GB/s effective "
                     "of 32 GB/s nominal per direction), no NVLink by default. CUDA reports "
                     "45,403 MiB = 47,608,692,736 B (deviceQuery, CUDA 12.4); nvidia-smi lists "
                     "46,068 MiB with ECC on."),
    ),
    GPUSpec(
        name="l40s-48gb",
        memory_bytes=47_576_711_168,
        datasheet_memory_bytes=48 * _G,
        nvidia_smi_mib=46_068,
        hbm_bytes_per_s=864 * _G,
        peak_flops=362_050 * _G,
        pcie_bytes_per_s=25 * _G,
        matmul_efficiency=0.95, memory_efficiency=0.98, kernel_latency_s=7.5e-6,
        attention_latency_s=6.4e-6, attention_s_per_seq_head=59e-9,
        calibration=("not measured: the A40's fitted efficiencies (the closest measured GPU: "
                     "a PCIe board with GDDR6)"),
        description=("NVIDIA L40S (Ada AD102, 142 SMs): 48 GB GDDR6 with ECC, 864 GB/s, "
                     "FP16/BF16 tensor 362.05 TFLOPS dense (733 with sparsity), PCIe Gen4 x16 "
                     "(~25 GB/s effective), no NVLink. CUDA reports 45,373 MiB = "
                     "47,576,711,168 B (deviceQuery, CUDA 12.4); nvidia-smi lists 46,068 MiB."),
    ),
    GPUSpec(
        name="a100-80gb",
        memory_bytes=85_100_068_864,
        datasheet_memory_bytes=80 * _G,
        nvidia_smi_mib=81_920,
        hbm_bytes_per_s=2_039 * _G,
        peak_flops=312 * _T,
        pcie_bytes_per_s=25 * _G,
        interconnect_bytes_per_s=300 * _G,
        matmul_efficiency=0.87, memory_efficiency=1.0, kernel_latency_s=7.5e-6,
        attention_latency_s=11.1e-6, attention_s_per_seq_head=43e-9,
        calibration=_fitted("A100"),
        description=("NVIDIA A100 80GB SXM (GA100, 108 SMs): 80 GB HBM2e, 2,039 GB/s, BF16 "
                     "tensor 312 TFLOPS dense, PCIe Gen4 x16 (~25 GB/s effective), NVLink 3 "
                     "(600 GB/s, 300 per direction). CUDA reports 81,158 MiB = "
                     "85,100,068,864 B (deviceQuery, CUDA 12.5); nvidia-smi lists 81,920 MiB."),
    ),
    GPUSpec(
        name="h100-80gb",
        memory_bytes=85_017_755_648,
        datasheet_memory_bytes=80 * _G,
        nvidia_smi_mib=81_559,
        hbm_bytes_per_s=3_350 * _G,
        peak_flops=989_400 * _G,
        pcie_bytes_per_s=50 * _G,
        interconnect_bytes_per_s=450 * _G,
        matmul_efficiency=0.88, memory_efficiency=0.96, kernel_latency_s=5.0e-6,
        # NOTE(unprofiled-attention): no measured H100 attention kernels; the A100's figures
        attention_latency_s=11.1e-6, attention_s_per_seq_head=43e-9,
        calibration=_fitted("H100"),
        description=("NVIDIA H100 SXM (GH100, 132 SMs): 80 GB HBM3, 3.35 TB/s, BF16 tensor "
                     "989.4 TFLOPS dense (1,979 with sparsity), PCIe Gen5 x16 (~50 GB/s "
                     "effective of 64 nominal), NVLink 4 (900 GB/s, 450 per direction). CUDA "
                     "reports 81,079 MiB = 85,017,755,648 B (deviceQuery, CUDA 13.0); "
                     "nvidia-smi lists 81,559 MiB; vLLM logs total_gpu_memory 79.1-79.3 GiB."),
    ),
    GPUSpec(
        name="h200-141gb",
        memory_bytes=150_119_844_413,
        datasheet_memory_bytes=141 * _G,
        nvidia_smi_mib=143_771,
        hbm_bytes_per_s=4_800 * _G,
        peak_flops=989_400 * _G,
        pcie_bytes_per_s=50 * _G,
        interconnect_bytes_per_s=450 * _G,
        matmul_efficiency=0.88, memory_efficiency=0.96, kernel_latency_s=5.0e-6,
        attention_latency_s=11.1e-6, attention_s_per_seq_head=43e-9,
        calibration="not measured: the H100's fitted efficiencies (the same GH100 chip)",
        description=("NVIDIA H200 SXM (GH100, 132 SMs): 141 GB HBM3e, 4.8 TB/s, BF16 tensor "
                     "989.4 TFLOPS dense, PCIe Gen5 x16 (~50 GB/s effective), NVLink 4. "
                     "nvidia-smi lists 143,771 MiB; memory_bytes is 139.81 GiB, the "
                     "total_gpu_memory a vLLM start-up log prints on an H200 (to 0.01 GiB)."),
    ),
)}


def list_gpus() -> list[str]:
    """Names of the GPU presets (explained in chapter 1)."""
    return list(_PRESETS)


def get_gpu(name_or_spec: GPUSpec | str) -> GPUSpec:
    """A :class:`GPUSpec` from a preset name or a spec; unknown names list the valid ones."""
    if isinstance(name_or_spec, GPUSpec):
        return name_or_spec
    if isinstance(name_or_spec, str) and name_or_spec.strip().lower() in _PRESETS:
        return _PRESETS[name_or_spec.strip().lower()]
    raise KvsimError(f"gpu={name_or_spec!r} is not known: expected one of {', '.join(list_gpus())}")
