"""The vLLM defaults kvsim follows, one place, with the version and source of each.

kvsim's ``engine="v1"`` mode follows vLLM's V1 engine; the engine option
``vllm_version`` names the release (:data:`VLLM_V1_RELEASES`, 0.11 to 0.34;
default :data:`VLLM_VERSION_DEFAULT`, the newest release whose behaviour was
read) and decides the defaults that differ between V1 releases.
``engine="v0"`` follows the V0 engine of 0.10 and earlier (removed in 0.11),
the last with swap preemption. Release boundaries below were read from the
merged pull requests' dates and from issue reports that name a release, and may
be off by one release; each figure names its source so it can be checked
against the version a reader runs.

Which releases behave which way:

* ``scheduler_reserve_full_isl`` (the full-prompt admission gate): absent up
  to 0.18 (0.18.0 was published on 2026-03-20 and vllm-project/vllm PR #37307,
  which adds the gate, was still under review on 2026-03-24); present and on
  by default from 0.19 (vLLM issue #39037 shows the gate's stall on 0.19.0 on
  2026-04-05; issue #39734, 2026-04-15, names ``--no-scheduler-reserve-full-isl``
  as the way out on a 0.19.1 development build; ai-dynamo/dynamo issue #9718,
  2026-05-18, reads ``scheduler_reserve_full_isl: bool = True`` in
  vllm/config/scheduler.py). PR #37307 first read the switch from an
  environment variable; no release was found that had it off by default, so
  kvsim's boundary is one: 0.18 without the gate, 0.19 with it on.
* Memory: from 0.21 vLLM also subtracts an estimate of the CUDA graphs'
  memory from the KV budget (its start-up log says "CUDA graph memory
  profiling is enabled (default since v0.21.0)", quoted in gpustack/runner
  PR #251; ``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0`` turns it off).
  NOTE(cudagraph-memory): kvsim does not model that estimate on any release
  (it is measured by capturing the graphs; 0.36 GiB in that log), so its pool
  on 0.21 and later is larger than the server's by about that much.
* Batch defaults by GPU class (:func:`batch_defaults`, since May 2025) and the
  V1 watermark default of 0 (:func:`watermark_default`) are the same on every
  release kvsim knows.
* Preemption is recompute only on every V1 release (``Scheduler._preempt_request``
  in vllm/v1/core/sched/scheduler.py of 0.34.0 frees the blocks, resets the computed
  tokens and puts the request at the front of the waiting queue; ``preemption_mode``
  and the swap space went with V0 in 0.11).
* ``prefix_cache_retention_interval`` (which blocks of sliding-window layers keep
  their prefix-cache hash, :mod:`kvsim.engine.blocks.window_retention`): absent in
  the 0.20.0 wheel (every full block is hashed: "dense"); from 0.23 the environment
  variable ``VLLM_PREFIX_CACHE_RETENTION_INTERVAL`` sets it, unset meaning dense
  (vllm/envs.py of the 0.23.0 to 0.28.0 wheels); from 0.29 it is
  ``CacheConfig.prefix_cache_retention_interval`` (``--prefix-cache-retention-interval``),
  default 0 (vllm/config/cache.py of the 0.29.0 wheel reads the deprecated variable,
  else 0; ``Field(default=0)`` from 0.30). :data:`RETENTION_INTERVAL_SINCE`,
  :data:`RETENTION_ZERO_SINCE`.
* Releases 0.29 to 0.34 (read in the 0.34.0 wheel, commit 62d4bc3c7, and the
  wheels between) otherwise change nothing kvsim models for a GPU-only engine; 0.30 adds the
  per-request histogram ``vllm:request_num_preemptions`` (buckets 1, 2, 3, 4, 5, 10,
  20), which kvsim's current metric set carries.
* The host-memory KV tier (``--kv-offloading-size`` in GiB, since 0.11.1; the
  native ``OffloadingConnector``) is modelled from 0.23, the first release read
  that stores only prompt blocks (:data:`OFFLOAD_PROMPT_ONLY_SINCE`;
  :mod:`kvsim.engine.blocks.host_tier`).

Explained where each is used: chapter 1 (memory), chapter 2 (scheduling).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kvsim.errors import KvsimError, check_choice
from kvsim.units import GiB

if TYPE_CHECKING:
    from .hardware import GPUSpec

__all__ = ["VLLM_V1_VERSIONS", "ENGINES", "USAGE_CONTEXTS", "batch_defaults", "watermark_default",
           "watermark_when_alone",
           "NON_TORCH_BYTES", "SAMPLER_LOGIT_BYTES", "ACTIVATION_BYTES", "max_num_batched_tokens_default",
           "VLLM_V1_RELEASES", "VLLM_V0_RELEASES", "VLLM_VERSION_DEFAULT", "RESERVE_FULL_ISL_SINCE",
           "check_vllm_version", "has_reserve_full_isl", "reserve_full_isl_default",
           "vllm_version_default", "ASYNC_SCHEDULING_SINCE", "async_scheduling_default",
           "vllm_async_scheduling_default", "OFFLOAD_PROMPT_ONLY_SINCE", "models_host_tier",
           "LOG_TOKENS_FROM_CONCURRENCY_SINCE", "LOG_ONE_LINE_SINCE", "startup_log_lines",
           "logged_tokens", "blocks_from_logged_tokens", "RETENTION_INTERVAL_SINCE",
           "RETENTION_ZERO_SINCE", "has_retention_interval", "retention_interval_default"]

#: The V1 releases kvsim knows (minor versions of 0.x): 0.11, the first without V0, to 0.34.
VLLM_V1_RELEASES: tuple[int, ...] = tuple(range(11, 35))
#: The releases ``engine="v0"`` stands for: 0.6 to 0.10, the last with the V0 engine.
VLLM_V0_RELEASES: tuple[int, ...] = tuple(range(6, 11))
#: The newest release whose behaviour was read: 0.34.0, published on PyPI on 2026-11-16
#: (commit 62d4bc3c7; its wheel's sources were read).
VLLM_VERSION_DEFAULT = "0.34"
#: What ``engine="v1"`` models by default.
VLLM_V1_VERSIONS = f"vLLM V1 as of {VLLM_VERSION_DEFAULT}"
#: The first release with ``scheduler_reserve_full_isl``, on by default (see the module text).
RESERVE_FULL_ISL_SINCE = 19
#: The first release whose host-memory KV tier (``--kv-offloading-size``, the native
#: ``OffloadingConnector``) stores only a request's prompt blocks (``offload_prompt_only``, on
#: by default; absent in the 0.20.0 wheel, present in 0.23.0: the boundary may be off by up to
#: two releases). kvsim models the tier from this release on.
OFFLOAD_PROMPT_ONLY_SINCE = 23
#: The first release whose start-up log derives "GPU KV cache size: N tokens" from the maximum
#: concurrency, ``int(max_concurrency * max_model_len)`` (vllm/v1/core/kv_cache_utils.py; the
#: 0.20.0 wheel still prints ``num_blocks // groups * block_size``, the 0.23.0 wheel the new
#: figure: the boundary may be off by up to two releases).
LOG_TOKENS_FROM_CONCURRENCY_SINCE = 23
#: The first release that logs the pool's size and the concurrency in one line, ``GPU KV cache
#: size: N tokens, Maximum concurrency for L tokens per request: Xx`` (``update_kv_cache_capacity``:
#: two lines in the 0.27.0 wheel, one in 0.28.0; from 0.30 the line starts with the device's name,
#: "GPU" on CUDA).
LOG_ONE_LINE_SINCE = 28
#: The first release that schedules asynchronously by default: ``SchedulerConfig.async_scheduling``
#: (opt-in since PR #19970, June 2025) became "on unless a feature forbids it" with PR #27614,
#: listed in tracking issue #27679 and shipped in 0.14.0 (January 2026; the release notes as
#: quoted by torch-spyre/sendnn-inference PR #636).
ASYNC_SCHEDULING_SINCE = 14
#: The first release with a sliding-window prefix-cache retention interval (the environment
#: variable ``VLLM_PREFIX_CACHE_RETENTION_INTERVAL``; absent in the 0.20.0 wheel, present in
#: 0.23.0: the boundary may be off by up to two releases). Unset, it is dense.
RETENTION_INTERVAL_SINCE = 23
#: The first release whose retention interval is 0 by default (``--prefix-cache-retention-interval``,
#: vllm-project/vllm PR #52216; the 0.29.0 wheel's vllm/config/cache.py).
RETENTION_ZERO_SINCE = 29

_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
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


def _is_big(gpu: GPUSpec) -> bool:
    return gpu.memory_bytes >= _BIG_GPU_BYTES and "a100" not in gpu.name.lower()


def batch_defaults(gpu: GPUSpec, usage_context: str = "server", engine: str = "v1") -> tuple[int, int]:
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


def max_num_batched_tokens_default(gpu: GPUSpec, *, usage_context: str, engine: str, chunked: bool,
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


def watermark_when_alone(engine: str) -> bool:
    """Whether admission keeps the watermark free even when no other request is scheduled.

    V0: always (vllm/core/block_manager.py, ``can_allocate`` and ``can_swap_in`` compare
    the free blocks less the watermark whatever else runs), so one request may never
    hold the whole pool. V1: no, only beside another scheduled request (``allocate_slots``,
    ``has_scheduled_reqs``, see :func:`watermark_default`).
    """
    check_choice("engine", engine, ENGINES)
    return engine == "v0"


def _releases(engine: str) -> tuple[int, ...]:
    return VLLM_V0_RELEASES if engine == "v0" else VLLM_V1_RELEASES


def vllm_version_default(engine: str = "v1") -> str:
    """The release an engine mode stands for when none is named: 0.34 for V1, 0.10 for V0."""
    check_choice("engine", engine, ENGINES)
    return f"0.{_releases(engine)[-1]}"


def check_vllm_version(version: object, engine: str = "v1") -> str:
    """``version`` ("0.34" or "0.34.0") checked against the releases ``engine`` knows; returns it.

    One line names the value and the range (V1: 0.11-0.34; V0: 0.6-0.10).
    """
    check_choice("engine", engine, ENGINES)
    releases = _releases(engine)
    span = f"0.{releases[0]} to 0.{releases[-1]}"
    m = _VERSION_RE.fullmatch(version) if isinstance(version, str) else None
    if not isinstance(version, str) or m is None or m.group(1) != "0" or int(m.group(2)) not in releases:
        raise KvsimError(f"vllm_version={version!r} is not a release kvsim knows for engine={engine!r}: "
                         f"expected a release string from {span} such as \"0.{releases[-1]}\" "
                         f"or \"0.{releases[-1]}.0\"")
    return version


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def has_reserve_full_isl(version: str) -> bool:
    """Whether a V1 release has ``scheduler_reserve_full_isl`` (0.19 and later)."""
    return _minor(version) >= RESERVE_FULL_ISL_SINCE


def reserve_full_isl_default(engine: str, version: str) -> bool:
    """``scheduler_reserve_full_isl`` when the user sets none: on for V1 from 0.19, else off.

    V0 has no such option (it allocates a whole prompt at admission anyway).
    """
    check_choice("engine", engine, ENGINES)
    return engine == "v1" and has_reserve_full_isl(version)


def models_host_tier(version: str) -> bool:
    """Whether kvsim models the host tier of a V1 release (0.23 and later)."""
    return _minor(version) >= OFFLOAD_PROMPT_ONLY_SINCE


def has_retention_interval(engine: str, version: str) -> bool:
    """Whether a release has a sliding-window retention interval (V1 from 0.23)."""
    check_choice("engine", engine, ENGINES)
    return engine == "v1" and _minor(version) >= RETENTION_INTERVAL_SINCE


def retention_interval_default(engine: str, version: str) -> int | str:
    """``prefix_cache_retention_interval`` when the user sets none: 0 for V1 from 0.29, else
    ``"dense"`` (vLLM's None: every full block of a sliding-window layer stays cached)."""
    check_choice("engine", engine, ENGINES)
    return 0 if engine == "v1" and _minor(version) >= RETENTION_ZERO_SINCE else "dense"


def vllm_async_scheduling_default(engine: str, version: str) -> bool:
    """vLLM's own ``async_scheduling`` default: on for V1 from 0.14, else off.

    With it the engine core prepares step N+1 (scheduling, input preparation) and
    processes step N's output while step N runs on the GPU (PRs #19970, #23569).
    V0 has no such mode.
    """
    check_choice("engine", engine, ENGINES)
    return engine == "v1" and _minor(version) >= ASYNC_SCHEDULING_SINCE


def async_scheduling_default(engine: str, version: str) -> bool:
    """kvsim's ``async_scheduling`` default: vLLM's (:func:`vllm_async_scheduling_default`),
    on for V1 from 0.14 and so on for the default release; off for V1 before 0.14 and for V0.
    """
    return vllm_async_scheduling_default(engine, version)


def startup_log_lines(version: str, *, num_blocks: int, block_size: int, max_model_len: int,
                      blocks_per_request: int, num_groups: int = 1) -> list[str]:
    """What vLLM V1 release ``version`` logs about its KV pool at start-up, for a model whose
    request of ``max_model_len`` tokens takes ``blocks_per_request`` blocks of ``num_blocks``
    (vLLM's count, the null block included).

    The concurrency is ``num_blocks / blocks_per_request`` (``get_max_concurrency_for_kv_cache_config``);
    the size in tokens is ``num_blocks * block_size`` before
    :data:`LOG_TOKENS_FROM_CONCURRENCY_SINCE`, ``int(concurrency * max_model_len)`` since; the two
    figures share one line since :data:`LOG_ONE_LINE_SINCE`.
    """
    concurrency = num_blocks / blocks_per_request
    tokens = logged_tokens(version, num_blocks=num_blocks, block_size=block_size,
                           max_model_len=max_model_len, blocks_per_request=blocks_per_request,
                           num_groups=num_groups)
    size = f"GPU KV cache size: {tokens:,} tokens"
    most = f"Maximum concurrency for {max_model_len:,} tokens per request: {concurrency:.2f}x"
    return [f"{size}, {most}"] if _minor(version) >= LOG_ONE_LINE_SINCE else [size, most]


def logged_tokens(version: str, *, num_blocks: int, block_size: int, max_model_len: int,
                  blocks_per_request: int, num_groups: int = 1) -> int:
    """The N of "GPU KV cache size: N tokens" at release ``version`` (see :func:`startup_log_lines`).

    Before 0.23 it is ``num_blocks // num_groups * block_size`` for a model of ``num_groups``
    KV cache groups (:mod:`kvsim.model.kv_groups`; vllm/v1/core/kv_cache_utils.py at 0.20).

    From 0.23 it is a float product truncated, so it can fall a token short of
    ``num_blocks * block_size`` even when ``max_model_len`` is a multiple of ``block_size``.
    """
    if _minor(version) >= LOG_TOKENS_FROM_CONCURRENCY_SINCE:
        return int(num_blocks / blocks_per_request * max_model_len)
    return num_blocks // num_groups * block_size


def blocks_from_logged_tokens(version: str, tokens: int, *, block_size: int, max_model_len: int,
                              blocks_per_request: int, num_groups: int = 1) -> int | None:
    """The ``num_blocks`` whose start-up line at ``version`` reads ``tokens`` (None if none does):
    :func:`logged_tokens` inverted, so a pool can be pinned to the figure a server printed."""
    def logs(blocks: int) -> int:
        return logged_tokens(version, num_blocks=blocks, block_size=block_size,
                             max_model_len=max_model_len, blocks_per_request=blocks_per_request,
                             num_groups=num_groups)
    if _minor(version) < LOG_TOKENS_FROM_CONCURRENCY_SINCE:
        estimate = tokens // block_size * num_groups
        return next((b for b in range(estimate, estimate + num_groups) if logs(b) == tokens), None)
    estimate = tokens * blocks_per_request // max_model_len
    return next((b for b in range(max(1, estimate - 1), estimate + 3) if logs(b) == tokens), None)
