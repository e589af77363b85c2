"""An independent reference engine (tests only), written from book/engine-reference.md.

The differential tests in ``test_engine_properties.py`` hold the fast engine
(``kvsim.simulate``: a decode group in closed form, event jumps, a prefix
cache that names blocks ``(group, i)`` / ``(stream, i)``) to this one and
require byte-identical results. It shares none of the engine's internals:

* plain per-request objects (:class:`Req`), one step at a time, every request
  updated explicitly;
* a pool of physical :class:`Block` objects in an LRU free queue (hashed
  freed blocks to the tail, unhashed ones to the front, new blocks from the
  front, a request's blocks freed last block first, lazy eviction of a
  block's hash when it is reused), reference counts, touch on hit;
* a genuine hash chain: token ``x`` of a request is ``("p", group, x)`` while
  ``x`` is below the request's shared-prefix length, else
  ``("s", stream, x)``; a full block's hash is a digest of its parent's hash
  and the tuple of its token ids. A hit walks the chain block by block.

From kvsim it uses only the public parts: option resolution
(:func:`kvsim.engine.options.resolve_options`), the step-time formula
(:class:`kvsim.engine.costs.StepCost`, and what each request's attention reads per kind of
layer, :class:`kvsim.engine.costs.AttentionSpan`, asked request by request), the
result and workload types and :class:`kvsim.errors.KvsimError`. Arrivals
(open and closed loop, conversations) are issued here, after the documented
behaviour of ``kvsim/traffic/arrivals.py``.

Sliding windows (vLLM V1's hybrid allocator): a request keeps
a block table per KV cache group (:attr:`Req.groups`); each time it is scheduled, its
window groups put ``None`` in place of (free) the blocks wholly before the window of its
processed tokens, one by one, before its new blocks are counted. With the prefix cache
on (vLLM 0.34's rules, written here on their own, after tests/window_block_model.py):
the blocks it frees go last first, up to the first freed one, and a finish frees group by
group, last first (:meth:`Pool.free_batch`: unhashed to the queue's front in that order,
hashed to its tail); a block gets one hash per group (``bytes([group]) + chain hash``) when
the token that fills it is scheduled and its value known (a decode's input is not while the
step before is in flight, with asynchronous scheduling), a window group's only where
``prefix_cache_retention_interval`` keeps it (:meth:`Engine._keeps_hash`); every copy is
found, the oldest first; a lookup is the full groups' run, then the window groups' first
run of ``ceil((window - 1) / bs)`` cached blocks from the right within it, the full run the
junction when the window stops short (:meth:`Engine._window_hit`).

With ``check=True`` (the default) the prefix-cache invariants are asserted
after every step (:meth:`Pool.check`, :meth:`Engine.check`): every physical
block is exactly one of free-blank, cached-free or owned; reference counts
are never negative and equal the number of block tables holding the block;
and at every hit the cached block's token ids are compared with the
request's own tokens at those positions.

Where the spec leaves something open, the reading chosen is marked
``READING`` below (and listed in the module docstring of the tests).
"""
from __future__ import annotations

import hashlib
import math
from collections import OrderedDict, deque

import numpy as np

from kvsim.engine.costs import StepCost
from kvsim.engine.options import (
    SGLANG_CLIP_MAX_NEW_TOKENS,
    SGLANG_RETRACT_DECODE_STEPS,
    resolve_options,
)
from kvsim.engine.result import SimResult, Table
from kvsim.errors import KvsimError
from kvsim.traffic.workload import MAX_REQUESTS, Request, Workload

__all__ = ["simulate_reference", "STAT_NAMES", "Engine", "Pool", "Block", "Req"]

NAN = float("nan")
RECOMPUTE, SWAP, STALL = 0, 1, 2        # pause / event modes


#: What ``stats=`` counts, so tests can tell which situations an example reached.
#: ``empty_steps_with_stalls``: steps in which nothing computed (everything
#: scheduled was preempted) while decoders the pass did not reach stalled.
#: The spec's NOTE on duplicate copies: ``shared_copy_over_free`` /
#: ``shared_copy_over_held``: a shared-prefix block registered while an older copy
#: is cached-free / held; ``stream_copy_over_free``: the same for a stream's block.
#: ``decode_take_after_copy``: a step in which every running request got its share
#: and a decode took a block after a chunk had registered a copy over a free one
#: (where the order in which one pass takes blocks could matter).
STAT_NAMES = ("steps", "empty_steps", "empty_steps_with_stalls", "preemptions", "stalls",
              "hit_blocks", "evictions", "shared_copy_over_free", "shared_copy_over_held",
              "stream_copy_over_free", "decode_take_after_copy")


def simulate_reference(workload, *, model, gpu, check: bool = True,
                       stats: dict | None = None, **engine_options) -> SimResult:
    """Same signature and options as :func:`kvsim.simulate`; plain stepping.

    ``check``: assert the invariants after every step. ``stats``: a dict to
    fill with the counts of :data:`STAT_NAMES`.
    """
    if isinstance(workload, Request):
        workload = [workload]
    if isinstance(workload, (list, tuple)):
        workload = Workload.from_requests(workload)
    if not isinstance(workload, Workload):
        raise KvsimError(f"workload={type(workload).__name__} is not supported")
    model, gpu, _budget, cost_model, cfg = resolve_options(model, gpu, engine_options)
    cost = StepCost(model, gpu, cost_model, tensor_parallel_size=cfg.tensor_parallel_size,
                    kv_bytes_per_token=cfg.kv_bytes_per_token, engine=cfg.engine,
                    async_scheduling=cfg.async_scheduling)
    eng = Engine(workload, model, gpu, cost, cfg, check=check)
    try:
        return eng.run()
    finally:
        if stats is not None:
            stats.update(eng.stats)


def _blocks_for(tokens: int, bs: int) -> int:
    return -(-tokens // bs)


# =========================================================================== blocks

class Block:
    """One physical KV block. ``hash`` is None for a block without cached content."""

    __slots__ = ("bid", "ref", "hash", "tokens")

    def __init__(self, bid: int):
        self.bid, self.ref, self.hash, self.tokens = bid, 0, None, None

    def __repr__(self):
        return f"Block({self.bid}, ref={self.ref}, {'hashed' if self.hash else 'blank'})"


class Pool:
    """Physical blocks, the LRU free queue and the hash index (vLLM's BlockPool)."""

    def __init__(self, n: int):
        self.blocks = [Block(i) for i in range(n)]
        self.free: OrderedDict[int, Block] = OrderedDict((b.bid, b) for b in self.blocks)
        self.index: dict[bytes, Block] = {}
        self.cached = 0            # free blocks with a hash
        self.evicted = 0           # cached blocks reused for new data
        self.over_free = self.over_held = self.stream_over_free = 0    # copies (the NOTE)
        # sliding windows with the prefix cache: a hash per group, every copy found (oldest)
        self.copies: dict[bytes, list[Block]] = {}

    @property
    def n_free(self) -> int:
        return len(self.free)

    @property
    def n_used(self) -> int:
        return len(self.blocks) - len(self.free)

    def take(self) -> Block:
        """A block for new data, from the front of the free queue (its hash is evicted)."""
        _, b = self.free.popitem(last=False)
        if b.hash is not None:
            self.cached -= 1
            self.evicted += 1
            if self.index.get(b.hash) is b:
                del self.index[b.hash]
            copies = self.copies.get(b.hash)
            if copies is not None:
                copies.remove(b)
                if not copies:
                    del self.copies[b.hash]
            b.hash = b.tokens = None
        assert b.ref == 0
        b.ref = 1
        return b

    def touch(self, b: Block) -> None:
        """A hit: the block gains a holder (and leaves the free queue if nobody held it)."""
        if b.ref == 0:
            del self.free[b.bid]
            if b.hash is not None:
                self.cached -= 1
        b.ref += 1

    def release(self, b: Block) -> None:
        b.ref -= 1
        assert b.ref >= 0, f"negative reference count on {b}"
        if b.ref == 0:
            self.free[b.bid] = b                       # tail: cached, kept longest
            if b.hash is None:
                self.free.move_to_end(b.bid, last=False)   # front: reused first
            else:
                self.cached += 1

    def free_batch(self, blocks: list[Block]) -> None:
        """vLLM's free_blocks: the blocks without a hash go to the queue's front in the order
        given (the first reused first), those with one to its tail in that order."""
        front = []
        for b in blocks:
            b.ref -= 1
            assert b.ref >= 0, f"negative reference count on {b}"
            if b.ref == 0:
                if b.hash is None:
                    front.append(b)
                else:
                    self.free[b.bid] = b
                    self.cached += 1
        for b in reversed(front):
            self.free[b.bid] = b
            self.free.move_to_end(b.bid, last=False)

    def cache_copy(self, b: Block, h: bytes, tokens: tuple) -> None:
        """``b`` (held) now holds the content ``h`` of one group (a copy among others)."""
        assert b.ref > 0
        if b.hash is not None:
            return
        b.hash, b.tokens = h, tokens
        self.copies.setdefault(h, []).append(b)

    def _index(self, b: Block, h: bytes) -> None:
        """The spec's NOTE: while a copy of ``h`` is cached (held, or free in the queue),
        lookups keep finding that older copy; ``b`` is a duplicate that is never
        found, not even after the older copy is evicted. Nothing moves in the queue."""
        old = self.index.get(h)
        if old is None:
            self.index[h] = b
        elif old is not b:
            if old.ref == 0:
                self.over_free += 1
            else:
                self.over_held += 1

    def cache_shared(self, b: Block, h: bytes, tokens: tuple) -> None:
        """``b`` (owned) now holds shared-prefix content ``h``."""
        assert b.ref > 0 and b.hash is None
        b.hash, b.tokens = h, tokens
        self._index(b, h)

    def cache_stream(self, b: Block, h: bytes, tokens: tuple) -> None:
        """``b`` (owned, about to be freed) holds stream content ``h`` (same NOTE)."""
        assert b.ref > 0
        if b.hash is not None:
            assert b.hash == h and b.tokens == tokens
        b.hash, b.tokens = h, tokens
        old = self.index.get(h)
        assert old is None or old is b or old.ref == 0, "a stream block held twice"
        n = self.over_free
        self._index(b, h)
        self.stream_over_free += self.over_free - n
        self.over_free = n

    def check(self) -> None:
        """Every block is exactly one of free-blank, cached-free, owned; counters agree."""
        blank = cached = owned = 0
        for b in self.blocks:
            assert b.ref >= 0, f"negative reference count on {b}"
            is_free = b.bid in self.free
            kinds = (is_free and b.hash is None, is_free and b.hash is not None, b.ref > 0)
            assert sum(kinds) == 1, f"{b} is {kinds} (free-blank, cached-free, owned)"
            blank += kinds[0]
            cached += kinds[1]
            owned += kinds[2]
            assert (b.hash is None) == (b.tokens is None)
        assert blank + cached + owned == len(self.blocks)
        assert cached == self.cached and owned == self.n_used
        order = list(self.free.values())
        n_blank = sum(1 for b in order if b.hash is None)
        assert all(b.hash is None for b in order[:n_blank]), "an unhashed block behind a cached one"
        for h, b in self.index.items():
            assert b.hash == h, f"index entry for {b} with another hash"
        for h, copies in self.copies.items():
            assert copies and all(b.hash == h for b in copies), f"copies of {h!r}"


# =========================================================================== requests

class Req:
    """One request and everything the engine knows about it."""

    def __init__(self, rid, arrival, prompt, output, asked, priority, group, prefix_tokens,
                 stream, bs):
        self.rid, self.arrival, self.P, self.O = rid, arrival, prompt, output
        self.priority = priority
        self.truncated = int(output < asked)
        self.group, self.prefix_tokens, self.stream = group, prefix_tokens, stream
        self.bs = bs
        self.G = 0                  # tokens generated (delivered)
        self.computed = 0           # prefill tokens whose KV is in (while prefilling)
        self.target = prompt        # tokens the current prefill must compute
        self.high = 0               # most stored tokens ever dropped by a recompute
        self.state = "waiting"      # waiting | running | swapped | finished
        self.prefilling = True
        self.table: list[Block] = []        # block table
        self.groups: list[list[Block | None]] = []   # sliding windows: a table per KV cache group
        self.hashed = 0             # windows with the prefix cache: blocks given their hashes
        self.junction = 0           # ... and the shared-prefix junction, in tokens (0: none)
        self.last_step, self.last_tokens = -2, 0     # the last step it was scheduled in, its tokens
        self.shared = 0             # leading blocks held as shared-prefix blocks
        self.swap_blocks = 0
        self.first_token = self.finish = NAN
        self.first_scheduled = NAN  # vLLM's scheduled_ts: the start of its first step
        self.last_token = NAN       # where a pause would start
        self.preemptions = self.recomputed = self.rescued = self.swaps = 0
        self.max_gap = self.paused = 0.0
        self.lookup_tokens = self.hit_tokens = 0
        self.pause = None           # the open pause row, if any
        self.user = None
        self._chain: list[tuple[bytes, tuple]] = []

    @property
    def stored(self) -> int:
        """Tokens whose KV this request holds (running)."""
        return self.computed if self.prefilling else self.P + self.G - 1

    def token(self, x: int):
        if x < self.prefix_tokens:
            return ("p", self.group, x)
        return ("s", self.stream, x)

    def block_key(self, i: int) -> tuple[bytes, tuple]:
        """(chain hash, token ids) of this request's block ``i``."""
        chain = self._chain
        while len(chain) <= i:
            j = len(chain)
            tokens = tuple(self.token(x) for x in range(j * self.bs, (j + 1) * self.bs))
            parent = chain[-1][0] if chain else b""
            h = hashlib.blake2b(parent + repr(tokens).encode(), digest_size=16).digest()
            chain.append((h, tokens))
        return chain[i]

    @property
    def prefix_blocks(self) -> int:
        """Blocks lying entirely inside the shared prefix."""
        return self.prefix_tokens // self.bs if self.group >= 0 else 0


# =========================================================================== arrivals

class OpenSource:
    def __init__(self, wl: Workload, cfg, until: float):
        arr = wl.arrival_s.tolist()
        if until < math.inf:
            arr = [a for a in arr if a < until]
        self.n = len(arr)
        self.times = arr
        self.prompt = wl.prompt_tokens.tolist()[:self.n]
        out = wl.output_tokens.tolist()[:self.n]
        if cfg.max_tokens is not None:
            out = [min(o, cfg.max_tokens) for o in out]
        self.output = out
        self.priority = wl.priority.tolist()[:self.n]
        self.prefix, self.groups = wl.prefix_tokens, wl.prefix_groups
        self.next = 0

    def next_time(self) -> float:
        return self.times[self.next] if self.next < self.n else math.inf

    def pull(self, t: float):
        """Yield ``(arrival, prompt, output, priority, group, prefix_tokens, session, index,
        user)`` for every request arrived by ``t``."""
        while self.next < self.n and self.times[self.next] <= t:
            i = self.next
            self.next += 1
            p = self.prompt[i]
            group = i % self.groups if self.prefix else -1
            yield (self.times[i], p, self.output[i], self.priority[i], group,
                   min(self.prefix, p) if group >= 0 else 0, -1, i, None)

    def waiting_by(self, t: float) -> int:
        return sum(1 for a in self.times[self.next:] if a <= t)

    def finished(self, user, t: float) -> None:
        pass

    stopped_s = None
    stop_reason = None

    def sending(self, t: float) -> bool:
        return True


class ClosedSource:
    """``users`` clients; each sends its next request ``think_s`` after the previous finished.

    Conversations (``turns``): a user's next request continues its conversation
    (prompt = previous prompt + answer + a follow-up message, same stream) while
    the conversation has turns left and the new prompt + answer fit
    ``max_model_len``; otherwise it starts a new one. A conversation's shared
    prefix is fixed by its first turn (``min(prefix, first prompt)`` tokens).
    """

    def __init__(self, wl: Workload, cfg, until: float):
        self.wl, self.cfg, self.until = wl, cfg, until
        self.pending = sorted((t, u) for u, t in enumerate(wl.user_start_s.tolist())
                              if t < wl.duration_s and t < until)
        self.issued = 0
        self.sessions = 0
        self.conv: dict[int, list] = {}     # user -> [session, turns left, history, prefix]
        # The load test stops sending after max_errors refusals or MAX_REQUESTS requests
        # (requests sent at the instant it stops are still served).
        self.max_errors = wl.max_errors
        self.refusals = 0
        self.stopped_s: float | None = None
        self.stop_reason: str | None = None

    def _stop(self, t: float, why: str) -> None:
        if self.stopped_s is None:
            self.stopped_s, self.stop_reason = t, why
        self.pending = []

    def sending(self, t: float) -> bool:
        return self.stopped_s is None or t <= self.stopped_s

    def next_time(self) -> float:
        return self.pending[0][0] if self.pending else math.inf

    def pull(self, t: float):
        wl = self.wl
        while self.pending and self.pending[0][0] <= t:
            if self.issued >= MAX_REQUESTS:
                self._stop(self.pending[0][0], f"it had sent {MAX_REQUESTS:,} requests, the "
                                               f"most one workload may hold")
                break
            t_a, user = self.pending.pop(0)
            k = self.issued
            self.issued += 1
            p, out = wl.next_lengths(k)
            if self.cfg.max_tokens is not None:
                out = min(out, self.cfg.max_tokens)
            session = -1
            prefix = min(wl.prefix_tokens, p)
            if wl.turns is not None:
                c = self.conv.get(user)
                if c is not None and c[2] + wl.next_followup(k) + out <= self.cfg.max_model_len:
                    session, left, prefix = c[0], c[1] - 1, c[3]
                    p = c[2] + wl.next_followup(k)
                else:
                    session = self.sessions
                    self.sessions += 1
                    left = wl.turns_of(session) - 1
                self.conv[user] = [session, left, p + out, prefix]
            group = user % wl.prefix_groups if wl.prefix_tokens else -1
            yield (t_a, p, out, int(wl.request_priority), group,
                   prefix if group >= 0 else 0, session, k, user)

    def waiting_by(self, t: float) -> int:
        return sum(1 for t_u, _ in self.pending if t_u <= t)

    def refused(self, user, t: float) -> None:
        """A refused request: the user starts over after think_s, at least a 1 ms round trip;
        the max_errors-th refusal stops the load test."""
        self.conv.pop(user, None)
        self.refusals += 1
        if self.refusals >= self.max_errors:
            self._stop(t, f"{self.refusals:,} of its requests were refused (max_errors="
                          f"{self.max_errors:,})")
            return
        t_next = t + max(self.wl.think_s, 0.001)
        if t_next < self.wl.duration_s and t_next < self.until:
            self.pending.append((t_next, user))
            self.pending.sort()

    def finished(self, user, t: float) -> None:
        t_next = t + self.wl.think_s
        if self.stopped_s is None and t_next < self.wl.duration_s and t_next < self.until:
            self.pending.append((t_next, user))
            self.pending.sort()
            c = self.conv.get(user)
            if c is not None and c[1] > 0:
                return
        self.conv.pop(user, None)


# =========================================================================== the engine

class Engine:
    """The scheduler of book/engine-reference.md, one step at a time (see :meth:`step`)."""

    def __init__(self, wl: Workload, model, gpu, cost: StepCost, cfg, *, check: bool = True):
        self.model, self.gpu, self.cost, self.cfg = model, gpu, cost, cfg
        self.check_each_step = check
        self.max_steps = 200_000
        self.bs = cfg.block_size
        self.N = cfg.num_gpu_blocks
        self.v0 = cfg.engine == "v0"
        # Sliding windows (engine-reference: vLLM V1's hybrid allocator): a table per KV cache
        # group, the window groups' blocks before the window replaced by None when scheduled
        self.window = cfg.sliding_window if cfg.kv_window_groups else 0
        self.n_groups, self.n_window_groups = cfg.kv_cache_groups, cfg.kv_window_groups
        self.lag = 1 if cfg.async_scheduling else 0
        in_flight = (2 if cfg.async_scheduling else 1) * cfg.max_num_batched_tokens
        self.window_cap = (_blocks_for(min(self.window - 1 + in_flight, cfg.max_model_len),
                                       cfg.block_size) + 1) if self.window else 0
        self.step_no = 0
        self.caching = cfg.enable_prefix_caching
        self.pool = Pool(self.N)
        self.until = cfg.until_s if cfg.until_s is not None else math.inf
        self.copies_per_block = model.kv_layers * (1 if model.mla_kv_lora_rank else 2)
        self.swap_used = 0
        self.reqs: list[Req] = []
        self.running: list[Req] = []        # admission order
        self.waiting: list[Req] = []        # fcfs: arrivals, victims in front; priority: sorted
        self.swapped: deque[Req] = deque()
        self.t = 0.0
        self.t_end = 0.0                    # the end of the last step
        # SGLang's new_token_ratio
        self.ratio_init = float(cfg.init_new_token_ratio)
        self.ratio_min = float(cfg.min_new_token_ratio)
        decay = cfg.new_token_ratio_decay
        self.ratio_decay = (float(decay) if decay is not None
                            else (self.ratio_init - self.ratio_min) / 600)
        self.ratio_base = self.ratio_init     # set by an idle reset or a retraction
        self.steps_since_reset = 0            # -1: the retraction's own step (no decay)
        self.batch_is_full = False
        # records
        self.rows: list[tuple] = []
        self.pauses: list[list] = []
        self.events: list[tuple] = []
        self.queries = [0, 0]
        self.hits = [0, 0]
        self.stats = dict.fromkeys(STAT_NAMES, 0)
        self.closed = wl.is_closed_loop
        self.source = (ClosedSource if self.closed else OpenSource)(wl, cfg, self.until)
        if not self.closed and cfg.unfit_requests == "error":
            self._check_fit(list(zip(self.source.prompt, self.source.output, strict=True)))

    # ------------------------------------------------------------------ arrivals
    def _unfit(self, p: int, o: int) -> int:
        """The first rule request (p, o) breaks, numbered as kvsim.engine.fit numbers them
        (0: it can run)."""
        cfg, bs = self.cfg, self.bs
        # the most one request may hold: V0 keeps the watermark even alone, V1 only beside
        # others (found when the property tests began to draw refused requests)
        usable = self.N - (cfg.watermark_blocks if self.v0 else 0)
        o = min(o, max(cfg.max_model_len - p, 0))
        if p >= cfg.max_model_len:
            return 1
        if self._admission_blocks(p + o - 1, capped=True) > usable:
            return 2
        if cfg.admission in ("guaranteed", "static_batch") and _blocks_for(
                p + (cfg.max_tokens if cfg.max_tokens is not None else o), bs) > self.N:
            return 3
        if not cfg.enable_chunked_prefill and p + o - 1 > cfg.max_num_batched_tokens:
            return 4
        return 0

    def _check_fit(self, lengths, first: int = 0) -> None:
        """With unfit_requests="error", a request that can never run is an error."""
        for i, (p, o) in enumerate(lengths):
            if self._unfit(p, o):
                raise KvsimError(f"request {first + i} (prompt {p}, output {o}) can never run "
                                 f"on this engine (reference engine)")

    def _pull(self, t: float) -> None:
        reject = self.cfg.unfit_requests == "reject"
        # One at a time (the sources are generators): a refusal's next request joins the
        # pending ones before the next is taken, so requests arrive in time order.
        for arrival, p, out, prio, group, prefix, session, index, user in self.source.pull(t):
            if not self.source.sending(arrival):    # sent after the load test stopped
                continue
            if self.closed and not reject:
                self._check_fit([(p, out)], first=index)
            rid = len(self.reqs)
            o = min(out, max(self.cfg.max_model_len - p, 0))
            stream = session if session >= 0 else -(rid + 1)
            r = Req(rid, arrival, p, o, out, prio, group, prefix, stream, self.bs)
            r.user = user
            self.reqs.append(r)
            r.rejected = self._unfit(p, out) if reject else 0
            if r.rejected:                  # refused on arrival: never queued
                r.state = "rejected"
                if self.closed:
                    self.source.refused(user, arrival)
                continue
            self._enqueue(r)

    def _key(self, r: Req):
        return (r.priority, r.arrival, r.rid)

    def _enqueue(self, r: Req, front: bool = False) -> None:
        r.state = "waiting"
        if self.cfg.scheduling_policy == "priority":
            keys = [self._key(x) for x in self.waiting]
            i = 0
            while i < len(keys) and keys[i] < self._key(r):
                i += 1
            self.waiting.insert(i, r)
        elif front:
            self.waiting.insert(0, r)
        else:
            self.waiting.append(r)

    # ------------------------------------------------------------------ blocks
    def _admission_blocks(self, tokens: int, *, capped: bool) -> int:
        """Blocks a request of ``tokens`` tokens asks for: every group's; a window group at
        most its admission cap when ``capped`` (vLLM's full-sequence check)."""
        n = _blocks_for(tokens, self.bs)
        if not self.window:
            return n
        window_n = min(n, self.window_cap) if capped else n
        return n * (self.n_groups - self.n_window_groups) + window_n * self.n_window_groups

    def _grow(self, r: Req, tokens: int) -> None:
        if self.window:
            if not r.groups:
                r.groups = [[] for _ in range(self.n_groups)]
            for table in r.groups:
                while len(table) < _blocks_for(tokens, self.bs):
                    table.append(self.pool.take())
            if self.caching:
                # up to the tokens whose values are known: the target, or its slots less the
                # token of the step before, still in flight with asynchronous scheduling
                in_flight = self.lag and r.last_step == self.step_no - 1
                known = max(r.target, r.stored + (0 if in_flight else 1))
                self._hash_window_blocks(r, min(tokens, known))
            return
        while len(r.table) < _blocks_for(tokens, self.bs):
            r.table.append(self.pool.take())

    # ------------------------------------- sliding windows with the prefix cache (vLLM 0.34)
    def _window_need(self) -> int:
        """Cached blocks a window group's hit ends with: the window less one token."""
        return _blocks_for(self.window - 1, self.bs)

    def _keeps_hash(self, r: Req, i: int) -> bool:
        """Does a window group's block ``i`` of ``r`` get a hash (reachable_block_mask)?"""
        interval, need, bs = self.cfg.prefix_cache_retention_interval, self._window_need(), self.bs
        if interval == "dense":
            return True
        if interval > 0:
            per = interval // bs
            if need >= per or i % per >= per - need:
                return True
        for boundary in [r.P - 1] + ([r.junction] if r.junction else []):
            if boundary // bs - need <= i < boundary // bs:
                return True
        return False

    def _hash_window_blocks(self, r: Req, tokens: int) -> None:
        """cache_blocks: the blocks filled up to ``tokens`` get their hash, one per group (a
        window group's only where the retention keeps it)."""
        full = tokens // self.bs
        first_window = self.n_groups - self.n_window_groups
        for i in range(r.hashed, full):
            h, tok = r.block_key(i)
            keep = self._keeps_hash(r, i)
            for g, table in enumerate(r.groups):
                if table[i] is not None and (g < first_window or keep):
                    self.pool.cache_copy(table[i], bytes([g]) + h, tok)
        r.hashed = max(r.hashed, full)

    def _window_hit(self, r: Req, tokens: int) -> tuple[int, int, list[list[Block | None]]]:
        """``(hit blocks, junction blocks, a table per group)``: the full groups' run from block
        0, then the window groups' first run of ``need`` cached blocks from the right within it
        (or the run from block 0), the full run the junction when the window stops short."""
        bs, copies = self.bs, self.pool.copies
        first_window = self.n_groups - self.n_window_groups
        top = (tokens - 1) // bs

        def found(g: int, i: int) -> Block | None:
            h, tok = r.block_key(i)
            blocks = copies.get(bytes([g]) + h)
            if not blocks:
                return None
            assert blocks[0].tokens == tok, f"request {r.rid} hit a block whose tokens differ"
            return blocks[0]
        limit = top
        if first_window:
            limit = 0
            while limit < top and all(found(g, limit) for g in range(first_window)):
                limit += 1
        need, run, hit = self._window_need(), 0, None
        for i in range(limit - 1, -1, -1):
            if all(found(g, i) for g in range(first_window, self.n_groups)):
                run += 1
                if run >= need:
                    hit = i + run
                    break
            else:
                run = 0
        if hit is None:
            hit = run
        junction = limit if first_window and hit < limit else 0
        skip = max(0, hit * bs - self.window + 1) // bs
        tables = [[None] * (skip if g >= first_window else 0)
                  + [found(g, i) for i in range(skip if g >= first_window else 0, hit)]
                  for g in range(self.n_groups)]
        return hit, junction, tables

    def _window_new_blocks(self, tokens: int, upto: int, hit: int) -> int:
        """Blocks admission takes: each group's blocks for ``upto`` less the hit (a window
        group's skipped ones none), and with the full-sequence check those for ``tokens``,
        a window group counted at most its cap."""
        skip = max(0, hit * self.bs - self.window + 1) // self.bs
        first_window = self.n_groups - self.n_window_groups

        def new(n_tokens: int, capped: bool) -> int:
            n = _blocks_for(n_tokens, self.bs)
            w = min(n, self.window_cap) if capped else n
            return first_window * max(0, n - hit) + self.n_window_groups * max(0, w - max(skip, hit))
        chunk = new(upto, False)
        return max(chunk, new(tokens, True)) if self.cfg.scheduler_reserve_full_isl else chunk

    def _scheduled(self, r: Req, tokens: int) -> None:
        """``r`` is scheduled ``tokens`` tokens in this step (its in-flight tokens next step)."""
        r.last_step, r.last_tokens = self.step_no, tokens

    def _remove_skipped(self, r: Req) -> None:
        """vLLM's remove_skipped_blocks as r is scheduled: each window group frees (None) its
        blocks wholly before the window of the processed tokens (stored less the tokens of the
        step before, still in flight with asynchronous scheduling)."""
        if not self.window or not r.groups:
            return
        in_flight = r.last_tokens if self.lag and r.last_step == self.step_no - 1 else 0
        skip = max(0, r.stored - in_flight - self.window + 1) // self.bs
        if self.caching:                      # last first, to the first freed one, batched
            for table in r.groups[self.n_groups - self.n_window_groups:]:
                freed = []
                for i in range(min(skip, len(table)) - 1, -1, -1):
                    if table[i] is None:
                        break
                    freed.append(table[i])
                    table[i] = None
                self.pool.free_batch(freed)
            return
        for table in r.groups[self.n_groups - self.n_window_groups:]:
            for i in range(min(skip, len(table))):
                if table[i] is not None:
                    self.pool.release(table[i])
                    table[i] = None

    def _short(self, r: Req, tokens: int) -> bool:
        if self.window:
            have = sum(len(t) for t in r.groups) if r.groups else 0
            return self.n_groups * _blocks_for(tokens, self.bs) - have > self.pool.n_free
        return _blocks_for(tokens, self.bs) - len(r.table) > self.pool.n_free

    def _cache_prefix(self, r: Req, tokens: int) -> None:
        """Shared-prefix blocks are cached as soon as a scheduled chunk fills them."""
        if not self.caching or r.group < 0 or self.window:   # windows: hashed in _grow
            return
        full = min(tokens, r.prefix_tokens) // self.bs
        for i in range(r.shared, full):
            h, tok = r.block_key(i)
            self.pool.cache_shared(r.table[i], h, tok)
        r.shared = max(r.shared, full)

    def _free_blocks(self, r: Req, stored: int) -> None:
        """Free ``r``'s blocks, last block first; full blocks stay cached (prefix caching)."""
        pool = self.pool
        if self.window:                       # group by group, last block first
            for table in r.groups:
                if self.caching:
                    pool.free_batch([b for b in reversed(table) if b is not None])
                    continue
                for b in reversed(table):
                    if b is not None:
                        pool.release(b)
            r.groups = []
            r.last_step, r.last_tokens = -2, 0
            r.hashed = r.junction = 0
            return
        if self.caching:
            full = stored // self.bs
            for i in range(max(r.prefix_blocks, r.shared), full):
                h, tok = r.block_key(i)
                pool.cache_stream(r.table[i], h, tok)
        for i in range(len(r.table) - 1, -1, -1):
            pool.release(r.table[i])
        r.table = []
        r.shared = 0

    def _lookup(self, r: Req, tokens: int) -> list[Block]:
        """The cached blocks ``r`` hits: the longest chain from its first block, whole blocks,
        at most ``tokens - 1`` tokens. Each hit's token ids are checked against the request's."""
        if not self.caching:
            return []
        hit = []
        for i in range((tokens - 1) // self.bs):
            h, tok = r.block_key(i)
            b = self.pool.index.get(h)
            if b is None:
                break
            assert b.hash == h
            assert b.tokens == tok, (f"request {r.rid} hit block {b.bid} whose tokens differ "
                                     f"at block {i}: {b.tokens[:2]}... vs {tok[:2]}...")
            hit.append(b)
        return hit

    # ------------------------------------------------------------------ policies
    def _planned(self, r: Req) -> int:
        return self.cfg.max_tokens if self.cfg.max_tokens is not None else r.O

    def _ratio(self) -> float:
        if self.steps_since_reset <= 0:
            return self.ratio_base
        return max(self.ratio_min, self.ratio_base - self.steps_since_reset * self.ratio_decay)

    def _answer_left(self, r: Req) -> int:
        """SGLang: the remaining planned answer, clipped at 4,096 tokens."""
        return min(max(self._planned(r) - r.G, 0), SGLANG_CLIP_MAX_NEW_TOKENS)

    def _retract_estimate(self, leaving: Req | None = None) -> None:
        """SGLang's ratio after a retraction: the decoding survivors' progress."""
        survivors = [x for x in self.running if x is not leaving and not x.prefilling]
        gen = sum(x.G for x in survivors)
        planned = sum(self._planned(x) for x in survivors)
        self.ratio_base = min(1.0, (gen + SGLANG_RETRACT_DECODE_STEPS * len(survivors))
                              / (planned + 1))
        self.steps_since_reset = -1

    def _reservations(self, chunks) -> float:
        """SGLang: what the running requests reserve in this admission round."""
        ends = {x.rid: start + c for x, start, c in chunks}
        scaled = full = 0
        for x in self.running:
            if x.prefilling:
                if ends.get(x.rid, -1) >= x.target:
                    full += self._answer_left(x)
            else:
                scaled += self._answer_left(x)
        return self._ratio() * scaled + full

    def _fewest_generated(self) -> Req:
        return min(self.running, key=lambda x: (x.G, -x.P, -x.rid))

    def _victim(self, requester: Req) -> Req:
        adm = self.cfg.admission
        if adm in ("guaranteed", "static_batch"):
            raise RuntimeError("reference: guaranteed admission ran out of blocks")
        if adm == "sglang":
            v = self._fewest_generated()
            self._retract_estimate(leaving=v)
            return v
        if self.cfg.scheduling_policy == "fcfs":
            return self.running[-1]
        best = None
        for x in self.running:        # the largest (priority, arrival); ties: earliest admitted
            if best is None or (x.priority, x.arrival) > (best.priority, best.arrival):
                best = x
        return best

    def _admits(self, r: Req, new_blocks: int, evictable: int, headroom: int,
                hits: int = 0) -> bool:
        cfg, free = self.cfg, self.pool.n_free
        if cfg.admission == "optimistic":
            return new_blocks + evictable + headroom <= free
        if cfg.admission == "max_utilization":
            # TensorRT-LLM: the whole prompt's blocks, no credit for cached ones, against
            # what the round has not yet given to earlier admissions' whole prompts
            return _blocks_for(r.target, self.bs) + headroom <= self.round_room
        if cfg.admission in ("guaranteed", "static_batch"):
            if cfg.admission == "static_batch" and any(not x.prefilling for x in self.running):
                return False                    # STATIC_BATCH: a batch drains first
            # TensorRT-LLM: free blocks less every running request's remaining blocks to
            # completion (reservation less its table, a shared block in every table holding it)
            remaining = sum(_blocks_for(x.P + self._planned(x), self.bs) - len(x.table)
                            for x in self.round_running)
            remaining += sum(_blocks_for(x.P + self._planned(x), self.bs)
                             for x in self.running if x not in self.round_running)
            return (_blocks_for(r.P + self._planned(r), self.bs) <= self.round_free - remaining
                    and new_blocks + evictable <= free)
        # sglang (the round's reservations are in self.round_reserved)
        if self.batch_is_full:
            return False
        if new_blocks + evictable > free:
            self.batch_is_full = bool(self.running)
            return False
        if not self.running:
            return True
        if self.round_reserved is None:
            self.round_reserved = self._reservations(self.round_chunks)
        need = (_blocks_for(r.target, self.bs) - hits) * self.bs + self._answer_left(r)
        if need >= (free - evictable) * self.bs - self.round_reserved:
            self.batch_is_full = True
            return False
        return True

    # ------------------------------------------------------------------ requests
    def _open_pause(self, r: Req, mode: int) -> None:
        """A pause starts at ``r``'s last token (a stall; or a preemption, which sets the mode)."""
        if r.pause is None:
            r.pause = [r.rid, r.last_token, NAN, mode]
            self.pauses.append(r.pause)
        else:
            r.pause[3] = mode

    def _emit(self, r: Req, t1: float) -> bool:
        """``r`` emits a token at ``t1``; returns True when the token closes a pause.

        Every gap between two tokens is an inter-token sample (``max_gap_s``);
        a pause's gap also counts in ``paused_s``.
        """
        closed = False
        if math.isnan(r.first_token):
            r.first_token = t1
        else:
            gap = t1 - r.last_token
            if r.pause is not None:
                r.pause[2] = t1
                r.pause = None
                r.paused += gap
                closed = True
            if gap > r.max_gap:
                r.max_gap = gap
        r.last_token = t1
        r.G += 1
        return closed

    def _preempt(self, r: Req, st: dict) -> None:
        cfg = self.cfg
        decoding = not r.prefilling
        stored = r.stored
        self.running.remove(r)
        self.batch_is_full = False
        r.preemptions += 1
        st["preemptions"] += 1
        self.stats["preemptions"] += 1
        mode = RECOMPUTE
        if cfg.preemption_mode == "swap" and decoding:
            blocks = len(r.table)
            if self.swap_used + blocks <= cfg.swap_space_blocks:
                mode = SWAP
            elif cfg.swap_space_full == "abort":
                raise KvsimError(f"at t={self.t:.3f} s request {r.rid} must be swapped out "
                                 f"({blocks} blocks) but the CPU swap space is full "
                                 "(reference engine)")
        if mode == SWAP:
            r.swap_blocks = blocks
            self.swap_used += blocks
            st["swap_out_bytes"] += blocks * cfg.block_bytes
            st["copies"] += blocks * self.copies_per_block
            r.swaps += 1
            self._free_blocks(r, 0)               # swap keeps nothing cached on the GPU
            r.state = "swapped"
            self.swapped.append(r)
        else:
            sglang = cfg.admission == "sglang"
            # SGLang keeps its last prefill's KV cached and frees its generated tokens'
            self._free_blocks(r, min(stored, r.target) if sglang else stored)
            r.high = max(r.high, stored)
            r.target = r.P + r.G
            r.computed = 0
            r.prefilling = True
            self._enqueue(r, front=not sglang)
        if r.G > 0:
            self._open_pause(r, mode)
        self.events.append((self.t, r.rid, mode))

    def _finish(self, r: Req, t1: float) -> None:
        r.finish = t1
        r.state = "finished"
        self.running.remove(r)
        self.batch_is_full = False
        self.source.finished(r.user, t1)
        self._free_blocks(r, r.P + r.G - 1)

    # ------------------------------------------------------------------ the loop
    def run(self) -> SimResult:
        while True:
            if not (self.running or self.waiting or self.swapped):
                a = self.source.next_time()
                if a == math.inf or a >= self.until:
                    break
                if a > self.t:
                    self.t = a
                # SGLang's self_check_during_idle: the ratio starts again
                self.ratio_base, self.steps_since_reset = self.ratio_init, 0
            if self.t >= self.until:
                break
            if self.source.next_time() <= self.t:
                self._pull(self.t)
                if not (self.running or self.waiting or self.swapped):
                    continue                # everything that arrived was refused
            self.step()
            self.stats["steps"] += 1
            if self.stats["steps"] > self.max_steps:
                raise RuntimeError(f"reference engine: more than {self.max_steps} steps "
                                   f"(livelock?) at t={self.t}")
            if self.check_each_step:
                self.check()
        self._pull(min(self.t, math.nextafter(self.until, 0.0)))
        pool = self.pool
        self.stats.update(evictions=pool.evicted, shared_copy_over_free=pool.over_free,
                          shared_copy_over_held=pool.over_held,
                          stream_copy_over_free=pool.stream_over_free)
        return self.result()

    def step(self) -> None:
        self.step_no += 1
        t0 = self.t
        st = {"preemptions": 0, "swap_out_bytes": 0, "copies": 0}

        # 1. SGLang: retract until every decode of this step has its block.
        if self.cfg.admission == "sglang":
            self._retract_for_decodes(st)

        # 2. running requests, one at a time
        at_start = list(self.running)
        scheduled, budget, whole_pass, late_decoder_take = self._schedule_running(st)
        stalled = [r for r in self.running if not r.prefilling and r not in scheduled]
        # READING: the order of this step's finishes (see 5. effects) depends on whether
        # every running request got its whole share in this pass.
        everyone = whole_pass and all(r in scheduled for r in at_start)
        if everyone and late_decoder_take:
            self.stats["decode_take_after_copy"] += 1

        solo = [r for r in scheduled if not r.prefilling]
        chunks = [(r, r.computed, c) for r, c in scheduled.items() if r.prefilling]

        # 3. admission, only if nothing was preempted in this step
        resumed: list[Req] = []
        swap_in_bytes = 0
        self.round_chunks, self.round_reserved = chunks, None
        if st["preemptions"] == 0:
            # V0: swapped requests come back first
            budget, swap_in_bytes = self._swap_in(st, budget, resumed)
            self._admit_waiting(budget, chunks)

        # 4. duration
        decode_seqs = len(solo) + len(resumed)
        if not chunks and not decode_seqs:
            if st["preemptions"]:
                self._empty_step(t0, st, stalled)
                return
            raise RuntimeError(f"reference engine made no progress at t={t0}")
        # what each request attends to, per kind of layer (the cost model's units: tokens
        # without sliding windows)
        span = self.cost.span
        context = sum(span.decode_units(r.P + r.G) for r in solo) \
            + sum(span.decode_units(r.P + r.G) for r in resumed)
        pairs = kv_tokens = prefill_tokens = 0
        for _, start, c in chunks:
            pairs += span.prefill_pair_units(start, c)
            kv_tokens += span.prefill_kv_units(start, c)
            prefill_tokens += c
        dt = self.cost.step_s(decode_seqs + prefill_tokens, decode_seqs + len(chunks), context,
                              pairs, kv_tokens, st["swap_out_bytes"] + swap_in_bytes,
                              st["copies"])
        t1 = t0 + dt
        self.t = t1

        # 5. effects
        done: list[Req] = []
        for r in resumed:
            self._emit(r, t1)
            if r.G >= r.O:
                done.append(r)
        regular = 0
        if not everyone:
            regular += sum(self._decode(r, t1, done) for r in solo)
        recomputed, prefilled = self._end_chunks(chunks, t1, done)
        if everyone:
            # READING (order of finishes in a step, which the spec leaves open): kvsim's
            # decode group finishes after the prefills, in request-id order.
            regular += sum(self._decode(r, t1, done) for r in sorted(solo, key=lambda x: x.rid))
        for r in done:
            self._finish(r, t1)
        self.stats["stalls"] += len(stalled)
        for r in stalled:
            self._open_pause(r, STALL)
        self.steps_since_reset += 1
        self._record(t1, dt, t1 - t0, regular, prefill_tokens, decode_seqs,
                     decode_seqs + prefilled, st, swap_in_bytes, recomputed)

    def _retract_for_decodes(self, st: dict) -> None:
        """SGLang: retract the fewest-generated request until every decode has its block."""
        pool, bs = self.pool, self.bs
        retracted = False
        while sum(_blocks_for(r.P + r.G, bs) - len(r.table)
                  for r in self.running if not r.prefilling) > pool.n_free:
            self._preempt(self._fewest_generated(), st)
            retracted = True
        if retracted:
            self._retract_estimate()

    def _schedule_running(self, st: dict) -> tuple[dict[Req, int], int, bool, bool]:
        """The running requests' tokens this step, one request at a time (preempting where
        one is short of blocks): ``(scheduled, budget left, whole pass, late decoder take)``;
        a whole pass preempted no one and cut no prefill."""
        cfg, pool, bs = self.cfg, self.pool, self.bs
        budget = cfg.max_num_batched_tokens
        if self.v0:
            order = ([r for r in self.running if not r.prefilling]
                     + [r for r in self.running if r.prefilling])
        else:
            order = list(self.running)
        scheduled: dict[Req, int] = {}
        pass_preempted = False
        cut = False
        copies0 = pool.over_free
        late_decoder_take = False      # a decode took a block after a copy over a free one
        # TensorRT-LLM's STATIC_BATCH: no prefill chunk while anyone generates
        hold = cfg.admission == "static_batch" and any(not r.prefilling for r in self.running)
        for r in order:
            if budget <= 0:
                break
            if r.state != "running":
                continue                              # an earlier victim
            if hold and r.prefilling:
                continue
            c, chunk_cut = self._pass_tokens(r, budget)
            cut = cut or chunk_cut
            tokens = r.stored + c
            self._remove_skipped(r)
            if self._short(r, tokens):
                pass_preempted = True
                preempted_itself, regained = self._make_room(r, tokens, st, scheduled)
                budget += regained
                if preempted_itself:
                    break
            if (not r.prefilling and pool.over_free > copies0
                    and _blocks_for(tokens, bs) > len(r.table)):
                late_decoder_take = True
            self._grow(r, tokens)
            self._scheduled(r, c)
            if r.prefilling:
                self._cache_prefix(r, tokens)
            scheduled[r] = c
            budget -= c
        return scheduled, budget, not pass_preempted and not cut, late_decoder_take

    def _pass_tokens(self, r: Req, budget: int) -> tuple[int, bool]:
        """``(tokens, cut)``: a decoder's one token, or a prefill's chunk within the long-prefill
        threshold and ``budget`` (``cut``: the budget cut it short)."""
        if not r.prefilling:
            return 1, False
        full = r.target - r.computed
        thr = self.cfg.long_prefill_token_threshold
        if 0 < thr < full:
            full = thr
        c = min(full, budget)
        return c, c < full

    def _make_room(self, r: Req, tokens: int, st: dict, scheduled: dict[Req, int]
                   ) -> tuple[bool, int]:
        """Preempt victims until ``r`` has blocks for ``tokens``: ``(r itself was preempted,
        the budget the victims scheduled earlier in the pass give back)``."""
        regained = 0
        while self._short(r, tokens):
            victim = self._victim(r)
            self._preempt(victim, st)
            if victim is r:
                return True, regained
            regained += scheduled.pop(victim, 0)
        return False, regained

    def _swap_in(self, st: dict, budget: int, resumed: list[Req]) -> tuple[int, int]:
        """V0: swapped requests come back first, while they fit above the watermark:
        ``(budget left, bytes swapped in)``; they join ``resumed``."""
        cfg, pool, bs = self.cfg, self.pool, self.bs
        swap_in_bytes = 0
        while self.swapped and len(self.running) < cfg.max_num_seqs and budget >= 1:
            r = self.swapped[0]
            need = _blocks_for(r.P + r.G, bs)
            if need + cfg.watermark_blocks > pool.n_free:
                break
            self.swapped.popleft()
            self.swap_used -= r.swap_blocks
            swap_in_bytes += r.swap_blocks * cfg.block_bytes
            st["copies"] += r.swap_blocks * self.copies_per_block
            self._grow(r, r.P + r.G)
            self._admit_running(r)
            resumed.append(r)
            budget -= 1
        return budget, swap_in_bytes

    def _admit_waiting(self, budget: int, chunks: list) -> None:
        """Admit waiting requests in order while they fit (their first chunks join
        ``chunks``); TensorRT-LLM's and SGLang's rounds are kept on the engine."""
        cfg, pool, bs = self.cfg, self.pool, self.bs
        thr = cfg.long_prefill_token_threshold
        self.round_room = self.round_free = pool.n_free      # TensorRT-LLM's round
        # MAX_UTILIZATION: a prompt in prefill has all its blocks in TensorRT-LLM
        self.round_room -= sum(max(0, _blocks_for(x.target, bs) - len(x.table))
                               for x in self.running if x.prefilling)
        self.round_running = list(self.running)
        while (self.waiting and not self.swapped and len(self.running) < cfg.max_num_seqs
               and budget > 0):
            r = self.waiting[0]
            tokens = r.target
            window_cache = self.window and self.caching
            if window_cache:
                n_hit, junction, tables = self._window_hit(r, tokens)
                hit = [b for t in tables for b in t if b is not None]
            else:
                hit = self._lookup(r, tokens)
                n_hit = len(hit)
            H = n_hit * bs
            c = tokens - H
            if 0 < thr < c:
                c = thr
            if not cfg.enable_chunked_prefill and c > budget:
                break
            c = min(c, budget)
            upto = tokens if self.v0 else H + c
            if window_cache:
                new_blocks = self._window_new_blocks(tokens, upto, n_hit)
            elif cfg.scheduler_reserve_full_isl and not self.v0:
                new_blocks = self._admission_blocks(tokens, capped=True) - len(hit)
            else:
                new_blocks = self._admission_blocks(upto, capped=False) - len(hit)
            evictable = sum(1 for b in hit if b.ref == 0)
            headroom = cfg.watermark_blocks if self.v0 or self.running else 0
            if not self._admits(r, new_blocks, evictable, headroom, len(hit)):
                break
            if window_cache:
                self._start_window_prefill(r, n_hit, junction, tables, tokens, c, upto)
            else:
                self._start_prefill(r, hit, tokens, c, upto)
            chunks.append((r, H, c))
            budget -= c
            self.round_room -= _blocks_for(r.target, bs)
            if cfg.admission == "sglang":
                self._sglang_reserve(r, H + c, chunks)

    def _start_window_prefill(self, r: Req, n_hit: int, junction: int, tables, tokens: int,
                              c: int, upto: int) -> None:
        """Sliding windows with the prefix cache: the hit's blocks (a window group's after its
        skipped ones) touched into a table per group, then :meth:`_start_prefill`'s rest."""
        for table in tables:
            for b in table:
                if b is not None:
                    self.pool.touch(b)
        r.groups = [list(t) for t in tables]
        r.hashed, r.junction = n_hit, junction * self.bs
        self._start_prefill(r, [None] * n_hit, tokens, c, upto)

    def _start_prefill(self, r: Req, hit: list[Block], tokens: int, c: int, upto: int) -> None:
        """The head of the queue admitted: its prefix hit, its blocks up to ``upto`` tokens,
        its first chunk of ``c`` tokens cached as it fills."""
        H = len(hit) * self.bs
        self.waiting.pop(0)
        if math.isnan(r.first_scheduled):
            r.first_scheduled = self.t
        self.stats["hit_blocks"] += len(hit)
        if not r.groups:                      # (windows with the cache: touched already)
            for b in hit:
                self.pool.touch(b)
            r.table = list(hit)
            r.shared = min(len(hit), r.prefix_blocks)
        self._grow(r, upto)
        self._scheduled(r, upto - H)
        resumed_req = r.preemptions > 0
        if self.caching:
            self.queries[resumed_req] += tokens
            self.hits[resumed_req] += H
        if resumed_req:
            r.rescued += min(H, r.high)
        elif self.caching:
            r.lookup_tokens, r.hit_tokens = tokens, H
        r.computed = H
        r.prefilling = True
        self._cache_prefix(r, H + c)
        self._admit_running(r)

    def _sglang_reserve(self, r: Req, upto: int, chunks: list) -> None:
        """SGLang's round: the answers' reservation grows with each admission; the batch is
        full once it covers the free pool."""
        if self.round_reserved is None:      # the idle server's first admission
            self.round_reserved = self._reservations(chunks)
        elif upto >= r.target:
            self.round_reserved += self._answer_left(r)
        if self.pool.n_free * self.bs - self.round_reserved <= 0:
            self.batch_is_full = True

    def _empty_step(self, t0: float, st: dict, stalled: list[Req]) -> None:
        """Nothing computes: the step lasts as long as its swap copies. READING: the decoders
        the pass did not reach stall as in any step; SGLang's ratio does not decay (no batch
        ran)."""
        dt = self.cost.swap_s(st["swap_out_bytes"], st["copies"])
        t1 = t0 + dt
        self.t = t1
        self.stats["empty_steps"] += 1
        self.stats["empty_steps_with_stalls"] += bool(stalled)
        self.stats["stalls"] += len(stalled)
        for r in stalled:
            self._open_pause(r, STALL)
        self._record(t1, dt, dt, 0, 0, 0, 0, st, 0, 0)

    def _decode(self, r: Req, t1: float, done: list[Req]) -> int:
        """``r``'s token of this step: 1 when it was a regular one (not after a pause)."""
        regular = 0 if self._emit(r, t1) else 1
        if r.G >= r.O:
            done.append(r)
        return regular

    def _end_chunks(self, chunks: list, t1: float, done: list[Req]) -> tuple[int, int]:
        """The step's prefill chunks computed: ``(tokens computed again, prefills that
        ended)``; an ended prefill emits its first token."""
        recomputed = prefilled = 0
        for r, start, c in chunks:
            end = start + c
            if r.high > start:
                r.recomputed += min(end, r.high) - start
                recomputed += min(end, r.high) - start
            r.computed = end
            if r.computed >= r.target:
                r.prefilling = False
                prefilled += 1
                self._emit(r, t1)
                if r.G >= r.O:
                    done.append(r)
        return recomputed, prefilled

    def _admit_running(self, r: Req) -> None:
        r.state = "running"
        self.running.append(r)

    def _record(self, t1, dt, gap, regular, prefill_tokens, decode_tokens, emitted, st,
                swap_in_bytes, recomputed) -> None:
        # Requests that arrived during the step are queued now, before the row: a refused one
        # never counts as waiting. (Done as run() would before the next step, its idle reset
        # of SGLang's ratio included.)
        if self.source.next_time() <= t1:
            if not (self.running or self.waiting or self.swapped):
                self.ratio_base, self.steps_since_reset = self.ratio_init, 0
            self._pull(t1)
        self.t_end = t1
        self.rows.append((t1, dt, self.pool.n_used, self.pool.cached, len(self.running),
                          len(self.waiting), len(self.swapped),
                          st["preemptions"], regular, prefill_tokens, decode_tokens, emitted,
                          st["swap_out_bytes"], swap_in_bytes, gap, recomputed))

    # ------------------------------------------------------------------ invariants
    def check(self) -> None:
        """The books after a step (assertions)."""
        pool, bs = self.pool, self.bs
        pool.check()
        holders: dict[int, int] = {}
        for r in self.reqs:
            if r.state != "running":
                assert not r.table and not r.groups, f"request {r.rid} ({r.state}) holds GPU blocks"
                continue
            if self.window:
                self._check_groups(r, holders)
                continue
            # a request holds the blocks of its stored tokens; V0 those of a whole prefill
            expect = _blocks_for(r.target if self.v0 and r.prefilling else r.stored, bs)
            assert len(r.table) == expect, f"request {r.rid} holds {len(r.table)} != {expect}"
            assert len(set(b.bid for b in r.table)) == len(r.table)
            for b in r.table:
                holders[b.bid] = holders.get(b.bid, 0) + 1
            for i in range(r.shared):
                b = r.table[i]
                h, tok = r.block_key(i)
                assert b.hash == h and b.tokens == tok, f"request {r.rid} block {i} content"
        for b in pool.blocks:
            n = holders.get(b.bid, 0)
            assert b.ref == n, f"{b}: reference count {b.ref} but {n} block tables hold it"
        assert len(self.running) <= self.cfg.max_num_seqs
        assert 0 <= self.swap_used <= self.cfg.swap_space_blocks
        assert self.swap_used == sum(r.swap_blocks for r in self.swapped)

    def _check_groups(self, r: Req, holders: dict[int, int]) -> None:
        """With windows: every group's table covers the stored tokens; a window group has
        freed no block its window still holds."""
        n = _blocks_for(r.stored, self.bs)
        keep_from = max(0, r.stored - self.window + 1) // self.bs
        for g, table in enumerate(r.groups):
            assert len(table) == n, f"request {r.rid} group {g} holds {len(table)} != {n}"
            window_group = g >= self.n_groups - self.n_window_groups
            for i, b in enumerate(table):
                if b is None:
                    assert window_group and i < keep_from, f"request {r.rid} freed block {i}"
                else:
                    holders[b.bid] = holders.get(b.bid, 0) + 1
        assert not r.table

    # ------------------------------------------------------------------ result
    def result(self) -> SimResult:
        rq = self.reqs
        f = lambda vals: np.array(vals, dtype=np.float64)
        i = lambda vals: np.array(vals, dtype=np.int64)
        arrival = f([r.arrival for r in rq])
        first = f([r.first_token for r in rq])
        requests = {
            "arrival_s": arrival, "first_token_s": first,
            "finish_s": f([r.finish for r in rq]), "ttft_s": first - arrival,
            "prompt_tokens": i([r.P for r in rq]), "output_tokens": i([r.O for r in rq]),
            "generated_tokens": i([r.G for r in rq]),
            "preemptions": i([r.preemptions for r in rq]),
            "recomputed_tokens": i([r.recomputed for r in rq]),
            "rescued_tokens": i([r.rescued for r in rq]),
            "swaps": i([r.swaps for r in rq]),
            "max_gap_s": f([r.max_gap for r in rq]), "paused_s": f([r.paused for r in rq]),
            "priority": i([r.priority for r in rq]), "truncated": i([r.truncated for r in rq]),
            "prefix_lookup_tokens": i([r.lookup_tokens for r in rq]),
            "prefix_hit_tokens": i([r.hit_tokens for r in rq]),
            "first_scheduled_s": f([r.first_scheduled for r in rq]),
            "rejected": i([r.rejected for r in rq]),
        }
        names = ("t_s", "dt_s", "kv_blocks_used", "kv_blocks_cached", "running", "waiting",
                 "swapped", "preemptions", "decoding", "prefill_tokens", "decode_tokens",
                 "emitted_tokens", "swap_out_bytes", "swap_in_bytes", "gap_s",
                 "recomputed_tokens")
        floats = {"t_s", "dt_s", "gap_s"}
        timeline = {name: (f if name in floats else i)([row[k] for row in self.rows])
                    for k, name in enumerate(names)}
        pauses = {"request": i([p[0] for p in self.pauses]),
                  "start_s": f([p[1] for p in self.pauses]),
                  "end_s": f([p[2] for p in self.pauses]),
                  "mode": i([p[3] for p in self.pauses])}
        events = {"t_s": f([e[0] for e in self.events]), "request": i([e[1] for e in self.events]),
                  "mode": i([e[2] for e in self.events])}
        config = dict(self.cfg.to_dict(), model=self.model.name, gpu=self.gpu.name)
        counters = dict(simulated_s=float(self.t_end),      # the end of the last step
                        prefix_cache_queries=self.queries[0], prefix_cache_hits=self.hits[0],
                        prefix_cache_resumed_queries=self.queries[1],
                        prefix_cache_resumed_hits=self.hits[1],
                        prefix_cache_evicted_blocks=self.pool.evicted,
                        load_stopped_s=self.source.stopped_s,
                        load_stop_reason=self.source.stop_reason)
        return SimResult(Table(requests), Table(timeline), Table(pauses), Table(events), config,
                         counters)
