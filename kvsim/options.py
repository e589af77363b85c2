"""Engine options: their names, defaults and validation.

``simulate`` takes vLLM's engine-argument names where one exists
(``gpu_memory_utilization``, ``block_size``, ``max_num_seqs``, ...), plus
kvsim's own (``admission``, ``seed``, ``until_s``, ``warmup_s``, ...) and the
cost-model constants of :class:`kvsim.CostModel`. :func:`resolve_options`
checks every one and turns them into the engine's configuration: the KV pool
(from :func:`kvsim.kv_budget`, or ``num_gpu_blocks``), the cost model and the
scheduler limits. Explained in chapter 2.
"""
from __future__ import annotations

import numpy as np

from .costs import CostModel
from .errors import KvsimError, check_choice, check_float, check_int
from .hardware import get_gpu
from .memory import kv_budget
from .models import get_model
from .policies import ADMISSIONS
from .units import GiB

__all__ = ["ENGINE_DEFAULTS", "resolve_options"]

#: Engine options and their defaults (vLLM engine-argument names where one exists).
ENGINE_DEFAULTS = {
    "gpu_memory_utilization": 0.90,
    "kv_dtype": None,
    "block_size": 16,
    "num_gpu_blocks": None,
    "max_num_seqs": 256,
    "max_num_batched_tokens": None,
    "enable_chunked_prefill": True,
    "watermark": 0.01,
    "preemption_mode": "recompute",
    "swap_space_bytes": 4 * GiB,
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
    "min_new_token_ratio": 0.1,
    "new_token_ratio_decay": None,
    "step_by_step": False,
}
_COST_OPTIONS = set(CostModel.names())


def resolve_options(model, gpu, options):
    """Validate ``options`` and return ``(model, gpu, budget, cost_model, options)``."""
    unknown = set(options) - set(ENGINE_DEFAULTS) - _COST_OPTIONS
    if unknown:
        name = sorted(unknown)[0]
        raise KvsimError(f"engine option {name!r} is not known: expected one of "
                         f"{', '.join(sorted(set(ENGINE_DEFAULTS) | _COST_OPTIONS))}")
    o = dict(ENGINE_DEFAULTS)
    o.update({k: v for k, v in options.items() if k in ENGINE_DEFAULTS})
    cost = CostModel().with_options(**{k: v for k, v in options.items() if k in _COST_OPTIONS})

    o["max_num_seqs"] = check_int("max_num_seqs", o["max_num_seqs"], min=1, max=1_000_000)
    o["enable_chunked_prefill"] = _check_bool("enable_chunked_prefill", o["enable_chunked_prefill"])
    o["step_by_step"] = _check_bool("step_by_step", o["step_by_step"])
    o["watermark"] = check_float("watermark", o["watermark"], min=0, max=1, max_open=True)
    check_choice("preemption_mode", o["preemption_mode"], ["recompute", "swap"])
    check_choice("scheduling_policy", o["scheduling_policy"], ["fcfs", "priority"])
    check_choice("admission", o["admission"], list(ADMISSIONS))
    o["seed"] = check_int("seed", o["seed"], min=0)
    o["swap_space_bytes"] = check_int("swap_space_bytes", o["swap_space_bytes"], min=0)
    o["warmup_s"] = check_float("warmup_s", o["warmup_s"], min=0)
    if o["until_s"] is not None:
        o["until_s"] = check_float("until_s", o["until_s"], min=0, min_open=True)
    if o["max_tokens"] is not None:
        o["max_tokens"] = check_int("max_tokens", o["max_tokens"], min=1)
    model = get_model(model)
    gpu = get_gpu(gpu)
    o["gpu_memory_utilization"] = check_float("gpu_memory_utilization", o["gpu_memory_utilization"],
                                              min=0, max=1, min_open=True)
    for name in ("activation_bytes", "weight_bytes"):
        if o[name] is not None:
            o[name] = check_int(name, o[name], min=0)
    # SGLang's constants are checked whatever the policy, so a typo never hides.
    o["init_new_token_ratio"] = check_float("init_new_token_ratio", o["init_new_token_ratio"],
                                            min=0, max=1)
    o["min_new_token_ratio"] = check_float("min_new_token_ratio", o["min_new_token_ratio"],
                                           min=0, max=o["init_new_token_ratio"])
    if o["new_token_ratio_decay"] is not None:
        o["new_token_ratio_decay"] = check_float("new_token_ratio_decay",
                                                 o["new_token_ratio_decay"], min=0, max=1)
    if o["until_s"] is not None and o["warmup_s"] >= o["until_s"]:
        raise KvsimError(f"warmup_s={o['warmup_s']} is out of range: expected a number in "
                         f"[0, until_s={o['until_s']}) (the warm-up must end before the run does)")
    if o["num_gpu_blocks"] is None:
        budget = kv_budget(gpu, model, gpu_memory_utilization=o["gpu_memory_utilization"],
                           kv_dtype=o["kv_dtype"], block_size=o["block_size"],
                           activation_bytes=o["activation_bytes"], weight_bytes=o["weight_bytes"],
                           tensor_parallel_size=o["tensor_parallel_size"])
        o["num_gpu_blocks"] = budget.blocks
    else:
        # An explicit pool (vLLM's num_gpu_blocks_override): the memory split
        # is not needed, only bytes per token and the weights read per step.
        o["num_gpu_blocks"] = check_int("num_gpu_blocks", o["num_gpu_blocks"], min=1, max=10**9)
        budget = kv_budget(gpu, model, gpu_memory_utilization=1.0, kv_dtype=o["kv_dtype"],
                           block_size=o["block_size"], activation_bytes=0, weight_bytes=0,
                           tensor_parallel_size=o["tensor_parallel_size"])
        if o["weight_bytes"] is None:
            o["weight_bytes"] = model.weight_bytes
    o["block_size"] = budget.block_size
    o["kv_dtype"] = budget.kv_dtype
    if o["max_num_batched_tokens"] is None:
        o["max_num_batched_tokens"] = max(2048, o["max_num_seqs"]) if o["enable_chunked_prefill"] \
            else max(8192, o["max_num_seqs"])
    o["max_num_batched_tokens"] = check_int("max_num_batched_tokens", o["max_num_batched_tokens"],
                                            min=1, max=10**8)
    if o["max_num_batched_tokens"] < o["max_num_seqs"]:
        raise KvsimError(f"max_num_batched_tokens={o['max_num_batched_tokens']} is out of range: "
                         f"expected >= max_num_seqs ({o['max_num_seqs']}), as vLLM requires")
    return model, gpu, budget, cost, o


def _check_bool(name, v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    raise KvsimError(f"{name}={v!r} is not a boolean: expected true or false")


