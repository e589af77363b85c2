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
``vllm_version``                      "0.34" (0.11-0.34)          "0.10" (0.6-0.10)
``scheduler_reserve_full_isl``        True (from 0.19; 0.18 and   (whole prompt)
                                      earlier: False)
``prefix_cache_retention_interval``   0 (from 0.29; 0.28 and      "dense"
                                      earlier: "dense")
``async_scheduling``                  True (from 0.14; 0.13 and   False
                                      earlier: False)
``step_overhead_s``/``seq_overhead_s`` V1's CPU overhead          V0's
``kv_offloading_size`` (GiB)          None: no host tier          (not available)
``enable_hierarchical_cache``         False (SGLang's HiCache,    (not available)
                                      with ``admission="sglang"``)
``use_kv_cache_manager_v2``           False (TensorRT-LLM's V2    (not available)
                                      manager and scheduler, with
                                      ``admission="max_utilization"``)
====================================  ==========================  ===============

TensorRT-LLM's KV cache manager V2 (``use_kv_cache_manager_v2=True``) takes its
``KvCacheConfig`` names and units: ``host_cache_size`` (bytes; ``None``: the tier the
engine provisions itself, :func:`trtllm_v2_host_blocks`; 0: no host tier),
``max_util_for_resume`` (0.95) and ``enable_recompute_pause`` (True); without V2 they
keep their defaults.

``vllm_version`` names the release; it decides the defaults that differ between
releases (:mod:`kvsim.model.vllm_defaults` says which releases behave which
way). An explicit value still wins, except that ``scheduler_reserve_full_isl=True``
on a release without the option (0.18 and earlier) is an error naming the release.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from kvsim.errors import (
    KvsimError,
    check_choice,
    check_float,
    check_gpu_memory_utilization,
    check_int,
)
from kvsim.model.hardware import get_gpu
from kvsim.model.kv_groups import window_admission_cap
from kvsim.model.memory import kv_budget, pinned_budget
from kvsim.model.presets import get_model
from kvsim.model.vllm_defaults import (
    ENGINES,
    USAGE_CONTEXTS,
    async_scheduling_default,
    batch_defaults,
    check_vllm_version,
    has_reserve_full_isl,
    has_retention_interval,
    max_num_batched_tokens_default,
    models_host_tier,
    reserve_full_isl_default,
    retention_interval_default,
    vllm_version_default,
    watermark_default,
    watermark_when_alone,
)
from kvsim.units import GiB

from .blocks.host_tier import hicache_blocks, host_tier_blocks
from .blocks.window_retention import DENSE, check_retention_interval
from .cost_model import CostModel

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
#: ``KvCacheConfig.max_util_for_resume``'s default (tensorrt_llm/llmapi/llm_args.py; the
#: PyTorch backend passes it to the V2 manager's runtime config).
TRTLLM_MAX_UTIL_FOR_RESUME = 0.95
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


# ---------------------------------------------------------------------------------------------
# One rule per option: its default, what decides it when unset, and its check


class Settling:
    """An option set being resolved: the values so far, then the model and GPU they run on.

    An option's ``decide`` and ``check`` read the options settled before it (and
    :attr:`model`, :attr:`gpu` once :func:`resolve_options` has read them).
    """

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self._model: ModelSpec | None = None
        self._gpu: GPUSpec | None = None

    @property
    def model(self) -> ModelSpec:
        assert self._model is not None, "read the model before an option that needs it"
        return self._model

    @property
    def gpu(self) -> GPUSpec:
        assert self._gpu is not None, "read the GPU before an option that needs it"
        return self._gpu

    def read_hardware(self, model: ModelLike, gpu: GPULike) -> None:
        """The model and GPU presets (a one-line error names a bad one)."""
        self._model = get_model(model)
        self._gpu = get_gpu(gpu)

    def settle(self, *names: str) -> None:
        """Fill each option's default if it is unset, then check it, in the order given."""
        for name in names:
            rule = OPTION_RULES[name]
            value = self.values[name]
            if value is None and rule.decide is not None:
                value = rule.decide(self)
            if rule.check is not None and not (value is None and rule.optional):
                value = rule.check(name, value, self)
            self.values[name] = value


#: An option's check: ``(name, value, settling)`` -> the value as the engine keeps it, or a
#: one-line :class:`KvsimError` naming the option, the value and what it expected.
Check = Callable[[str, Any, Settling], Any]
#: What decides an unset option (``None``): the engine mode, the release, the model or the GPU.
Decide = Callable[[Settling], Any]


@dataclass(frozen=True)
class OptionRule:
    """One engine option's rule (the metadata of its :class:`EngineConfig` field)."""

    default: Any
    check: Check | None        # None: the pool checks it (kvsim.model.memory), or a group does
    decide: Decide | None      # None: an unset value stays None (or is an error, if checked)
    optional: bool             # None means "not set": kept as None, never checked


def option(default: Any = None, check: Check | None = None, *, decide: Decide | None = None,
           optional: bool = False) -> Any:
    """An :class:`EngineConfig` field that is an engine option of :func:`kvsim.simulate`."""
    return field(metadata={"option": OptionRule(default, check, decide, optional)})


def _ints(*, min: int, max: int | None = None, why: str | None = None) -> Check:
    def check(name: str, value: Any, _: Settling) -> int:
        return check_int(name, value, min=min, max=max, why=why)
    return check


def _floats(*, min: float, max: float | None = None, min_open: bool = False,
            why: str | None = None) -> Check:
    def check(name: str, value: Any, _: Settling) -> float:
        return check_float(name, value, min=min, max=max, min_open=min_open, why=why)
    return check


def _one_of(*choices: str) -> Check:
    def check(name: str, value: Any, _: Settling) -> str:
        return check_choice(name, value, choices)
    return check


def _boolean(name: str, value: Any, _: Settling) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise KvsimError(f"{name}={value!r} is not a boolean: expected true or false")


def _release(name: str, value: Any, s: Settling) -> str:
    return check_vllm_version(value, s.values["engine"])


def _retention(name: str, value: Any, s: Settling) -> int | str:
    """``prefix_cache_retention_interval``: a whole number of tokens >= 0, or ``"dense"`` (vLLM's
    None), on a release that has it (a multiple of the block size is checked with the pool)."""
    if isinstance(value, str) and value.lower() == DENSE:
        return DENSE
    if isinstance(value, str):
        raise KvsimError(f"{name}={value!r} is not a retention interval: expected a whole "
                         f"number of tokens >= 0 or {DENSE!r} (vLLM's None)")
    interval = check_int(name, value, min=0, max=10**9)
    o = s.values
    if not has_retention_interval(o["engine"], o["vllm_version"]):
        raise KvsimError(f"{name}={interval} is not available with engine={o['engine']!r} "
                         f"vllm_version={o['vllm_version']!r}: vLLM V1 added it in 0.23; expected "
                         f"{DENSE!r} or vllm_version >= 0.23")
    return interval


def _pool_share(name: str, value: Any, _: Settling) -> float:
    return check_gpu_memory_utilization(value)


def _context_length(name: str, value: Any, s: Settling) -> int:
    return check_int(name, value, min=1, max=s.model.max_model_len)


def _token_budget_default(s: Settling) -> int:
    o = s.values
    return max_num_batched_tokens_default(
        s.gpu, usage_context=o["usage_context"], engine=o["engine"],
        chunked=o["enable_chunked_prefill"], max_model_len=o["max_model_len"],
        max_num_seqs=o["max_num_seqs"])


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """Every resolved option of one simulation (see :data:`ENGINE_DEFAULTS`).

    Each option's field states its default (``None``: decided by the engine
    mode, the release, the model or the GPU, see the module's table), its
    range and its one-line error; :func:`resolve_options` settles them.
    Derived figures: ``num_gpu_blocks`` (usable blocks; for a model with sliding-window
    layers the option counts vLLM's blocks, one KV cache group's each, and the resolved
    figure is the engine's pool: those, or, where every group holds the full context, those
    divided by the groups, :func:`_engine_pool`), ``watermark_blocks``,
    ``kv_bytes_per_token`` (for the whole TP group), ``block_bytes``,
    ``weight_bytes``, ``swap_space_blocks``.
    """

    engine: str = option("v1", _one_of(*ENGINES))
    vllm_version: str = option(None, _release,     # the newest release kvsim knows for the mode
                               decide=lambda s: vllm_version_default(s.values["engine"]))
    usage_context: str = option("server", _one_of(*USAGE_CONTEXTS))
    gpu_memory_utilization: float = option(0.90, _pool_share)
    kv_dtype: str = option(None)                    # None: the model's; checked by the pool
    block_size: int = option(16)                    # checked by the pool
    num_gpu_blocks: int = option(None)              # None: from memory; checked by the pool
    kv_cache_tokens: int | None = option(None)      # checked by the pool
    max_num_seqs: int = option(None, _ints(min=1, max=1_000_000), decide=lambda s: batch_defaults(
        s.gpu, s.values["usage_context"], s.values["engine"])[1])
    max_num_batched_tokens: int = option(None, _ints(min=1, max=10**8),
                                         decide=_token_budget_default)
    max_model_len: int = option(None, _context_length, decide=lambda s: s.model.max_model_len)
    enable_chunked_prefill: bool = option(True, _boolean)
    long_prefill_token_threshold: int = option(0, _ints(min=0, max=10**8))
    scheduler_reserve_full_isl: bool = option(None, _boolean, decide=lambda s: (
        reserve_full_isl_default(s.values["engine"], s.values["vllm_version"])))
    async_scheduling: bool = option(None, _boolean, decide=lambda s: (
        async_scheduling_default(s.values["engine"], s.values["vllm_version"])))
    enable_prefix_caching: bool = option(None, _boolean,
                                         decide=lambda s: s.values["engine"] == "v1")
    # which sliding-window blocks keep their hash: tokens between retained windows, or "dense"
    prefix_cache_retention_interval: int | str = option(None, _retention, decide=lambda s: (
        retention_interval_default(s.values["engine"], s.values["vllm_version"])))
    watermark: float = option(None, _floats(
        min=0, max=WATERMARK_MAX, why="the share of the pool held back from admission; more "
                                      "than half would hold back more than it admits"),
        decide=lambda s: watermark_default(s.values["engine"]))
    preemption_mode: str = option("recompute", _one_of("recompute", "swap"))
    swap_space_bytes: int = option(4 * GiB, _ints(min=0, max=SWAP_SPACE_MAX,
                                                  why="bytes of pinned host memory"))
    swap_space_full: str = option("abort", _one_of("abort", "recompute"))
    # vLLM V1's host-memory KV tier: --kv-offloading-size (GiB) and --kv-offloading-backend
    kv_offloading_size: float | None = option(None, _floats(
        min=0, min_open=True, max=1_000_000, why="GiB of host memory for the KV tier"),
        optional=True)
    kv_offloading_backend: str = option("native", _one_of("native", "lmcache"))
    # SGLang's HiCache: --enable-hierarchical-cache, --hicache-ratio, --hicache-size (GB),
    # --hicache-write-policy
    enable_hierarchical_cache: bool = option(False, _boolean)
    hicache_ratio: float = option(2.0, _floats(
        min=0, min_open=True, max=1000, why="host tokens per token of the GPU pool"))
    hicache_size: int = option(0, _ints(
        min=0, max=1_000_000, why="GB (10**9 bytes) of host memory per GPU; 0: hicache_ratio "
                                  "sizes the tier"))
    hicache_write_policy: str = option("write_through", _one_of(
        "write_through", "write_through_selective", "write_back"))
    # TensorRT-LLM's KV cache manager V2 and its scheduler (KvCacheConfig's names and units)
    use_kv_cache_manager_v2: bool = option(False, _boolean)
    host_cache_size: int | None = option(None, _ints(
        min=0, max=SWAP_SPACE_MAX, why="bytes of host memory for the V2 manager's host tier; "
                                       "0: none, None: the engine's own size"), optional=True)
    max_util_for_resume: float = option(TRTLLM_MAX_UTIL_FOR_RESUME, _floats(
        min=0, max=1, why="the share of the GPU pool in use above which a suspended request "
                          "is not resumed"))
    enable_recompute_pause: bool = option(True, _boolean)
    unfit_requests: str = option("reject", _one_of("reject", "error"))
    scheduling_policy: str = option("fcfs", _one_of("fcfs", "priority"))
    max_tokens: int | None = option(None, _ints(min=1), optional=True)
    admission: str = option("optimistic", _one_of(*ADMISSION_NAMES))
    seed: int = option(0, _ints(min=0))
    until_s: float | None = option(None, _floats(min=0, min_open=True), optional=True)
    warmup_s: float = option(0.0, _floats(min=0))
    tensor_parallel_size: int = option(1, _ints(min=1, max=1024))
    activation_bytes: int | None = option(None, _ints(min=0), optional=True)
    weight_bytes: int = option(None, _ints(min=0), optional=True)   # None: from the pool
    # SGLang's three constants: one check for the three (check_sglang_constants)
    init_new_token_ratio: float = option(0.7)
    min_new_token_ratio: float = option(None)       # SGLang: init x SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR
    new_token_ratio_decay: float | None = option(None)
    step_by_step: bool = option(False, _boolean)
    check: bool = option(False, _boolean)
    watermark_blocks: int = field()
    kv_bytes_per_token: int = field()
    block_bytes: int = field()
    kv_cache_groups: int = field()      # vLLM's KV cache groups (of which sliding-window:)
    kv_window_groups: int = field()     # 0: every group holds the full context
    sliding_window: int = field()       # the window groups' window (0: none)
    window_cap_blocks: int = field()    # a window group's admission cap (vLLM 0.20+)
    swap_space_blocks: int = field()
    host_tier_blocks: int = field()     # 0: no host tier
    host_block_bytes: int = field()     # a block's bytes on the host (page-aligned)
    suspend_host_blocks: int = field()  # TensorRT-LLM V2's host tier, in GPU blocks (0: none)

    @property
    def host_tier(self) -> str | None:
        """Which engine's host-memory KV tier runs: ``"vllm"`` (``kv_offloading_size``),
        ``"sglang"`` (``enable_hierarchical_cache``) or None."""
        if self.kv_offloading_size is not None:
            return "vllm"
        return "sglang" if self.enable_hierarchical_cache else None

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
        """Every field, by name, in order: what ``dataclasses.asdict`` gives (every value is an
        immutable scalar, so no deep copy), at a fraction of its cost."""
        return {name: getattr(self, name) for name in _FIELD_NAMES}


#: :class:`EngineConfig`'s fields, in order.
_FIELD_NAMES = tuple(f.name for f in fields(EngineConfig))
#: Every engine option's rule, by name, in :class:`EngineConfig`'s order.
OPTION_RULES: dict[str, OptionRule] = {
    f.name: f.metadata["option"] for f in fields(EngineConfig) if "option" in f.metadata}
#: Engine options and their defaults (``None``: the engine mode decides; see the table above):
#: a view of :data:`OPTION_RULES`.
ENGINE_DEFAULTS: dict[str, Any] = {name: rule.default for name, rule in OPTION_RULES.items()}
_COST_OPTIONS = set(CostModel.names())


#: What :func:`resolve_options` returns.
Resolved: TypeAlias = "tuple[ModelSpec, GPUSpec, KVBudget, CostModel, EngineConfig]"
#: A resolution's key: the model's and the GPU's specs, then each option's name, type and repr.
ResolutionKey: TypeAlias = "tuple[tuple[ModelSpec, GPUSpec], tuple[tuple[str, type, str], ...]]"
#: Option values a resolution is remembered for: immutable, and told apart by their type and
#: ``repr`` (so ``1``, ``1.0`` and ``True``, or ``0.0`` and ``-0.0``, are different keys).
_PLAIN_VALUES = (str, int, float, bool, type(None))
#: The most resolutions remembered (the oldest goes first): a sweep's grid, or a book
#: page's sliders, re-run a few configurations many times.
RESOLVED_MAX = 64
_resolved: dict[ResolutionKey, Resolved] = {}


def resolve_options(model: ModelLike, gpu: GPULike, options: Mapping[str, Any]) -> Resolved:
    """Validate ``options``; return ``(model, gpu, budget, cost_model, EngineConfig)``.

    The options are checked in a fixed order (so the first bad one is the one named), each
    by its own rule, with the rules between options in between. The answer depends only on
    the model's and the GPU's specs and the options, and every part of it is frozen, so
    the last :data:`RESOLVED_MAX` answers are remembered (each caller gets its own copy of
    the config), keyed on those values when all of them are plain (:data:`_PLAIN_VALUES`;
    a model or GPU given as a spec or a name is keyed on its spec); anything else, and
    every bad input, is resolved (and refused) afresh.
    """
    key = _resolution_key(model, gpu, options)
    if key is None:
        return _resolve(model, gpu, options)
    resolved = _resolved.get(key)
    if resolved is None:
        model_spec, gpu_spec = key[0]
        resolved = _resolve(model_spec, gpu_spec, options)
        oldest = next(iter(_resolved), None) if len(_resolved) >= RESOLVED_MAX else None
        if oldest is not None:
            _resolved.pop(oldest, None)         # (another thread may have taken it out first)
        _resolved[key] = resolved
    model_spec, gpu_spec, budget, cost, config = resolved
    # each run its own EngineConfig: frozen, but a test plants a fault in one run's with
    # object.__setattr__ (tests/test_invariants.py), which must not reach the next run
    return model_spec, gpu_spec, budget, cost, copy.copy(config)


def _resolution_key(model: ModelLike, gpu: GPULike, options: Mapping[str, Any]) \
        -> ResolutionKey | None:
    """The key :func:`resolve_options` remembers a resolution by, or None when an option's
    value is not plain, or the model or the GPU is not known (the resolution names it, in
    its order)."""
    values = []
    for name, value in options.items():
        kind = type(value)
        if kind not in _PLAIN_VALUES:
            return None
        values.append((name, kind, repr(value)))
    try:
        key = ((get_model(model), get_gpu(gpu)), tuple(sorted(values)))
        hash(key)
    except (KvsimError, TypeError):
        return None
    return key


def _resolve(model: ModelLike, gpu: GPULike, options: Mapping[str, Any]) -> Resolved:
    """:func:`resolve_options`, every time."""
    unknown = set(options) - set(ENGINE_DEFAULTS) - _COST_OPTIONS
    if unknown:
        name = sorted(unknown)[0]
        raise KvsimError(f"engine option {name!r} is not known: expected one of "
                         f"{', '.join(sorted(set(ENGINE_DEFAULTS) | _COST_OPTIONS))}")
    s = Settling({name: options.get(name, rule.default) for name, rule in OPTION_RULES.items()})
    cost = CostModel().with_options(**{k: v for k, v in options.items() if k in _COST_OPTIONS})
    o = s.values

    s.settle("engine", "usage_context", "preemption_mode")
    if o["preemption_mode"] == "swap" and o["engine"] == "v1":
        raise KvsimError("preemption_mode='swap' is not available with engine='v1': vLLM V1 "
                         "only recomputes; expected engine='v0' to simulate swap")
    s.settle("swap_space_full", "unfit_requests", "scheduling_policy", "admission",
             "enable_chunked_prefill", "step_by_step", "check", "enable_prefix_caching")
    if o["preemption_mode"] == "swap" and o["enable_prefix_caching"]:
        # NOTE(no-swap-with-prefix-cache): V0's swap predates the prefix cache; not modelled
        raise KvsimError("preemption_mode='swap' with enable_prefix_caching=True is not "
                         "modelled: expected enable_prefix_caching=False with swap")
    s.settle("vllm_version", "scheduler_reserve_full_isl", "prefix_cache_retention_interval")
    version = o["vllm_version"]
    if o["scheduler_reserve_full_isl"] and o["engine"] == "v1" and not has_reserve_full_isl(version):
        raise KvsimError(f"scheduler_reserve_full_isl=True is not available with vllm_version="
                         f"{version!r}: vLLM added it in 0.19; expected vllm_version >= 0.19 or "
                         f"scheduler_reserve_full_isl=False")
    s.settle("kv_offloading_size", "kv_offloading_backend", "enable_hierarchical_cache",
             "hicache_ratio", "hicache_size", "hicache_write_policy")
    if o["kv_offloading_size"] is not None:
        _check_host_tier(o)
    if o["enable_hierarchical_cache"]:
        _check_hicache(o)
    s.settle("use_kv_cache_manager_v2", "host_cache_size", "max_util_for_resume",
             "enable_recompute_pause")
    _check_trtllm_v2(o)
    s.settle("async_scheduling")
    if o["async_scheduling"] and o["engine"] == "v0":
        raise KvsimError("async_scheduling=True is not available with engine='v0': V0 schedules "
                         "synchronously; expected async_scheduling=False or engine='v1'")
    s.settle("watermark", "long_prefill_token_threshold", "seed", "swap_space_bytes", "warmup_s",
             "until_s", "max_tokens")
    s.read_hardware(model, gpu)
    s.settle("gpu_memory_utilization", "tensor_parallel_size", "activation_bytes", "weight_bytes")
    # SGLang's constants are checked whatever the policy, so a typo never hides.
    o["init_new_token_ratio"], o["min_new_token_ratio"], o["new_token_ratio_decay"] = \
        check_sglang_constants(o["init_new_token_ratio"], o["min_new_token_ratio"],
                               o["new_token_ratio_decay"])
    if o["until_s"] is not None and o["warmup_s"] >= o["until_s"]:
        raise KvsimError(f"warmup_s={o['warmup_s']} is out of range: expected a number in "
                         f"[0, until_s={o['until_s']}) (the warm-up must end before the run does)")
    s.settle("max_model_len", "max_num_seqs", "max_num_batched_tokens")
    if o["max_num_batched_tokens"] < o["max_num_seqs"]:
        raise KvsimError(f"max_num_batched_tokens={o['max_num_batched_tokens']} is out of range: "
                         f"expected >= max_num_seqs ({o['max_num_seqs']}), as vLLM requires")

    model_spec, gpu_spec = s.model, s.gpu
    budget = _pool(model_spec, gpu_spec, o)
    o["block_size"] = budget.block_size
    o["kv_dtype"] = budget.kv_dtype
    check_retention_interval(o["prefix_cache_retention_interval"], block_size=budget.block_size,
                             window_groups=budget.groups.window_groups)
    if o["weight_bytes"] is None:
        o["weight_bytes"] = (budget.weight_bytes if o["num_gpu_blocks"] is None
                             else model_spec.weight_bytes)
    block_bytes = budget.block_bytes * (1 if o["kv_window_groups"] else o["kv_cache_groups"])
    host_blocks, host_block_bytes = _host_tier_size(o, block_bytes, budget.kv_bytes_per_token)
    o.update(watermark_blocks=int(o["watermark"] * o["num_gpu_blocks"]),
             kv_bytes_per_token=budget.kv_bytes_per_token, block_bytes=block_bytes,
             swap_space_blocks=o["swap_space_bytes"] // block_bytes,
             host_tier_blocks=host_blocks, host_block_bytes=host_block_bytes,
             suspend_host_blocks=trtllm_v2_host_blocks(o, block_bytes))
    return model_spec, gpu_spec, budget, cost, EngineConfig(**o)


def _check_host_tier(o: dict[str, Any]) -> None:
    """The host tier is vLLM V1's native connector, as 0.23 and later run it (one line names
    what else is asked)."""
    if o["engine"] != "v1":
        raise KvsimError("kv_offloading_size is not available with engine='v0': V0 has "
                         "swap_space_bytes instead; expected engine='v1'")
    if o["kv_offloading_backend"] != "native":
        raise KvsimError(f"kv_offloading_backend={o['kv_offloading_backend']!r} is not modelled: "
                         "LMCache's own server sets its capacity; expected 'native'")
    if not o["enable_prefix_caching"]:
        raise KvsimError("kv_offloading_size with enable_prefix_caching=False is not modelled: "
                         "the connector names blocks by their prefix hashes; expected "
                         "enable_prefix_caching=True")
    if o["admission"] != "optimistic":
        raise KvsimError(f"kv_offloading_size with admission={o['admission']!r} is not modelled: "
                         "it is vLLM's connector; expected admission='optimistic'")
    if not models_host_tier(o["vllm_version"]):
        raise KvsimError(f"kv_offloading_size with vllm_version={o['vllm_version']!r} is not "
                         "modelled: kvsim models the tier of 0.23 and later (prompt blocks only); "
                         "expected vllm_version 0.23 to 0.34")


def _check_hicache(o: dict[str, Any]) -> None:
    """HiCache is SGLang's, with its radix cache, as its default write policy runs it."""
    if o["admission"] != "sglang":
        raise KvsimError(f"enable_hierarchical_cache=True with admission={o['admission']!r} is "
                         "not modelled: it is SGLang's host tier; expected admission='sglang'")
    if o["engine"] != "v1" or not o["enable_prefix_caching"]:
        raise KvsimError("enable_hierarchical_cache=True needs the prefix cache (SGLang's radix "
                         "cache): expected engine='v1' and enable_prefix_caching=True")
    if o["hicache_write_policy"] != "write_through":
        raise KvsimError(f"hicache_write_policy={o['hicache_write_policy']!r} is not modelled: "
                         "expected 'write_through' (SGLang's default)")


def _check_trtllm_v2(o: dict[str, Any]) -> None:
    """TensorRT-LLM's V2 manager runs only its V2 scheduler's MAX_UTILIZATION; its options
    mean nothing without it (one line names what else is asked)."""
    if not o["use_kv_cache_manager_v2"]:
        for name, default in (("host_cache_size", None),
                              ("max_util_for_resume", TRTLLM_MAX_UTIL_FOR_RESUME),
                              ("enable_recompute_pause", True)):
            if o[name] != default:
                raise KvsimError(f"{name}={o[name]!r} is only modelled with "
                                 "use_kv_cache_manager_v2=True (TensorRT-LLM's V2 manager); "
                                 f"expected use_kv_cache_manager_v2=True or {name}={default!r}")
        return
    if o["admission"] == "guaranteed":
        # TensorRT-LLM logs a warning and runs MAX_UTILIZATION instead; kvsim refuses, so that
        # a run's admission option always names the policy that ran
        raise KvsimError("use_kv_cache_manager_v2=True with admission='guaranteed' is not "
                         "modelled: TensorRT-LLM's V2 scheduler overrides GUARANTEED_NO_EVICT "
                         "with MAX_UTILIZATION; expected admission='max_utilization'")
    if o["admission"] != "max_utilization":
        raise KvsimError(f"use_kv_cache_manager_v2=True with admission={o['admission']!r} is "
                         "not modelled: it is TensorRT-LLM's; expected "
                         "admission='max_utilization'")
    if o["engine"] != "v1" or o["preemption_mode"] != "recompute" \
            or o["scheduling_policy"] != "fcfs":
        raise KvsimError("use_kv_cache_manager_v2=True needs engine='v1', "
                         "preemption_mode='recompute' and scheduling_policy='fcfs' (the V2 "
                         "scheduler suspends to its own host tier, in arrival order)")


def trtllm_v2_host_blocks(o: Mapping[str, Any], block_bytes: int) -> int:
    """GPU blocks TensorRT-LLM V2's host tier holds (0: none): ``host_cache_size`` bytes, or,
    when it is None, the tier ``KVCacheManagerV2`` provisions itself (kv_cache_manager_v2.py
    @00043967, ``_compute_auto_host_tier_quota``): min(GPU quota, free host memory / ranks
    x 0.5, RLIMIT_MEMLOCK x 0.8)."""
    if not o["use_kv_cache_manager_v2"]:
        return 0
    size = o["host_cache_size"]
    if size is None:
        # NOTE(trtllm-auto-host-tier): kvsim knows no host's free memory or memlock limit, so
        # the automatic tier is the GPU quota (the rule's value on a host with room to spare)
        return int(o["num_gpu_blocks"])
    return int(size) // block_bytes


def _host_tier_size(o: dict[str, Any], block_bytes: int, kv_bytes_per_token: int) \
        -> tuple[int, int]:
    """``(blocks, bytes per block)`` of the host tier the options ask for (``(0, 0)``: none)."""
    if o["kv_offloading_size"] is not None:
        return host_tier_blocks(int(o["kv_offloading_size"] * GiB), block_bytes)
    if o["enable_hierarchical_cache"]:
        per_gpu = kv_bytes_per_token // o["tensor_parallel_size"]
        return hicache_blocks(o["num_gpu_blocks"] * o["block_size"], o["hicache_ratio"],
                              o["hicache_size"], per_gpu, o["block_size"]), block_bytes
    return 0, 0


def _pool(model: ModelSpec, gpu: GPUSpec, o: dict[str, Any]) -> KVBudget:
    """The KV budget, and ``o["num_gpu_blocks"]`` (usable blocks) from memory or from the user."""
    if o["num_gpu_blocks"] is not None and o["kv_cache_tokens"] is not None:
        raise KvsimError("num_gpu_blocks and kv_cache_tokens are both set: expected at most one "
                         "(both pin the pool)")
    common = dict(kv_dtype=o["kv_dtype"], block_size=o["block_size"],
                  tensor_parallel_size=o["tensor_parallel_size"], engine=o["engine"],
                  max_num_batched_tokens=o["max_num_batched_tokens"],
                  async_scheduling=o["async_scheduling"])
    if o["num_gpu_blocks"] is None and o["kv_cache_tokens"] is None:
        budget = kv_budget(gpu, model, gpu_memory_utilization=o["gpu_memory_utilization"],
                           activation_bytes=o["activation_bytes"], weight_bytes=o["weight_bytes"],
                           max_num_seqs=o["max_num_seqs"], usage_context=o["usage_context"],
                           **common)
        _engine_pool(o, budget)
        return budget
    # An explicit pool (vLLM's num_gpu_blocks_override, or its start-up log line):
    # the memory split is not needed, only bytes per token.
    budget = pinned_budget(gpu, model, num_gpu_blocks=o["num_gpu_blocks"],
                           kv_cache_tokens=o["kv_cache_tokens"], max_model_len=o["max_model_len"],
                           vllm_version=o["vllm_version"], **common)
    _engine_pool(o, budget)
    return budget


def _frees_windows(o: dict[str, Any], window_groups: int) -> bool:
    """Do the window groups hold only their window in this run (vLLM V1, optimistic admission)?

    With the prefix cache on, which freed window blocks stay findable is vLLM's
    ``prefix_cache_retention_interval``, and a window group's hit needs the last
    ``window - 1`` tokens' blocks (:mod:`kvsim.engine.blocks.window_retention`): the engine
    runs those block by block (:mod:`kvsim.engine.blocks.window_cache`).
    NOTE(sliding-window-host-tier): not with a host tier (``kv_offloading_size``), whose
    stores and loads kvsim keys by token blocks over every group: those runs keep the
    full-context rule (NOTE(sliding-window-full-context)), as do the SGLang and
    TensorRT-LLM policies.
    """
    return (window_groups > 0 and o["engine"] == "v1" and o["admission"] == "optimistic"
            and o["kv_offloading_size"] is None)


def _engine_pool(o: dict[str, Any], budget: KVBudget) -> None:
    """``o["num_gpu_blocks"]``: the engine's blocks, each the blocks of every KV cache group
    for the same tokens (``o["kv_cache_groups"]`` of vLLM's, :attr:`KVBudget.groups`).

    NOTE(sliding-window-full-context): the engine charges sliding-window groups the full
    context, as vLLM V1 does with its hybrid allocator off (V0's one block table too).
    NOTE(kv-groups-one-table): every group holds the full context, so kvsim keeps one block
    table per request whose block spans the groups' blocks of the same tokens; vLLM's pool of
    ``budget.blocks`` group blocks holds ``budget.blocks // groups`` of them (a remainder of
    fewer than ``groups`` blocks is left unused, where vLLM could give it to one group).
    The other engines' policies run on the same pool: NOTE(sglang-swa-pool): SGLang 0.5.23
    keeps sliding-window layers in a pool of their own (``SWAKVPool``, its size
    ``swa_full_tokens_ratio`` of the full pool's tokens, model_executor/pool_configurator.py);
    NOTE(trtllm-window-pools): TensorRT-LLM's KV cache manager keeps a block manager per
    attention window (``WindowBlockManager``, kvCacheManager.h); kvsim models neither.
    """
    layout = budget.groups
    groups = len(layout.groups)
    o["kv_cache_groups"] = groups
    o["kv_window_groups"] = o["sliding_window"] = o["window_cap_blocks"] = 0
    if _frees_windows(o, layout.window_groups):
        # vLLM V1's hybrid allocator: the pool is its group blocks; every group takes a block
        # for each new token block, the window groups give back what leaves their window
        assert layout.window is not None
        o["kv_window_groups"] = layout.window_groups
        o["sliding_window"] = layout.window
        o["window_cap_blocks"] = window_admission_cap(
            layout.window, o["max_model_len"], budget.block_size,
            (2 if o["async_scheduling"] else 1) * o["max_num_batched_tokens"])
        o["num_gpu_blocks"] = budget.blocks
        return
    o["num_gpu_blocks"] = budget.blocks // groups
    if o["num_gpu_blocks"] < 1:
        raise KvsimError(f"num_gpu_blocks={budget.blocks} is out of range for {budget.model.name}: "
                         f"expected at least {groups}, one block for each of its {groups} KV "
                         f"cache groups")
