"""Engine options: names, defaults, validation, and the frozen :class:`EngineConfig`.

``simulate`` takes vLLM's engine-argument names where one exists
(``gpu_memory_utilization``, ``block_size``, ``max_num_seqs``,
``enable_prefix_caching``, ``long_prefill_token_threshold``,
``scheduler_reserve_full_isl``, ...), kvsim's own (``engine``, ``admission``,
``seed``, ``until_s``, ``warmup_s``, ...) and the cost-model constants of
:class:`kvsim.CostModel`. :func:`resolve_options` checks every one, fills the
defaults of the chosen ``engine`` mode (:mod:`kvsim.model.vllm_defaults`) and
returns the engine's configuration. Explained in chapter 2.

Defaults that depend on the mode (``None`` in :data:`ENGINE_DEFAULTS`):

====================================  ==========================  ===============
option                                ``engine="v1"`` (default)   ``engine="v0"``
====================================  ==========================  ===============
``max_num_seqs``                      by GPU class (256 or 1024)  256
``max_num_batched_tokens``            by GPU class (2048/8192)    2048
``watermark``                         0                           0.01
``enable_prefix_caching``             True                        False
``vllm_version``                      "0.28" (0.11-0.28)          "0.10" (0.6-0.10)
``scheduler_reserve_full_isl``        True (from 0.19; 0.18 and   (whole prompt)
                                      earlier: False)
``async_scheduling``                  True (from 0.14; 0.13 and   False
                                      earlier: False)
``step_overhead_s``/``seq_overhead_s`` V1's CPU overhead          V0's
====================================  ==========================  ===============

``vllm_version`` names the release; it decides the defaults that differ between
releases (:mod:`kvsim.model.vllm_defaults` says which releases behave which
way). An explicit value still wins, except that ``scheduler_reserve_full_isl=True``
on a release without the option (0.18 and earlier) is an error naming the release.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kvsim.errors import (
    KvsimError,
    check_choice,
    check_float,
    check_gpu_memory_utilization,
    check_int,
)
from kvsim.model.hardware import get_gpu
from kvsim.model.memory import kv_budget, pinned_budget
from kvsim.model.presets import get_model
from kvsim.model.vllm_defaults import (
    ENGINES,
    USAGE_CONTEXTS,
    async_scheduling_default,
    batch_defaults,
    check_vllm_version,
    has_reserve_full_isl,
    max_num_batched_tokens_default,
    reserve_full_isl_default,
    vllm_version_default,
    watermark_default,
    watermark_when_alone,
)
from kvsim.units import GiB

from .costs import CostModel

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kvsim.model.hardware import GPUSpec
    from kvsim.model.memory import KVBudget
    from kvsim.model.spec import ModelSpec

    from .costs import GPULike, ModelLike

__all__ = ["ENGINE_DEFAULTS", "EngineConfig", "resolve_options", "ADMISSION_NAMES",
           "RESERVING_ADMISSIONS",
           "check_sglang_constants", "SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR",
           "SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS", "SGLANG_RETRACT_DECODE_STEPS",
           "SGLANG_CLIP_MAX_NEW_TOKENS", "WATERMARK_MAX"]

#: The largest ``watermark`` kvsim accepts: half the pool. vLLM V0 only asserts >= 0; a
#: headroom above half keeps more blocks back than admission may fill (0.999 leaves one
#: block in a thousand, so nearly every request is refused as never fitting).
WATERMARK_MAX = 0.5

#: Engine options and their defaults (``None``: the engine mode decides; see the table above).
ENGINE_DEFAULTS: dict[str, Any] = {
    "engine": "v1",
    "vllm_version": None,               # the newest release kvsim knows for the engine mode
    "usage_context": "server",
    "gpu_memory_utilization": 0.90,
    "kv_dtype": None,
    "block_size": 16,
    "num_gpu_blocks": None,
    "kv_cache_tokens": None,
    "max_num_seqs": None,
    "max_num_batched_tokens": None,
    "max_model_len": None,
    "enable_chunked_prefill": True,
    "long_prefill_token_threshold": 0,
    "scheduler_reserve_full_isl": None,
    "async_scheduling": None,
    "enable_prefix_caching": None,
    "watermark": None,
    "preemption_mode": "recompute",
    "swap_space_bytes": 4 * GiB,
    "swap_space_full": "abort",
    "unfit_requests": "reject",
    "scheduling_policy": "fcfs",
    "max_tokens": None,
    "admission": "optimistic",
    "seed": 0,
    "until_s": None,
    "warmup_s": 0.0,
    "tensor_parallel_size": 1,
    "activation_bytes": None,
    "weight_bytes": None,
    "init_new_token_ratio": 0.7,
    "min_new_token_ratio": None,        # SGLang: init x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR (0.14)
    "new_token_ratio_decay": None,
    "step_by_step": False,
    "check": False,
}
_COST_OPTIONS = set(CostModel.names())
#: The most swap space (bytes) an option may ask for: 1 PB, far above any host's memory.
SWAP_SPACE_MAX = 10**15


#: The admission policies (:mod:`kvsim.engine.policies` implements one class per name):
#: vLLM's ``optimistic``, SGLang's ``sglang`` and TensorRT-LLM's capacity-scheduler
#: policies (``CapacitySchedulerPolicy``): ``guaranteed`` (GUARANTEED_NO_EVICT, its
#: default), ``max_utilization`` (MAX_UTILIZATION) and ``static_batch`` (STATIC_BATCH).
ADMISSION_NAMES = ("optimistic", "guaranteed", "sglang", "max_utilization", "static_batch")
#: The policies that reserve every admitted request's prompt + planned answer.
RESERVING_ADMISSIONS = ("guaranteed", "static_batch")


#: SGLang's scheduler constants (python/sglang/srt/environ.py @21ff4b08, the defaults of
#: ``SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR`` and ``SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS``): the
#: minimum ratio is the initial one times the factor; the ratio decays to it in that many steps.
SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR = 0.14
SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS = 600
#: ``SGLANG_RETRACT_DECODE_STEPS``: the decode steps a retraction's new ratio allows each survivor.
SGLANG_RETRACT_DECODE_STEPS = 20
#: ``SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION``: the most answer tokens admission plans per request.
SGLANG_CLIP_MAX_NEW_TOKENS = 4096


def check_sglang_constants(init_new_token_ratio: object, min_new_token_ratio: object,
                           new_token_ratio_decay: object) -> tuple[float, float, float | None]:
    """SGLang's three constants, checked (a one-line error names the bad one); the one check.

    ``min_new_token_ratio=None`` is SGLang's: ``init x 0.14`` (0.098 at the default 0.7).
    ``new_token_ratio_decay=None`` stays ``None``: the policy then decays from
    the initial to the minimum ratio in 600 steps, as SGLang does.
    """
    init = check_float("init_new_token_ratio", init_new_token_ratio, min=0, max=1)
    minimum = init * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR if min_new_token_ratio is None else \
        check_float("min_new_token_ratio", min_new_token_ratio, min=0, max=init)
    decay = None if new_token_ratio_decay is None else \
        check_float("new_token_ratio_decay", new_token_ratio_decay, min=0, max=1)
    return init, minimum, decay


@dataclass(frozen=True)
class EngineConfig:
    """Every resolved option of one simulation (see :data:`ENGINE_DEFAULTS`).

    Derived figures: ``num_gpu_blocks`` (usable blocks), ``watermark_blocks``,
    ``kv_bytes_per_token`` (for the whole TP group), ``block_bytes``,
    ``weight_bytes``, ``swap_space_blocks``.
    """

    engine: str
    vllm_version: str
    usage_context: str
    gpu_memory_utilization: float
    kv_dtype: str
    block_size: int
    num_gpu_blocks: int
    kv_cache_tokens: int | None
    max_num_seqs: int
    max_num_batched_tokens: int
    max_model_len: int
    enable_chunked_prefill: bool
    long_prefill_token_threshold: int
    scheduler_reserve_full_isl: bool
    async_scheduling: bool
    enable_prefix_caching: bool
    watermark: float
    preemption_mode: str
    swap_space_bytes: int
    swap_space_full: str
    unfit_requests: str
    scheduling_policy: str
    max_tokens: int | None
    admission: str
    seed: int
    until_s: float | None
    warmup_s: float
    tensor_parallel_size: int
    activation_bytes: int | None
    weight_bytes: int
    init_new_token_ratio: float
    min_new_token_ratio: float
    new_token_ratio_decay: float | None
    step_by_step: bool
    check: bool
    watermark_blocks: int
    kv_bytes_per_token: int
    block_bytes: int
    swap_space_blocks: int

    @property
    def reserves_answers(self) -> bool:
        """The policy reserves prompt + planned answer for every admitted request
        (TensorRT-LLM's GUARANTEED_NO_EVICT and STATIC_BATCH)."""
        return self.admission in RESERVING_ADMISSIONS

    @property
    def watermark_when_alone(self) -> bool:
        """Admission keeps the watermark even with nothing else scheduled (V0), not only
        beside other requests (V1): :func:`kvsim.model.vllm_defaults.watermark_when_alone`."""
        return watermark_when_alone(self.engine)

    @property
    def whole_prompt_allocation(self) -> bool:
        """V0 takes blocks for a whole prefill at admission; V1 for each chunk it schedules."""
        return self.engine == "v0"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_bool(name: str, v: object) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    raise KvsimError(f"{name}={v!r} is not a boolean: expected true or false")


def resolve_options(model: ModelLike, gpu: GPULike, options: Mapping[str, Any]) \
        -> tuple[ModelSpec, GPUSpec, KVBudget, CostModel, EngineConfig]:
    """Validate ``options``; return ``(model, gpu, budget, cost_model, EngineConfig)``."""
    unknown = set(options) - set(ENGINE_DEFAULTS) - _COST_OPTIONS
    if unknown:
        name = sorted(unknown)[0]
        raise KvsimError(f"engine option {name!r} is not known: expected one of "
                         f"{', '.join(sorted(set(ENGINE_DEFAULTS) | _COST_OPTIONS))}")
    o = dict(ENGINE_DEFAULTS)
    o.update({k: v for k, v in options.items() if k in ENGINE_DEFAULTS})
    cost = CostModel().with_options(**{k: v for k, v in options.items() if k in _COST_OPTIONS})

    check_choice("engine", o["engine"], ENGINES)
    check_choice("usage_context", o["usage_context"], USAGE_CONTEXTS)
    engine = o["engine"]
    check_choice("preemption_mode", o["preemption_mode"], ["recompute", "swap"])
    if o["preemption_mode"] == "swap" and engine == "v1":
        raise KvsimError("preemption_mode='swap' is not available with engine='v1': vLLM V1 "
                         "only recomputes; expected engine='v0' to simulate swap")
    check_choice("swap_space_full", o["swap_space_full"], ["abort", "recompute"])
    check_choice("unfit_requests", o["unfit_requests"], ["reject", "error"])
    check_choice("scheduling_policy", o["scheduling_policy"], ["fcfs", "priority"])
    check_choice("admission", o["admission"], list(ADMISSION_NAMES))
    for name in ("enable_chunked_prefill", "step_by_step", "check"):
        o[name] = _check_bool(name, o[name])
    if o["enable_prefix_caching"] is None:
        o["enable_prefix_caching"] = engine == "v1"
    o["enable_prefix_caching"] = _check_bool("enable_prefix_caching", o["enable_prefix_caching"])
    if o["preemption_mode"] == "swap" and o["enable_prefix_caching"]:
        # NOTE(no-swap-with-prefix-cache): V0's swap predates the prefix cache; not modelled
        raise KvsimError("preemption_mode='swap' with enable_prefix_caching=True is not "
                         "modelled: expected enable_prefix_caching=False with swap")
    if o["vllm_version"] is None:
        o["vllm_version"] = vllm_version_default(engine)
    version = o["vllm_version"] = check_vllm_version(o["vllm_version"], engine)
    if o["scheduler_reserve_full_isl"] is None:
        o["scheduler_reserve_full_isl"] = reserve_full_isl_default(engine, version)
    o["scheduler_reserve_full_isl"] = _check_bool("scheduler_reserve_full_isl",
                                                  o["scheduler_reserve_full_isl"])
    if o["scheduler_reserve_full_isl"] and engine == "v1" and not has_reserve_full_isl(version):
        raise KvsimError(f"scheduler_reserve_full_isl=True is not available with vllm_version="
                         f"{version!r}: vLLM added it in 0.19; expected vllm_version >= 0.19 or "
                         f"scheduler_reserve_full_isl=False")
    if o["async_scheduling"] is None:
        o["async_scheduling"] = async_scheduling_default(engine, version)
    o["async_scheduling"] = _check_bool("async_scheduling", o["async_scheduling"])
    if o["async_scheduling"] and engine == "v0":
        raise KvsimError("async_scheduling=True is not available with engine='v0': V0 schedules "
                         "synchronously; expected async_scheduling=False or engine='v1'")
    if o["watermark"] is None:
        o["watermark"] = watermark_default(engine)
    o["watermark"] = check_float("watermark", o["watermark"], min=0, max=WATERMARK_MAX,
                                 why="the share of the pool held back from admission; more "
                                     "than half would hold back more than it admits")
    o["long_prefill_token_threshold"] = check_int(
        "long_prefill_token_threshold", o["long_prefill_token_threshold"], min=0, max=10**8)
    o["seed"] = check_int("seed", o["seed"], min=0)
    o["swap_space_bytes"] = check_int("swap_space_bytes", o["swap_space_bytes"], min=0,
                                      max=SWAP_SPACE_MAX, why="bytes of pinned host memory")
    o["warmup_s"] = check_float("warmup_s", o["warmup_s"], min=0)
    if o["until_s"] is not None:
        o["until_s"] = check_float("until_s", o["until_s"], min=0, min_open=True)
    if o["max_tokens"] is not None:
        o["max_tokens"] = check_int("max_tokens", o["max_tokens"], min=1)
    model = get_model(model)
    gpu = get_gpu(gpu)
    o["gpu_memory_utilization"] = check_gpu_memory_utilization(o["gpu_memory_utilization"])
    o["tensor_parallel_size"] = check_int("tensor_parallel_size", o["tensor_parallel_size"],
                                          min=1, max=1024)
    for name in ("activation_bytes", "weight_bytes"):
        if o[name] is not None:
            o[name] = check_int(name, o[name], min=0)
    # SGLang's constants are checked whatever the policy, so a typo never hides.
    o["init_new_token_ratio"], o["min_new_token_ratio"], o["new_token_ratio_decay"] = \
        check_sglang_constants(o["init_new_token_ratio"], o["min_new_token_ratio"],
                               o["new_token_ratio_decay"])
    if o["until_s"] is not None and o["warmup_s"] >= o["until_s"]:
        raise KvsimError(f"warmup_s={o['warmup_s']} is out of range: expected a number in "
                         f"[0, until_s={o['until_s']}) (the warm-up must end before the run does)")
    if o["max_model_len"] is None:
        o["max_model_len"] = model.max_model_len
    o["max_model_len"] = check_int("max_model_len", o["max_model_len"], min=1,
                                   max=model.max_model_len)

    tokens_default, seqs_default = batch_defaults(gpu, o["usage_context"], engine)
    if o["max_num_seqs"] is None:
        o["max_num_seqs"] = seqs_default
    o["max_num_seqs"] = check_int("max_num_seqs", o["max_num_seqs"], min=1, max=1_000_000)
    if o["max_num_batched_tokens"] is None:
        o["max_num_batched_tokens"] = max_num_batched_tokens_default(
            gpu, usage_context=o["usage_context"], engine=engine,
            chunked=o["enable_chunked_prefill"], max_model_len=o["max_model_len"],
            max_num_seqs=o["max_num_seqs"])
    o["max_num_batched_tokens"] = check_int("max_num_batched_tokens", o["max_num_batched_tokens"],
                                            min=1, max=10**8)
    if o["max_num_batched_tokens"] < o["max_num_seqs"]:
        raise KvsimError(f"max_num_batched_tokens={o['max_num_batched_tokens']} is out of range: "
                         f"expected >= max_num_seqs ({o['max_num_seqs']}), as vLLM requires")

    budget = _pool(model, gpu, o)
    o["block_size"] = budget.block_size
    o["kv_dtype"] = budget.kv_dtype
    if o["weight_bytes"] is None:
        o["weight_bytes"] = budget.weight_bytes if o["num_gpu_blocks"] is None else model.weight_bytes
    block_bytes = budget.kv_bytes_per_token * budget.block_size
    o.update(watermark_blocks=int(o["watermark"] * o["num_gpu_blocks"]),
             kv_bytes_per_token=budget.kv_bytes_per_token, block_bytes=block_bytes,
             swap_space_blocks=o["swap_space_bytes"] // block_bytes)
    return model, gpu, budget, cost, EngineConfig(**o)


def _pool(model: ModelSpec, gpu: GPUSpec, o: dict[str, Any]) -> KVBudget:
    """The KV budget, and ``o["num_gpu_blocks"]`` (usable blocks) from memory or from the user."""
    if o["num_gpu_blocks"] is not None and o["kv_cache_tokens"] is not None:
        raise KvsimError("num_gpu_blocks and kv_cache_tokens are both set: expected at most one "
                         "(both pin the pool)")
    common = dict(kv_dtype=o["kv_dtype"], block_size=o["block_size"],
                  tensor_parallel_size=o["tensor_parallel_size"], engine=o["engine"])
    if o["num_gpu_blocks"] is None and o["kv_cache_tokens"] is None:
        budget = kv_budget(gpu, model, gpu_memory_utilization=o["gpu_memory_utilization"],
                           activation_bytes=o["activation_bytes"], weight_bytes=o["weight_bytes"],
                           max_num_batched_tokens=o["max_num_batched_tokens"],
                           max_num_seqs=o["max_num_seqs"], usage_context=o["usage_context"],
                           **common)
        o["num_gpu_blocks"] = budget.blocks
        return budget
    # An explicit pool (vLLM's num_gpu_blocks_override, or its start-up log line):
    # the memory split is not needed, only bytes per token.
    budget = pinned_budget(gpu, model, num_gpu_blocks=o["num_gpu_blocks"],
                           kv_cache_tokens=o["kv_cache_tokens"], **common)
    o["num_gpu_blocks"] = budget.blocks
    return budget
