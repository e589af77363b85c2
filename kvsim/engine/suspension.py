"""TensorRT-LLM's KV cache manager V2 and its scheduler: the rules of suspend and resume.

Explained in ``docs/research/kv-tiers.md``, section 3 (what the engine does, file by file).
``use_kv_cache_manager_v2=True`` with ``admission="max_utilization"`` runs them, as
tensorrt_llm/_torch/pyexecutor/scheduler/scheduler_v2.py @00746ef9 (``KVCacheV2Scheduler``)
and tensorrt_llm/runtime/kv_cache_manager_v2/_core/_kv_cache.py @00f6bd61 (``suspend``,
``resume``) do:

* **Suspend.** A generation request that cannot grow suspends started requests from the
  tail of the active list; a suspended request's pages may leave the GPU for the host tier
  (pages held by a suspended request are evicted to the next level, never dropped, and
  cannot leave the last level). kvsim copies a suspended request's blocks to the host tier
  at once when they fit (:class:`kvsim.engine.swapping.SwapSpace`, sized by
  ``host_cache_size``); they do not fit, or there is no tier, and the suspension frees
  nothing on the GPU: the victim is recompute-paused instead (``enable_recompute_pause``),
  and a request that is itself the last one, or finds no victim it may free, is suspended
  in place (it keeps its blocks and waits, a stall).
* **Context requests** (prefills, scheduled after every decode as the engine's second
  phase) suspend nobody: one out of blocks is skipped; without a host tier (and with
  ``enable_recompute_pause``) it first recompute-pauses the newest started request the step
  does not run (``preempt_for_pages``), and a waiting request does the same.
* **Resume.** A suspended request comes back only while the GPU pool's use is at most
  ``max_util_for_resume`` (:func:`may_resume`), copying its pages back in the pass that
  resumes it (priced as a swap-in, over the PCIe link).
* **Deadlock.** After :data:`DEADLOCK_STALL_PASSES` passes in a row that schedule, suspend
  and pause nothing, the engine raises; kvsim raises :func:`deadlock_error` (its passes
  would all be the same, so it raises at the first).
"""
from __future__ import annotations

from kvsim.errors import KvsimError

__all__ = ["DEADLOCK_STALL_PASSES", "may_resume", "deadlock_error"]

#: ``KVCacheV2Scheduler._DEADLOCK_STALL_ITERS`` (scheduler_v2.py @00746ef9).
DEADLOCK_STALL_PASSES = 1000


def may_resume(used_blocks: int, num_blocks: int, max_util_for_resume: float) -> bool:
    """``_KVCache.resume`` refuses while the GPU pool's use is above ``max_util_for_resume``
    (measured before the resume; the pages must then also fit)."""
    return used_blocks <= max_util_for_resume * num_blocks


def deadlock_error(t_s: float, stuck: int, used_blocks: int, num_blocks: int,
                   host_blocks: int, recompute_pause: bool) -> KvsimError:
    """The engine's ``RuntimeError("V2 scheduler deadlock: ...")``, as one line with its advice."""
    why = "the host tier is full" if host_blocks else "there is no host tier (host_cache_size=0)"
    if not recompute_pause:
        why += " and enable_recompute_pause=False"
    return KvsimError(
        f"at t={t_s:.3f} s TensorRT-LLM's V2 scheduler would stop with 'V2 scheduler deadlock' "
        f"after {DEADLOCK_STALL_PASSES:,} passes without progress: {stuck} requests hold "
        f"{used_blocks} of {num_blocks} blocks and none can grow, resume or be freed, because "
        f"{why}; expected a host_cache_size > 0 (bytes), more KV blocks or a lower max_num_seqs "
        f"(the engine's advice: host_cache_size, max_tokens, max_batch_size)")
