"""The engine loop: one paged-KV serving engine, step by step (and jump by jump).

``simulate(workload, model=..., gpu=..., **engine_options)`` runs the scheduler
of design §3 until every arrived request has finished (or ``until_s``).
Explained in chapter 2, *Optimistic admission and preemption*.

One step, following vLLM's chunked-prefill scheduler:

1. Running requests, in admission order (priority mode: by priority, then
   arrival). A decoding request whose next token starts a new block takes one
   from the free pool; if none is free, the *last* running request is
   preempted (it may be the request itself). Growth ignores the watermark.
   A victim is swapped to CPU (``preemption_mode="swap"``, when the swap space
   has room and the victim is decoding) or its blocks are dropped and it goes
   to the *front* of the waiting queue, to be re-prefilled later (prompt +
   tokens generated so far, as one chunked prefill).
2. Partially prefilled requests get prefill chunks from what is left of the
   ``max_num_batched_tokens`` budget (every decode costs one token).
3. Only if nothing was preempted in this step: swapped requests come back
   first (their blocks + the watermark must fit), then waiting requests are
   admitted in order while the policy allows it, up to ``max_num_seqs`` and
   the token budget. A request that does not fit stops admission: nobody
   skips ahead. Admission allocates the blocks of the whole prefill.
4. The step's duration comes from :mod:`kvsim.costs`; swap copies block the
   step. Decoding requests emit one token; a request whose prefill completes
   emits its first token (or, after a recompute, its next one).

What kvsim leaves out, on purpose (each is a known difference from a real
engine, chosen to keep the model small enough to reason about):

* no prefix caching: a recompute re-prefills every token it dropped;
* priority mode preempts only on a block shortage; vLLM V0 can also evict a
  running low-priority request for a waiting high-priority one;
* blocks for a whole prefill are taken at admission (vLLM V0's block
  manager); V1 allocates per chunk;
* the whole weight set is read every step (for MoE models too), and attention
  layers with a sliding window are charged the full context (as V0 does).

Speed: between events (an arrival, a finish, a block shortage, a prefill)
every step is a pure decode step whose effect is known in closed form, so the
engine computes runs of such steps at once with numpy ("event jumps"). The
option ``step_by_step=True`` turns jumps off; the test-suite proves the two
modes give byte-identical results.
"""
from __future__ import annotations

import bisect
import heapq
import math
from collections import deque

import numpy as np

from .costs import CostModel, attention_flops
from .errors import KvsimError
from .options import ENGINE_DEFAULTS, resolve_options
from .policies import make_policy
from .result import SimResult, Table
from .units import format_bytes
from .workload import Request, Workload

__all__ = ["simulate", "ENGINE_DEFAULTS"]

_FLOAT_NAN = float("nan")

def simulate(workload, *, model, gpu, **engine_options) -> SimResult:
    """Run ``workload`` on one engine serving ``model`` on ``gpu``.

    Args:
        workload: a :class:`kvsim.Workload` or a list of :class:`kvsim.Request`.
        model: a preset name, a :class:`kvsim.ModelSpec` or a ``config.json`` path.
        gpu: a preset name or a :class:`kvsim.GPUSpec`.
        **engine_options: see :data:`ENGINE_DEFAULTS` and the cost-model
            constants of :class:`kvsim.CostModel`. ``num_gpu_blocks`` overrides
            the pool computed from ``gpu_memory_utilization``. The engine
            itself draws no random numbers: the same workload and options give
            byte-identical results. ``seed`` is recorded in ``result.config``;
            randomness lives in the workload (``Workload.poisson(..., seed=)``,
            a scenario's ``seed`` parameter).

    Returns:
        A :class:`kvsim.SimResult`.

    Raises:
        KvsimError: a bad option, or a request that can never fit the pool
            (named, with its sizes and the pool's).

    Explained in chapter 2, *Optimistic admission and preemption*.
    """
    if isinstance(workload, (list, tuple)):
        workload = Workload.from_requests(workload)
    elif isinstance(workload, Request):
        workload = Workload.from_requests([workload])
    if not isinstance(workload, Workload):
        raise KvsimError(f"workload={type(workload).__name__} is not supported: expected a "
                         "kvsim.Workload or a list of kvsim.Request")
    model, gpu, budget, cost, o = resolve_options(model, gpu, engine_options)
    return _Engine(workload, model, gpu, budget, cost, o).run()


class _Engine:
    """The scheduler state and loop.

    Bookkeeping that makes a step O(1) in the batch size: every running request
    that is decoding advances by exactly one token per step, so its generated
    count is ``GOFF[rid] + T`` where ``T`` counts the steps executed. A decoding
    request needs a new block in step ``T`` exactly when ``P + G - 1`` is a
    multiple of the block size, i.e. when ``(residue + T) % block_size == 0``;
    ``hist`` counts decoding requests per residue, so the blocks a step needs
    are ``hist[-T % block_size]``. Per-request token gaps are recovered at the
    end from each decoding stint's range of steps.
    """

    def __init__(self, wl: Workload, model, gpu, budget, cost: CostModel, o: dict):
        self.wl, self.model, self.gpu, self.o = wl, model, gpu, o
        self.bs = o["block_size"]
        self.total_blocks = o["num_gpu_blocks"]
        self.free = self.total_blocks
        self.watermark_blocks = int(o["watermark"] * self.total_blocks)
        self.max_num_seqs = o["max_num_seqs"]
        self.max_batched = o["max_num_batched_tokens"]
        self.chunked = o["enable_chunked_prefill"]
        self.max_tokens = o["max_tokens"]
        self.swap_mode = o["preemption_mode"] == "swap"
        self.priority_mode = o["scheduling_policy"] == "priority"
        self.until = o["until_s"] if o["until_s"] is not None else math.inf
        self.max_jump = 1 if o["step_by_step"] else 1 << 62

        # --- cost model constants (integers where exact arithmetic matters)
        tp = o["tensor_parallel_size"]
        self.kvb = budget.kv_bytes_per_token
        self.block_bytes = self.kvb * self.bs
        self.weight_read = int(o["weight_bytes"] if o["weight_bytes"] is not None
                               else budget.weight_bytes)
        self.flops_per_token = 2 * model.active_params
        self.attn_coef = 4 * model.kv_layers * model.num_attention_heads * model.head_dim
        self.F = float(gpu.peak_flops * tp * cost.mfu)
        self.B = float(gpu.hbm_bytes_per_s * tp * cost.hbm_efficiency)
        self.ovh = float(cost.step_overhead_s)
        self.pcie = float(cost.pcie_bytes_per_s or gpu.pcie_bytes_per_s * tp)
        self.copy_ovh = float(cost.swap_copy_overhead_s)
        kv_factor = 1 if model.mla_kv_lora_rank else 2
        self.copies_per_block = model.kv_layers * kv_factor
        self.swap_blocks_cap = o["swap_space_bytes"] // self.block_bytes
        self.swap_used = 0

        pol_params = {}
        if o["admission"] == "sglang":
            pol_params = dict(init_new_token_ratio=o["init_new_token_ratio"],
                              min_new_token_ratio=o["min_new_token_ratio"],
                              new_token_ratio_decay=o["new_token_ratio_decay"])
        self.policy = make_policy(o["admission"], **pol_params)
        self.policy.bind(self)
        # A resume after preemption may need prompt + output - 1 tokens at
        # once: that must fit in the pool below the watermark.
        self.max_fit_blocks = self.total_blocks - self.watermark_blocks

        # --- requests (grown on demand for closed loops)
        self.closed = wl.is_closed_loop
        self._alloc(64 if self.closed else max(len(wl), 1))
        self.n_req = 0
        if not self.closed:
            arr = wl.arrival_s
            if self.until < math.inf:
                arr = arr[arr < self.until]
            self.open_n = len(arr)
            self.open_list = arr.tolist()
            self.open_prompt = wl.prompt_tokens[:self.open_n].tolist()
            out = self._cap(wl.output_tokens[:self.open_n])
            self.open_output = out.tolist()
            self.open_prio = wl.priority[:self.open_n].tolist()
            self.check_fit_all(wl.prompt_tokens[:self.open_n], out)
        else:
            self.open_n = 0
            self.open_list = []
        self.next_open = 0
        self.closed_pending = []  # sorted (time, user)
        self.closed_issued = 0
        if self.closed:
            for u, t_u in enumerate(wl.user_start_s.tolist()):
                if t_u < wl.duration_s and t_u < self.until:
                    self.closed_pending.append((t_u, u))
            self.closed_pending.sort()
            self.closed_prio = int(wl.request_priority)
        self.user_of = {}

        self.running: list[int] = []      # admission order (priority mode: by key)
        self.prefilling: list[int] = []   # running requests still in prefill
        self.waiting: deque[int] = deque()
        self.swapped: deque[int] = deque()
        self._run_arr = None
        self.t = 0.0
        self.T = 0                        # steps executed

        # decoding set, in closed form
        self.hist = [0] * self.bs         # decoding requests per residue
        self.n_dec = 0
        self.sum_pg = 0                   # sum of P + GOFF over decoding requests
        self.fin_heap = []                # (last step, rid, version)
        self.stints = []                  # (rid, first step, end step)
        self.stint_start = {}

        # timeline: per-step columns that vary within a jump ...
        self.v_t, self.v_dt, self.v_gap, self.v_used = [], [], [], []
        self.v_pieces = []                # flushed (t, dt, gap, used) numpy pieces
        # ... and columns constant within a jump, as run-length (value, length)
        self.c_len = []
        self.c_vals = {k: [] for k in _CONST_COLS}
        self.pauses = []                  # [rid, start, end(nan), mode]
        self.open_pause = {}
        self.events = []                  # (t, rid, mode)

    # ------------------------------------------------------------------ setup
    def _cap(self, out):
        return np.minimum(out, self.max_tokens) if self.max_tokens is not None else out

    def check_fit_all(self, prompts, outputs, first=0):
        """Raise a KvsimError naming the first request (index ``first + i``) that can never run."""
        if len(prompts) == 0:
            return
        need = prompts + outputs - 1  # the longest prefill a resume can need
        blocks = -(-need // self.bs)
        bad = np.nonzero(blocks > self.max_fit_blocks)[0]
        if bad.size:
            i = int(bad[0])
            self._too_big(first + i, int(prompts[i]), int(outputs[i]))
        if self.o["admission"] == "guaranteed":
            out = self.max_tokens if self.max_tokens is not None else outputs
            resv = -(-(prompts + out) // self.bs)
            badg = np.nonzero(resv > self.total_blocks)[0]
            if badg.size:
                i = int(badg[0])
                raise KvsimError(
                    f"request {first + i} (prompt {int(prompts[i])} tokens + max_tokens "
                    f"{self.max_tokens if self.max_tokens is not None else int(outputs[i])}) can never be "
                    f"admitted under guaranteed admission: it reserves {int(resv[i])} blocks but the "
                    f"pool has {self.total_blocks}: expected prompt + max_tokens <= "
                    f"{self.total_blocks * self.bs:,} tokens")
        if not self.chunked:
            badb = np.nonzero(need > self.max_batched)[0]
            if badb.size:
                i = int(badb[0])
                raise KvsimError(
                    f"request {first + i} (prompt {int(prompts[i])} + output {int(outputs[i])} tokens) needs "
                    f"a prefill of up to {int(need[i])} tokens but max_num_batched_tokens="
                    f"{self.max_batched} without chunked prefill: expected max_num_batched_tokens >= "
                    f"{int(need[i])}, or enable_chunked_prefill=True")

    def _too_big(self, i, p, out):
        cap_tokens = self.max_fit_blocks * self.bs
        raise KvsimError(
            f"request {i} (prompt {p} + output {out} tokens) can never fit the KV pool: it needs up "
            f"to {-(-(p + out - 1) // self.bs)} blocks of {self.bs} tokens but the pool has "
            f"{self.total_blocks} blocks ({self.max_fit_blocks} usable for admission after the "
            f"watermark, {cap_tokens:,} tokens, "
            f"{format_bytes(self.total_blocks * self.block_bytes, 'GB')}): expected prompt + "
            f"output <= {cap_tokens:,} tokens")

    _ARRAYS = {"P": np.int64, "O": np.int64, "PRIO": np.int64, "ARR": np.float64,
               "G": np.int64, "GOFF": np.int64, "BLK": np.int64, "PFL": np.int64,
               "PFD": np.int64, "FIRST": np.float64, "FIN": np.float64, "LAST": np.float64,
               "NPRE": np.int64, "RECOMP": np.int64, "MAXGAP": np.float64, "NSWAP": np.int64,
               "PAUSED": np.float64, "VER": np.int64}

    def _alloc(self, n):
        for name, dt in self._ARRAYS.items():
            setattr(self, name, self._new_array(name, dt, n))
        self.DEC = [False] * n

    @staticmethod
    def _new_array(name, dt, n):
        return np.full(n, _FLOAT_NAN) if name in ("FIRST", "FIN") else np.zeros(n, dt)

    def _grow(self):
        n = len(self.P)
        for name, dt in self._ARRAYS.items():
            new = self._new_array(name, dt, 2 * n)
            new[:n] = getattr(self, name)
            setattr(self, name, new)
        self.DEC.extend([False] * n)

    # --------------------------------------------------------------- arrivals
    def next_arrival(self) -> float:
        a = self.open_list[self.next_open] if self.next_open < self.open_n else math.inf
        if self.closed_pending and self.closed_pending[0][0] < a:
            a = self.closed_pending[0][0]
        return a

    def _new_request(self, t_arr, p, out, prio):
        rid = self.n_req
        if rid >= len(self.P):
            self._grow()
        self.n_req += 1
        self.P[rid], self.O[rid], self.PRIO[rid], self.ARR[rid] = p, out, prio, t_arr
        self.PFL[rid] = p
        return rid

    def pull_arrivals(self, t):
        """Move every request that has arrived by ``t`` into the waiting queue."""
        while self.next_open < self.open_n and self.open_list[self.next_open] <= t:
            i = self.next_open
            rid = self._new_request(self.open_list[i], self.open_prompt[i], self.open_output[i],
                                    self.open_prio[i])
            self.next_open += 1
            self._enqueue(rid)
        while self.closed_pending and self.closed_pending[0][0] <= t:
            t_a, user = self.closed_pending.pop(0)
            k = self.closed_issued
            self.closed_issued += 1
            p, out = self.wl.next_lengths(k)
            if self.max_tokens is not None:
                out = min(out, self.max_tokens)
            self.check_fit_one(k, p, out)
            rid = self._new_request(t_a, p, out, self.closed_prio)
            self.user_of[rid] = user
            self._enqueue(rid)

    def check_fit_one(self, i, p, out):
        if -(-(p + out - 1) // self.bs) > self.max_fit_blocks or \
                (not self.chunked and p + out - 1 > self.max_batched) or \
                self.o["admission"] == "guaranteed":
            self.check_fit_all(np.array([p]), np.array([out]), first=i)

    def _key(self, rid):
        return (int(self.PRIO[rid]), float(self.ARR[rid]), rid)

    def _enqueue(self, rid, front=False):
        if self.priority_mode:
            keys = [self._key(r) for r in self.waiting]
            self.waiting.insert(bisect.bisect_left(keys, self._key(rid)), rid)
        elif front:
            self.waiting.appendleft(rid)
        else:
            self.waiting.append(rid)

    # ---------------------------------------------------------------- running
    def gen(self, rid) -> int:
        """Tokens generated so far by ``rid``."""
        return int(self.GOFF[rid]) + self.T if self.DEC[rid] else int(self.G[rid])

    def running_array(self):
        if self._run_arr is None:
            self._run_arr = np.array(self.running, dtype=np.int64)
        return self._run_arr

    def generated_array(self, rids):
        """Tokens generated so far, for an array of request ids."""
        dec = np.array([self.DEC[r] for r in rids.tolist()], dtype=bool)
        return np.where(dec, self.GOFF[rids] + self.T, self.G[rids])

    def _add_running(self, rid):
        if self.priority_mode:
            keys = [self._key(r) for r in self.running]
            self.running.insert(bisect.bisect_right(keys, self._key(rid)), rid)
        else:
            self.running.append(rid)
        self._run_arr = None

    def _start_decoding(self, rid, g_now, t_after):
        """``rid`` has ``g_now`` tokens after step ``t_after - 1``; it decodes from step ``t_after``."""
        goff = g_now - t_after
        self.GOFF[rid] = goff
        self.DEC[rid] = True
        p = int(self.P[rid])
        self.hist[(p + goff - 1) % self.bs] += 1
        self.n_dec += 1
        self.sum_pg += p + goff
        self.VER[rid] += 1
        heapq.heappush(self.fin_heap, (int(self.O[rid]) - goff - 1, rid, int(self.VER[rid])))
        self.stint_start[rid] = t_after

    def _stop_decoding(self, rid, t_end):
        """``rid`` leaves the decoding set after step ``t_end - 1``; its G is materialised."""
        goff = int(self.GOFF[rid])
        p = int(self.P[rid])
        self.G[rid] = goff + t_end
        self.DEC[rid] = False
        self.hist[(p + goff - 1) % self.bs] -= 1
        self.n_dec -= 1
        self.sum_pg -= p + goff
        self.VER[rid] += 1
        start = self.stint_start.pop(rid)
        if t_end > start:
            self.stints.append((rid, start, t_end))

    def _decoding_blocks(self, rid):
        """Blocks held between steps by a decoding request: ceil((P + G - 1) / bs)."""
        return -(-(int(self.P[rid]) + self.gen(rid) - 1) // self.bs)

    def _preempt(self, rid, t, st):
        """Evict ``rid`` (all its blocks) before step ``T``. Returns swap-out bytes."""
        self.running.remove(rid)
        self._run_arr = None
        decoding = self.DEC[rid]
        if decoding:
            self.BLK[rid] = self._decoding_blocks(rid)
            self._stop_decoding(rid, self.T)
            self.LAST[rid] = t
        else:
            self.prefilling.remove(rid)
        self.policy.released(rid)
        blocks = int(self.BLK[rid])
        self.NPRE[rid] += 1
        st[0] += 1
        mode = 0
        out_bytes = 0
        self.free += blocks
        if self.swap_mode and decoding and self.swap_used + blocks <= self.swap_blocks_cap:
            mode = 1
            self.swap_used += blocks
            out_bytes = blocks * self.block_bytes
            st[1] += blocks * self.copies_per_block
            self.swapped.append(rid)
            self.NSWAP[rid] += 1
        else:
            # Drop the KV: everything computed so far will be computed again.
            g = int(self.G[rid])
            computed = int(self.P[rid]) + g - 1 if decoding else int(self.PFD[rid])
            self.RECOMP[rid] += computed
            self.BLK[rid] = 0
            self.PFL[rid] = int(self.P[rid]) + g
            self.PFD[rid] = 0
            self._enqueue(rid, front=True)
        if self.G[rid] > 0 and rid not in self.open_pause:  # a pause starts at the last token
            self.open_pause[rid] = len(self.pauses)
            self.pauses.append([rid, float(self.LAST[rid]), _FLOAT_NAN, mode])
        self.events.append((t, rid, mode))
        return out_bytes

    # ------------------------------------------------------------------- run
    def run(self) -> SimResult:
        while True:
            if not (self.running or self.waiting or self.swapped):
                a = self.next_arrival()
                if a == math.inf or a >= self.until:
                    break
                if a > self.t:
                    self.t = a
            if self.t >= self.until:
                break
            self.pull_arrivals(self.t)
            self.step()
        self.pull_arrivals(min(self.t, math.nextafter(self.until, 0.0)))
        return self.result()

    def step(self):
        """Schedule step ``T``; execute it, or a run of identical decode steps."""
        t0 = self.t
        T = self.T
        bs = self.bs
        st = [0, 0]  # preemptions, block copies
        swap_out = swap_in = 0
        policy = self.policy

        # 1. decodes of running requests, in order; preempt on shortage.
        need = self.hist[-T % bs] if self.n_dec else 0
        if need > self.free:
            swap_out = self._allocate_with_preemption(t0, st)
        else:
            self.free -= need
        n_dec = self.n_dec

        # 2. prefill chunks for running requests still in prefill.
        budget = self.max_batched - n_dec
        chunks = []
        for rid in self.prefilling:
            if budget <= 0:
                break
            c = min(int(self.PFL[rid] - self.PFD[rid]), budget)
            chunks.append((rid, c))
            budget -= c

        # 3. swap-ins, then admissions, only if nothing was preempted.
        resumed = []
        admitted = False
        if st[0] == 0 and (self.swapped or self.waiting):
            while self.swapped and len(self.running) < self.max_num_seqs and budget >= 1:
                rid = self.swapped[0]
                blocks = int(self.BLK[rid])
                extra = 1 if int(self.P[rid] + self.G[rid]) > bs * blocks else 0
                if self.free - blocks - extra < self.watermark_blocks:
                    break
                self.swapped.popleft()
                self.swap_used -= blocks
                self.free -= blocks + extra
                self.BLK[rid] += extra
                swap_in += blocks * self.block_bytes
                st[1] += blocks * self.copies_per_block
                self._add_running(rid)
                policy.admitted(rid)
                resumed.append(rid)
                budget -= 1
            while self.waiting and not self.swapped and len(self.running) < self.max_num_seqs:
                rid = self.waiting[0]
                pf = int(self.PFL[rid])
                if budget <= 0 or (not self.chunked and pf > budget):
                    break
                blocks = -(-pf // bs)
                if not policy.can_admit(rid, blocks):
                    break
                self.waiting.popleft()
                self.free -= blocks
                self.BLK[rid] = blocks
                self.PFD[rid] = 0
                self._add_running(rid)
                self.prefilling.append(rid)
                policy.admitted(rid)
                c = min(pf, budget)
                chunks.append((rid, c))
                budget -= c
                admitted = True
            if admitted and self.priority_mode and len(self.prefilling) > 1:
                order = {r: i for i, r in enumerate(self.running)}
                self.prefilling.sort(key=order.__getitem__)

        if n_dec and not chunks and not resumed and not st[0] and not admitted:
            self._decode_run(t0)
            return
        if not chunks and not n_dec and not resumed:
            if st[0]:
                # Everything that could run was evicted: a step that computes
                # nothing and lasts as long as its swap copies, if any.
                dt = swap_out / self.pcie + st[1] * self.copy_ovh if swap_out else 0.0
                self.t = t0 + dt
                self._record(self.t, dt, dt, 0, 0, 0, 0, swap_out, 0, st[0])
                return
            raise RuntimeError("kvsim engine made no progress (internal error): "
                               f"t={t0}, waiting={len(self.waiting)}, free={self.free}")

        # 4. the step's duration.
        prefill_tokens = 0
        ctx = self.sum_pg + n_dec * T if n_dec else 0
        for rid in resumed:
            ctx += int(self.P[rid] + self.G[rid])
        nd = n_dec + len(resumed)
        flops = self.flops_per_token * nd + self.attn_coef * ctx
        kv_read = ctx
        for rid, c in chunks:
            done = int(self.PFD[rid])
            prefill_tokens += c
            flops += self.flops_per_token * c + attention_flops(self.model, done, c)
            kv_read += done + c
        dt = self.ovh + max(flops / self.F, (self.weight_read + self.kvb * kv_read) / self.B)
        if swap_out or swap_in:
            dt = dt + ((swap_out + swap_in) / self.pcie + st[1] * self.copy_ovh)
        t1 = t0 + dt
        self.t = t1
        T1 = T + 1
        self.T = T1

        # 5. effects: decoding requests advanced implicitly; settle the rest.
        emitted = n_dec
        finished = []
        for rid in resumed:
            g = int(self.G[rid]) + 1
            self._end_pause(rid, t1)
            self.LAST[rid] = t1
            emitted += 1
            if g >= self.O[rid]:
                self.G[rid] = g
                finished.append(rid)
            else:
                self._start_decoding(rid, g, T1)
        for rid, c in chunks:
            self.PFD[rid] += c
            if self.PFD[rid] >= self.PFL[rid]:
                self.PFL[rid] = 0
                self.PFD[rid] = 0
                self.prefilling.remove(rid)
                g = int(self.G[rid]) + 1
                emitted += 1
                if math.isnan(self.FIRST[rid]):
                    self.FIRST[rid] = t1
                else:
                    self._end_pause(rid, t1)
                self.LAST[rid] = t1
                if g >= self.O[rid]:
                    self.G[rid] = g
                    finished.append(rid)
                else:
                    self._start_decoding(rid, g, T1)
        if n_dec:
            self._finish_decoders(T, t1)
        for rid in finished:
            self._finish(rid, t1)
        policy.stepped(1)
        self._record(t1, dt, t1 - t0, n_dec, prefill_tokens, nd, emitted, swap_out, swap_in, st[0])

    def _finish_decoders(self, T_last, t1):
        """Finish every decoding request whose last step was ``T_last``."""
        heap = self.fin_heap
        while heap and heap[0][0] <= T_last:
            t_last, rid, ver = heapq.heappop(heap)
            if ver != self.VER[rid]:
                continue
            self.LAST[rid] = t1
            self._stop_decoding(rid, T_last + 1)
            self._finish(rid, t1)

    def _end_pause(self, rid, t1):
        gap = t1 - self.LAST[rid]
        if gap > self.MAXGAP[rid]:
            self.MAXGAP[rid] = gap
        idx = self.open_pause.pop(rid, None)
        if idx is not None:
            self.pauses[idx][2] = t1
            self.PAUSED[rid] += gap

    def _finish(self, rid, t1):
        self.FIN[rid] = t1
        self.free += -(-(int(self.P[rid]) + int(self.G[rid]) - 1) // self.bs)
        self.BLK[rid] = 0
        self.running.remove(rid)
        self._run_arr = None
        self.policy.released(rid)
        if self.closed:
            user = self.user_of.pop(rid)
            t_next = t1 + self.wl.think_s
            if t_next < self.wl.duration_s and t_next < self.until:
                bisect.insort(self.closed_pending, (t_next, user))

    def _needs_block(self, rid):
        return (int(self.P[rid]) + int(self.GOFF[rid]) + self.T - 1) % self.bs == 0

    def _allocate_with_preemption(self, t, st):
        """Blocks are short. vLLM: walk the running queue in order; while the
        current request cannot grow, evict the last one (possibly itself).
        SGLang: retract the request with the fewest generated tokens (ties: the
        longest prompt) until every decode fits."""
        if not self.policy.preempts:
            raise RuntimeError("kvsim: a policy that never preempts ran out of blocks "
                               "(internal error)")
        swap_out = 0
        if self.policy.name == "sglang":
            T = self.T
            while self.hist[-T % self.bs] > self.free:
                victim = min(self.running, key=lambda r: (self.gen(r), -int(self.P[r]), -r))
                swap_out += self._preempt(victim, t, st)
            self.policy.retracted()
            self.free -= self.hist[-T % self.bs]
            return swap_out
        queue = list(self.running)
        i = 0
        while i < len(queue):
            rid = queue[i]
            if self.DEC[rid] and self._needs_block(rid):
                while self.free < 1:
                    victim = queue.pop()
                    swap_out += self._preempt(victim, t, st)
                    if victim == rid:
                        break
                else:
                    self.free -= 1
            i += 1
        return swap_out

    def _decode_times(self, n, S1, k, t0, lim):
        """Durations and end times of up to ``k`` decode steps starting at ``t0``,
        cut before the first step that starts at or after ``lim``. Returns
        (dts, ends) with ``ends[0] == t0``; the arithmetic matches a single step."""
        fpt_n = self.flops_per_token * n
        if k <= 48:
            dts, ends = [], [t0]
            t = t0
            S = S1
            for _ in range(k):
                if t >= lim and dts:
                    break
                dt = self.ovh + max((fpt_n + self.attn_coef * S) / self.F,
                                    (self.weight_read + self.kvb * S) / self.B)
                t = t + dt
                dts.append(dt)
                ends.append(t)
                S += n
            return dts, ends
        S = S1 + np.arange(k, dtype=np.int64) * n
        dts = self.ovh + np.maximum((fpt_n + self.attn_coef * S) / self.F,
                                    (self.weight_read + self.kvb * S) / self.B)
        ends = np.cumsum(np.concatenate(([t0], dts)))
        if lim < math.inf:
            kk = max(1, int(np.searchsorted(ends[:-1], lim, side="left")))
            dts, ends = dts[:kk], ends[:kk + 1]
        return dts, ends

    def _decode_run(self, t0):
        """Execute k >= 1 pure decode steps (blocks for the first are taken).

        Stops at the first finish, before the first step that needs more blocks
        than are free, before the first step that starts at or after the next
        arrival or ``until_s``, and after one step when the policy might admit a
        waiting request in the next step.
        """
        T = self.T
        n = self.n_dec
        bs = self.bs
        k = self.fin_heap[0][0] - T + 1
        while self.VER[self.fin_heap[0][1]] != self.fin_heap[0][2]:
            heapq.heappop(self.fin_heap)
            k = self.fin_heap[0][0] - T + 1
        if k > self.max_jump or ((self.waiting or self.swapped) and not self.policy.stays_blocked):
            k = 1
        free = self.free
        hist = self.hist
        if k > 1:
            # crossings in steps T+1, T+2, ...: hist[-(T+j) % bs]; find the first
            # step whose cumulative need exceeds the free blocks.
            q, rem = divmod(free, n)
            m = bs * q
            acc = 0
            for j in range(1, bs + 1):
                acc += hist[-(T + j) % bs]
                if acc > rem:
                    m += j
                    break
            if m < k:
                k = m
        S1 = self.sum_pg + n * T
        lim = self.next_arrival()
        if self.until < lim:
            lim = self.until
        if k > 1 and lim < math.inf:
            dt1 = self.ovh + max((self.flops_per_token * n + self.attn_coef * S1) / self.F,
                                 (self.weight_read + self.kvb * S1) / self.B)
            kt = int((lim - t0) / dt1) + 2
            if kt < k:
                k = kt
        dts, ends = self._decode_times(n, S1, k, t0, lim)
        k = len(dts)
        used0 = self.total_blocks - free
        if isinstance(dts, list):
            used, acc = [], used0
            for j in range(k):
                if j:
                    acc += hist[-(T + j) % bs]
                used.append(acc)
            gaps = [ends[j + 1] - ends[j] for j in range(k)]
            t1 = ends[-1]
        else:
            cnt = np.take(np.asarray(hist, dtype=np.int64), (-(T + np.arange(k))) % bs)
            cnt[0] = 0
            used = used0 + np.cumsum(cnt)
            gaps = np.diff(ends)
            t1 = float(ends[-1])
            ends = ends[1:]
        if k > 1:
            self.free -= int(used[-1] - used0)  # blocks taken in steps T+1 .. T+k-1
        self.t = t1
        self.T = T + k
        self.policy.stepped(k)
        waiting_before = len(self.waiting)
        self._finish_decoders(T + k - 1, t1)
        # timeline
        if isinstance(dts, list):
            self.v_t.extend(ends[1:])
            self.v_dt.extend(dts)
            self.v_gap.extend(gaps)
            used[-1] = self.total_blocks - self.free
            self.v_used.extend(used)
        else:
            self._flush_v()
            used = used.copy()
            used[-1] = self.total_blocks - self.free
            self.v_pieces.append((ends, dts, gaps, used))
        swapped = len(self.swapped)
        cl, cv = self.c_len, self.c_vals
        if k > 1:
            cl.append(k - 1)
            for name, val in (("running", n), ("waiting", waiting_before),
                              ("swapped", swapped), ("preemptions", 0), ("decoding", n),
                              ("prefill_tokens", 0), ("decode_tokens", n),
                              ("emitted_tokens", n), ("swap_out_bytes", 0),
                              ("swap_in_bytes", 0)):
                cv[name].append(val)
        cl.append(1)
        for name, val in (("running", len(self.running)),
                          ("waiting", waiting_before + self._arrived_by(t1)),
                          ("swapped", swapped), ("preemptions", 0), ("decoding", n),
                          ("prefill_tokens", 0), ("decode_tokens", n),
                          ("emitted_tokens", n), ("swap_out_bytes", 0),
                          ("swap_in_bytes", 0)):
            cv[name].append(val)

    def _arrived_by(self, t):
        """Requests that arrived by ``t`` but are not yet in the queue."""
        n = 0
        if self.next_open < self.open_n:
            n += bisect.bisect_right(self.open_list, t, self.next_open) - self.next_open
        if self.closed_pending:
            n += bisect.bisect_right(self.closed_pending, (t, math.inf))
        return n

    def _record(self, t1, dt, gap, n_dec, prefill_tokens, decode_tokens, emitted,
                swap_out, swap_in, preempted):
        self.v_t.append(t1)
        self.v_dt.append(dt)
        self.v_gap.append(gap)
        self.v_used.append(self.total_blocks - self.free)
        self.c_len.append(1)
        cv = self.c_vals
        cv["running"].append(len(self.running))
        cv["waiting"].append(len(self.waiting) + self._arrived_by(t1))
        cv["swapped"].append(len(self.swapped))
        cv["preemptions"].append(preempted)
        cv["decoding"].append(n_dec)
        cv["prefill_tokens"].append(prefill_tokens)
        cv["decode_tokens"].append(decode_tokens)
        cv["emitted_tokens"].append(emitted)
        cv["swap_out_bytes"].append(swap_out)
        cv["swap_in_bytes"].append(swap_in)

    def _flush_v(self):
        if self.v_t:
            self.v_pieces.append((np.array(self.v_t), np.array(self.v_dt), np.array(self.v_gap),
                                  np.array(self.v_used, dtype=np.int64)))
            self.v_t, self.v_dt, self.v_gap, self.v_used = [], [], [], []

    # ---------------------------------------------------------------- result
    def result(self) -> SimResult:
        self._flush_v()
        n = self.n_req
        # requests still decoding: materialise their counters
        for rid in [r for r in self.running if self.DEC[r]]:
            self.LAST[rid] = self.t
            self._stop_decoding(rid, self.T)
        tl = {}
        for i, name in enumerate(("t_s", "dt_s", "gap_s", "kv_blocks_used")):
            parts = [p[i] for p in self.v_pieces]
            tl[name] = (np.concatenate(parts) if parts else np.zeros(0)).astype(_TL_COLS[name])
        lens = np.asarray(self.c_len, dtype=np.int64)
        for name in _CONST_COLS:
            tl[name] = np.repeat(np.asarray(self.c_vals[name], dtype=np.int64), lens)
        tl = {name: tl[name] for name in _TL_COLS}
        # longest gap per request: pauses (already in MAXGAP) and decoding stints
        maxgap = self.MAXGAP[:n].copy()
        if self.stints:
            st = np.array(self.stints, dtype=np.int64)
            stint_max = _range_max(tl["gap_s"], st[:, 1], st[:, 2])
            np.maximum.at(maxgap, st[:, 0], stint_max)
        first, fin = self.FIRST[:n].copy(), self.FIN[:n].copy()
        requests = {
            "arrival_s": self.ARR[:n].copy(),
            "first_token_s": first,
            "finish_s": fin,
            "ttft_s": first - self.ARR[:n],
            "prompt_tokens": self.P[:n].copy(),
            "output_tokens": self.O[:n].copy(),
            "generated_tokens": self.G[:n].copy(),
            "preemptions": self.NPRE[:n].copy(),
            "recomputed_tokens": self.RECOMP[:n].copy(),
            "swaps": self.NSWAP[:n].copy(),
            "max_gap_s": maxgap,
            "paused_s": self.PAUSED[:n].copy(),
            "priority": self.PRIO[:n].copy(),
        }
        pz = np.array(self.pauses, dtype=float).reshape(-1, 4)
        pauses = {"request": pz[:, 0].astype(np.int64), "start_s": pz[:, 1], "end_s": pz[:, 2],
                  "mode": pz[:, 3].astype(np.int64)}
        ev = np.array(self.events, dtype=float).reshape(-1, 3)
        events = {"t_s": ev[:, 0], "request": ev[:, 1].astype(np.int64),
                  "mode": ev[:, 2].astype(np.int64)}
        cfg = dict(self.o)
        cfg.update(
            model=self.model.name, gpu=self.gpu.name, num_gpu_blocks=self.total_blocks,
            watermark_blocks=self.watermark_blocks, max_num_batched_tokens=self.max_batched,
            kv_bytes_per_token=self.kvb, block_bytes=self.block_bytes,
            swap_space_blocks=self.swap_blocks_cap, simulated_s=float(self.t),
        )
        return SimResult(Table(requests), Table(tl), Table(pauses), Table(events), cfg)


def _range_max(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(values[lo:hi]) for every pair (non-empty ranges), with a sparse table."""
    table = [values]
    width = 1
    while 2 * width <= len(values):
        prev = table[-1]
        table.append(np.maximum(prev[:-width], prev[width:]))
        width *= 2
    length = hi - lo
    level = np.floor(np.log2(length)).astype(np.int64)
    out = np.empty(len(lo))
    for lv in np.unique(level):
        sel = level == lv
        row = table[lv]
        w = 1 << int(lv)
        out[sel] = np.maximum(row[lo[sel]], row[hi[sel] - w])
    return out


_CONST_COLS = ("running", "waiting", "swapped", "preemptions", "decoding", "prefill_tokens",
               "decode_tokens", "emitted_tokens", "swap_out_bytes", "swap_in_bytes")

_TL_COLS = {
    "t_s": np.float64, "dt_s": np.float64, "kv_blocks_used": np.int64, "running": np.int64,
    "waiting": np.int64, "swapped": np.int64, "preemptions": np.int64, "decoding": np.int64,
    "prefill_tokens": np.int64, "decode_tokens": np.int64, "emitted_tokens": np.int64,
    "swap_out_bytes": np.int64, "swap_in_bytes": np.int64, "gap_s": np.float64,
}
