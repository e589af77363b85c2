"""The worked set-ups the chapters' exercises share (from the seed articles)."""
from __future__ import annotations

from typing import TypedDict

from kvsim.model.memory import KVBudget, kv_budget

__all__ = ["BELGAVI", "H100_8B", "belgavi_budget", "h100_budget", "BelgaviSetup", "H100Setup"]


class BelgaviSetup(TypedDict):
    """The Belgavi set-up's card, model, utilisation and request shape."""
    gpu: str
    model: str
    gpu_memory_utilization: float
    prompt_tokens: int
    output_tokens: int


class H100Setup(TypedDict):
    """Seed 003's set-up: card, model, utilisation, the p95 request and two max_num_seqs."""
    gpu: str
    model: str
    gpu_memory_utilization: float
    p95_prompt_tokens: int
    p95_output_tokens: int
    default_max_num_seqs: int
    seed_max_num_seqs: int


#: The seed article's Belgavi's Book Store set-up (seed 000, "KV Cache
#: Preemption in vLLM"): a 7B model on a 48 GB card shared at 60 %,
#: 850-token prompts and 250-token answers. The card is the measured A40
#: (the seeds name none); the activation reserve is what vLLM V1's profiling
#: run needs (kvsim's estimate), not the seed's round "2 GB".
BELGAVI: BelgaviSetup = {
    "gpu": "a40-48gb",
    "model": "llama-2-7b",
    "gpu_memory_utilization": 0.60,
    "prompt_tokens": 850,
    "output_tokens": 250,
}

#: Seed 003 ("Throughput collapse under load"): Llama-3.1-8B on an 80 GB H100
#: at ``gpu_memory_utilization=0.90``, sized for a p95 request of a 2k prompt
#: plus a 4k answer, against the seed's ``max_num_seqs`` of 256 (vLLM V1's
#: default on an H100 is 1,024).
H100_8B: H100Setup = {
    "gpu": "h100-80gb",
    "model": "llama-3.1-8b",
    "gpu_memory_utilization": 0.90,
    "p95_prompt_tokens": 2_000,
    "p95_output_tokens": 4_000,
    "default_max_num_seqs": 1024,
    "seed_max_num_seqs": 256,
}


def belgavi_budget(kv_dtype: str | None = None) -> KVBudget:
    """Belgavi's KV budget (in ``kv_dtype``, by default the model's own)."""
    return kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                     gpu_memory_utilization=BELGAVI["gpu_memory_utilization"], kv_dtype=kv_dtype)


def h100_budget(kv_dtype: str | None = None) -> KVBudget:
    """Seed 003's H100 KV budget (in ``kv_dtype``, by default the model's own)."""
    return kv_budget(H100_8B["gpu"], H100_8B["model"],
                     gpu_memory_utilization=H100_8B["gpu_memory_utilization"],
                     kv_dtype=kv_dtype)
