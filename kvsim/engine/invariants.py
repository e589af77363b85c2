"""The scheduler's invariants, asserted after every step with ``simulate(..., check=True)``.

vLLM's ``Scheduler.schedule()`` ends by asserting that the tokens it scheduled
fit the step's budget and that no more requests run than ``max_num_seqs``
(vllm/v1/core/sched/scheduler.py: ``total_num_scheduled_tokens <=
max_num_scheduled_tokens``, ``len(self.running) <= self.max_num_running_reqs``).
kvsim checks those and what its own bookkeeping promises, after every step (a
run of identical decode steps counts as one):

* **budget and batch**: the step's tokens fit ``max_num_batched_tokens``, the
  running requests ``max_num_seqs``;
* **queues**: a request is in at most one of running, waiting and swapped;
  every prefilling or decoding request is running, and none is both;
* **the pool**: its cached-free count is what its free queue holds, every
  indexed run and shared-prefix block is where the index says, no block is
  free and held at once, and free blocks never exceed the pool;
* **blocks conserved**: the blocks in use (the pool less its free ones) are
  exactly what the running requests hold, each shared-prefix block counted
  once however many requests hold it; a decoding request holds the blocks of
  its stored tokens, a prefilling one at least those of what it computed;
* **tokens**: no request generated more than its answer, computed more than
  its target or stores more than ``max_model_len``; at the end of the run,
  every finished request has its whole answer (:func:`check_finished`);
* **window context** (sliding-window attention): the decode group's members
  below their window are the ones it counts and sums the offsets of, each
  with its capped step due, and none it counts at the window is below it;
* **refused requests** (``unfit_requests="reject"``) are in no queue after any
  step, and at the end of the run none of them was ever scheduled, holds a
  block, generated a token, was preempted or finished;
* **the books**, at the end of the run: every request that arrived finished,
  was refused or is still running, waiting or swapped (nothing is lost or
  counted twice); the timeline ends at the run's time (``simulated_s``); and
  when nothing is left in the engine, its last row shows no request running,
  waiting or swapped and no block in use, whatever the last event was (a
  request refused after the last step included).

A broken invariant raises ``AssertionError`` naming the step, the time and
every rule broken. The checks read the scheduler's state and change nothing,
so a checked run gives the same result as an unchecked one (tests prove it).
They are off by default: they make a run about 1.6-1.9 times as long
(``make bench`` measures it), which the property tests and a test of every
scenario pay, and a slider does not.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .blocks.block_queue import BlockQueue
from .blocks.counting import blocks_for, skipped_blocks
from .blocks.decode_group import IN_DECODE_GROUP

if TYPE_CHECKING:
    from .blocks import BlockPool, KVCacheManager
    from .scheduler import Scheduler

__all__ = ["check_invariants", "check_finished"]


def check_finished(eng: Scheduler) -> None:
    """Assert, once at the end of the run, that every finished request emitted its whole
    answer, that no refused request was ever touched, and that the books balance (see the
    module docstring)."""
    reqs = eng.requests
    bad = [rid for rid in range(reqs.count)
           if reqs.finish[rid] == reqs.finish[rid] and reqs.generated[rid] != reqs.output[rid]]
    if bad:
        rid = bad[0]
        raise AssertionError(f"kvsim invariant broken: request {rid} finished with "
                             f"{reqs.generated[rid]} of {reqs.output[rid]} tokens "
                             f"({len(bad)} such requests)")
    problems: list[str] = []
    refused = [rid for rid in range(reqs.count) if reqs.rejected[rid]]
    queued = set(eng.running) | set(eng.waiting) | set(eng.swapped)
    for rid in refused:
        touched = [what for what, yes in (
            ("scheduled", reqs.first_scheduled[rid] == reqs.first_scheduled[rid]),
            ("finished", reqs.finish[rid] == reqs.finish[rid]),
            ("generated tokens", reqs.generated[rid] > 0),
            ("preempted", reqs.preemptions[rid] > 0),
            ("queued", rid in queued),
            ("holding blocks", eng.kv.held.get(rid, 0) > 0)) if yes]
        if touched:
            problems.append(f"refused request {rid} was {', '.join(touched)}")
            break
    finished = sum(1 for rid in range(reqs.count) if reqs.finish[rid] == reqs.finish[rid])
    left = len(eng.running) + len(eng.waiting) + len(eng.swapped) + len(eng.loading)
    if finished + len(refused) + left != reqs.count:
        problems.append(f"{reqs.count} requests arrived but {finished} finished, {len(refused)} "
                        f"were refused and {left} are left in the engine")
    tl = eng.rec.timeline()
    if len(tl["t_s"]):
        if float(tl["t_s"][-1]) != eng.rec.end_s():
            problems.append(f"the timeline ends at {tl['t_s'][-1]} s, the run at "
                            f"{eng.rec.end_s()} s")
        if left == 0:
            last = {c: int(tl[c][-1]) for c in ("running", "waiting", "swapped",
                                                "kv_blocks_used")}
            if any(last.values()):
                problems.append(f"nothing is left in the engine but the timeline's last row "
                                f"shows {last}")
    if problems:
        raise AssertionError(f"kvsim invariant broken at the end of the run (t={eng.now_s:.6f} s): "
                             + "; ".join(problems))


def check_invariants(eng: Scheduler) -> None:
    """Assert every invariant of the module docstring on ``eng`` (a scheduler after a step)."""
    problems: list[str] = []
    _batch(eng, problems)
    _queues(eng, problems)
    _pool(eng.kv.pool, problems)
    _blocks(eng, problems)
    _tokens(eng, problems)
    _window_context(eng, problems)
    if problems:
        raise AssertionError(f"kvsim invariant broken after step {eng.step} (t={eng.now_s:.6f} s): "
                             + "; ".join(problems))


def _batch(eng: Scheduler, problems: list[str]) -> None:
    cfg = eng.cfg
    tokens = eng.last_plan.num_tokens
    if tokens > cfg.max_num_batched_tokens:
        problems.append(f"{tokens} tokens scheduled in one step, "
                        f"max_num_batched_tokens={cfg.max_num_batched_tokens}")
    if len(eng.running) > cfg.max_num_seqs:
        problems.append(f"{len(eng.running)} requests running, max_num_seqs={cfg.max_num_seqs}")


def _queues(eng: Scheduler, problems: list[str]) -> None:
    running, waiting, swapped = set(eng.running), set(eng.waiting), set(eng.swapped)
    for a, b, name in ((running, waiting, "running and waiting"), (running, swapped, "running and swapped"),
                       (waiting, swapped, "waiting and swapped")):
        if a & b:
            problems.append(f"requests {sorted(a & b)[:5]} are {name} at once")
    decoding, prefilling = set(eng.decoding.offset), set(eng.prefilling)
    if not prefilling <= running:
        problems.append(f"prefilling requests {sorted(prefilling - running)[:5]} are not running")
    if not decoding <= running:
        problems.append(f"decoding requests {sorted(decoding - running)[:5]} are not running")
    if decoding & prefilling:
        problems.append(f"requests {sorted(decoding & prefilling)[:5]} both prefill and decode")
    if len(eng.waiting) != len(waiting) or len(eng.swapped) != len(swapped):
        problems.append("a request is queued twice")
    loading = set(eng.loading)           # the host tier's loads: neither running nor queued
    if loading & (running | waiting | swapped):
        problems.append(f"loading requests {sorted(loading & (running | waiting | swapped))[:5]} "
                        "are also running or queued")
    if not eng.loaded <= waiting:
        problems.append(f"loaded requests {sorted(eng.loaded - waiting)[:5]} are not waiting")
    rejected = eng.requests.rejected
    refused = [rid for rid in (*running, *waiting, *swapped) if rejected[rid]]
    if refused:
        problems.append(f"refused requests {sorted(refused)[:5]} are in the engine's queues")


def _block_queue(pool: BlockQueue, problems: list[str]) -> None:
    """The exact pool: a block is free exactly when nobody holds it, the free ones without a
    hash before those with one, and the hash map names exactly the hashed blocks."""
    blank = cached = 0
    for block in pool.free_queue:
        if pool.refs[block]:
            problems.append(f"block {block} is free and held by {pool.refs[block]} requests")
        if pool.hash_of[block][0] < 0:
            if cached:
                problems.append(f"block {block} without a hash is queued behind cached ones")
            blank += 1
        else:
            cached += 1
    if (blank, cached) != (pool.blank, pool.cached_free):
        problems.append(f"the free queue holds {blank} blank and {cached} cached blocks, the "
                        f"counts say {pool.blank} and {pool.cached_free}")
    held = sum(1 for n in pool.refs if n)
    if held + blank + cached != pool.num_blocks:
        problems.append(f"{held} held + {blank + cached} free blocks in a pool of {pool.num_blocks}")
    if sum(n - 1 for n in pool.refs if n) != pool.extra_refs:
        problems.append(f"extra_refs={pool.extra_refs} disagrees with the blocks' holders")
    for key, blocks in pool.copies.items():
        if not blocks or any(pool.hash_of[b] != key for b in blocks):
            problems.append(f"the hash map's copies of {key} do not carry it")


def _pool(pool: BlockPool, problems: list[str]) -> None:
    if isinstance(pool, BlockQueue):
        _block_queue(pool, problems)
        return
    queued = 0
    for eid, entry in pool.queue.items():
        if entry.eid != eid:
            problems.append(f"a free-queue entry has id {entry.eid} under {eid}")
        if hasattr(entry, "refs"):
            queued += 1
            if entry.refs:
                # an entry with refs is a GroupBlock (mypy's hasattr narrowing keeps StreamRun too)
                problems.append(f"shared-prefix block {(entry.group, entry.index)} is free and "  # type: ignore[union-attr]
                                f"held by {entry.refs} requests")
        else:
            queued += entry.size
            if entry.size <= 0 or entry.hi < entry.lo or entry.dead < 0:
                problems.append(f"a cached run {entry.lo}..{entry.hi} (+{entry.dead} dead) is "
                                "queued")
    if queued != pool.cached_free:
        problems.append(f"cached_free={pool.cached_free} but the free queue holds {queued} blocks")
    for key, runs in pool.runs.items():
        for lo, run in runs.items():
            if run.key != key or run.lo != lo or run.hi <= lo or pool.queue.get(run.eid) is not run:
                problems.append(f"the index's run {lo}.. of stream {key} is not in the free queue")
        if not runs:
            problems.append(f"stream {key} is indexed with no run")
    for (group, index), block in pool.group_index.items():
        if (block.group, block.index) != (group, index) or not block.indexed:
            problems.append(f"the index's block {(group, index)} is not itself")
    if pool.blank < 0 or pool.free > pool.num_blocks:
        problems.append(f"free blocks {pool.blank} blank + {pool.cached_free} cached in a pool "
                        f"of {pool.num_blocks}")


def _blocks(eng: Scheduler, problems: list[str]) -> None:
    kv, group, reqs, T = eng.kv, eng.decoding, eng.requests, eng.step
    held = 0
    holders: dict[int, list[Any]] = {}       # shared-prefix block -> [block, running holders]
    for rid in eng.running:
        if rid in group and not kv.window:
            blocks = blocks_for(group.stored(rid, T), kv.block_size)
        else:
            if rid in group:
                blocks, stored = kv.held_by(rid, T), group.stored(rid, T)
            else:
                blocks = kv.held[rid]
                stored = reqs.computed[rid] if rid in eng.prefilling else \
                    reqs.prompt[rid] + reqs.generated[rid] - 1
            if blocks < _least_blocks(kv, stored):
                problems.append(f"request {rid} stores {stored} tokens in {blocks} blocks")
        held += blocks
        for block in kv.group_refs.get(rid, ()):
            holders.setdefault(id(block), [block, 0])[1] += 1
    for rid in (*eng.loading, *eng.loaded):   # the host tier's loads hold their blocks
        stored = reqs.computed[rid]
        if kv.held[rid] < blocks_for(stored, kv.block_size):
            problems.append(f"request {rid} loads {stored} tokens into {kv.held[rid]} blocks")
        held += kv.held[rid]
        for block in kv.group_refs.get(rid, ()):
            holders.setdefault(id(block), [block, 0])[1] += 1
    wrong = [(b.group, b.index, b.refs, n) for b, n in holders.values() if n != b.refs]
    if wrong:
        problems.append("shared-prefix blocks (group, index, refs, running holders) disagree: "
                        f"{wrong[:3]}")
    # a shared-prefix block is in each holder's count, and in use once
    in_use = kv.num_blocks - kv.pool.free
    # a shared block is in each holder's count, and in use once
    distinct = held - (kv.pool.extra_refs if isinstance(kv.pool, BlockQueue)
                       else sum(n - 1 for _, n in holders.values()))
    if distinct != in_use:
        problems.append(f"{in_use} blocks in use, the running requests hold {distinct}")


def _window_context(eng: Scheduler, problems: list[str]) -> None:
    """The decode group's sliding-window context (:meth:`DecodeGroup.window_context`): its
    uncapped members' count and offsets are those of the members not at their window, each
    capped member is at it, and every other one has its capped step due (the group is read,
    not settled)."""
    group, T = eng.decoding, eng.step
    w = group.window
    if not w:
        return
    capped = group.capped_members()
    below = [off for rid, off in group.offset.items() if rid not in capped]
    if (len(below), sum(below)) != (group.uncapped, group.uncapped_offset_sum):
        problems.append(f"the decode group counts {group.uncapped} members below the window "
                        f"(offsets {group.uncapped_offset_sum}), its members {len(below)} "
                        f"({sum(below)})")
    early = [rid for rid in capped if group.offset[rid] + T + 1 < w]
    if early:
        problems.append(f"requests {early[:3]} count at the window {w:,} before reaching it")
    pending = group.pending_caps()
    lost = [rid for rid, off in group.offset.items()
            if rid not in capped and pending.get(rid) != w - 1 - off]
    if lost:
        problems.append(f"requests {lost[:3]} below the window {w:,} have no capped step due")


def _least_blocks(kv: KVCacheManager, stored: int) -> int:
    """The fewest blocks ``stored`` tokens of KV may hold: every group's blocks, less, with
    sliding windows, those wholly before the window of all ``stored`` tokens."""
    full = blocks_for(stored, kv.block_size)
    if not kv.window:
        return full
    return kv.take_mult * full - kv.free_mult * skipped_blocks(stored, kv.window, kv.block_size)


def _tokens(eng: Scheduler, problems: list[str]) -> None:
    reqs, cap = eng.requests, eng.cfg.max_model_len
    group, held = eng.decoding, eng.kv.held
    for rid in eng.running:
        # a decode-group member's own counts are the group's marker, nobody else's ever is
        # (no stale count is readable)
        member = rid in group
        marks = (reqs.generated[rid] == IN_DECODE_GROUP, held[rid] == IN_DECODE_GROUP)
        if (member and not all(marks)) or (not member and any(marks)):
            problems.append(f"request {rid} ({'in' if rid in group else 'out of'} the decode group) "
                            f"reads generated={reqs.generated[rid]}, held={held[rid]}")
        generated = eng.generated_now(rid)
        if generated > reqs.output[rid]:
            problems.append(f"request {rid} generated {generated} of {reqs.output[rid]} tokens")
        if reqs.computed[rid] > reqs.target[rid]:
            problems.append(f"request {rid} computed {reqs.computed[rid]} of a target of "
                            f"{reqs.target[rid]}")
        if reqs.prompt[rid] + generated > cap + 1:
            problems.append(f"request {rid} holds {reqs.prompt[rid] + generated} tokens, "
                            f"max_model_len={cap}")
