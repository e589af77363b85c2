"""The vLLM defaults kvsim follows, one place, with the version and source of each.

kvsim's ``engine="v1"`` mode follows vLLM's V1 engine as of its 2026 releases
(0.19 and 0.20: the scheduler with the full-prompt admission gate
``scheduler_reserve_full_isl``, before 0.21 changed the memory defaults);
``engine="v0"`` follows the V0 engine of 0.10 and earlier (removed in 0.11),
the last with swap preemption. Release boundaries below were read from the merged pull
requests' dates and may be off by one release; each figure names its source
file so it can be checked against the version a reader runs.

Explained where each is used: chapter 1 (memory), chapter 2 (scheduling).
"""
from __future__ import annotations

from kvsim.errors import check_choice
from kvsim.units import GiB

__all__ = ["VLLM_V1_VERSIONS", "ENGINES", "USAGE_CONTEXTS", "batch_defaults", "watermark_default",
           "NON_TORCH_BYTES", "SAMPLER_LOGIT_BYTES", "ACTIVATION_BYTES", "max_num_batched_tokens_default"]

#: What ``engine="v1"`` models.
VLLM_V1_VERSIONS = "vLLM V1 as of 0.19-0.20"
ENGINES = ("v1", "v0")
#: ``usage_context``: "server" (``vllm serve``, the OpenAI-compatible API
#: server) or "llm" (the offline ``LLM`` class).
USAGE_CONTEXTS = ("server", "llm")

#: GPU class boundary of ``EngineArgs.get_batch_defaults``
#: (vllm/engine/arg_utils.py): at least 70 GiB of device memory and not an A100
#: (the A100 exclusion since PR #17885, May 2025).
_BIG_GPU_BYTES = 70 * GiB

#: Memory the CUDA context, cuBLAS workspaces and other non-PyTorch
#: allocations take on one GPU; vLLM's start-up log prints it as
#: "non_torch_memory takes 0.12GiB" (0.08-0.65 GiB in published logs of
#: single-GPU servers; kvsim takes 0.3 GiB).
NON_TORCH_BYTES = 3 * GiB // 10

#: The sampler's dummy run during profiling holds fp32 logits for
#: ``max_num_seqs`` rows of the vocabulary (vllm/v1/worker/gpu_model_runner.py
#: ``_dummy_sampler_run``).
SAMPLER_LOGIT_BYTES = 4

#: Activations are 16-bit in every model kvsim knows (vLLM runs them in the
#: model's dtype, fp16 or bf16): the profiling peak and the cost model's bytes
#: moved both count them at this size.
ACTIVATION_BYTES = 2


def _is_big(gpu) -> bool:
    return gpu.memory_bytes >= _BIG_GPU_BYTES and "a100" not in gpu.name.lower()


def batch_defaults(gpu, usage_context: str = "server", engine: str = "v1") -> tuple[int, int]:
    """``(max_num_batched_tokens, max_num_seqs)`` vLLM picks when neither is set.

    V1 (``get_batch_defaults``, vllm/engine/arg_utils.py, since May 2025): on a
    GPU with at least 70 GiB that is not an A100 (H100, H200), 8,192 tokens
    and 1,024 sequences for the API server, 16,384 and 1,024 for the ``LLM``
    class; elsewhere (A100, 48 GB cards) 2,048 and 256 for the server, 8,192
    and 256 for the ``LLM`` class. V0: 2,048 tokens with chunked prefill (kvsim's
    choice: V0's own figure changed between releases) and 256 sequences.
    Explained in chapter 2.
    """
    check_choice("usage_context", usage_context, USAGE_CONTEXTS)
    check_choice("engine", engine, ENGINES)
    if engine == "v0":
        return 2048, 256
    if _is_big(gpu):
        return (8192 if usage_context == "server" else 16384), 1024
    return (2048 if usage_context == "server" else 8192), 256


def max_num_batched_tokens_default(gpu, *, usage_context: str, engine: str, chunked: bool,
                                   max_model_len: int, max_num_seqs: int) -> int:
    """The token budget when the user sets none.

    Without chunked prefill a whole prompt must fit one step, so vLLM raises
    the budget to at least ``max_model_len`` (``SchedulerConfig``); it is never
    below ``max_num_seqs`` (every running sequence may decode in one step).
    """
    tokens, _ = batch_defaults(gpu, usage_context, engine)
    if not chunked:
        tokens = max(tokens, max_model_len)
    return max(tokens, max_num_seqs)


def watermark_default(engine: str) -> float:
    """Admission headroom as a fraction of the blocks: V0's block manager 0.01, V1 none.

    V0: ``BlockSpaceManager(watermark=0.01)`` (vllm/core/block_manager.py). V1
    had no watermark until PR #44594 (June 2026) added one, off by default.
    Checked against vLLM main at commit 003df29 (vllm/v1/core/kv_cache_manager.py):
    ``KVCacheManager(watermark=0.0)``; ``allocate_slots`` adds the watermark
    only for a waiting or preempted request and only when another request is
    already scheduled in the step (``has_scheduled_reqs``), in the full-prompt
    gate as in the chunk's allocation. kvsim's condition is "another request is
    running" (NOTE(watermark-running): a running request the budget left out of the
    step counts).
    """
    check_choice("engine", engine, ENGINES)
    return 0.01 if engine == "v0" else 0.0
