"""A plain step-by-step reference engine (tests only).

The first kvsim engine, kept as the independent reference for the
differential test of kvsim.engine's event jumps and closed-form bookkeeping:
every step updates every request explicitly.

Semantics: see kvsim/engine.py.
"""
from __future__ import annotations

import bisect
import math
from collections import deque

import numpy as np

from kvsim.costs import CostModel, attention_flops
from kvsim.engine import _Engine as _FastEngine
from kvsim.options import resolve_options
from kvsim.policies import make_policy
from kvsim.result import SimResult, Table
from kvsim.workload import Request, Workload

_FLOAT_NAN = float("nan")


def simulate_reference(workload, *, model, gpu, **engine_options) -> SimResult:
    """Same signature and options as :func:`kvsim.simulate`; plain stepping."""
    if isinstance(workload, (list, tuple)):
        workload = Workload.from_requests(workload)
    elif isinstance(workload, Request):
        workload = Workload.from_requests([workload])
    model, gpu, budget, cost, o = resolve_options(model, gpu, engine_options)
    return _Engine(workload, model, gpu, budget, cost, o).run()


class _Engine:
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
        self.max_jump = 1

        # --- cost model constants (integers where exact arithmetic matters)
        tp = o["tensor_parallel_size"]
        self.kvb = budget.kv_bytes_per_token
        self.block_bytes = self.kvb * self.bs
        self.weight_read = int(o["weight_bytes"] if o["weight_bytes"] is not None else budget.weight_bytes)
        self.flops_per_token = 2 * model.active_params
        self.attn_coef = 4 * model.kv_layers * model.num_attention_heads * model.head_dim
        self.F = float(gpu.peak_flops * tp * cost.mfu)
        self.B = float(gpu.hbm_bytes_per_s * tp * cost.hbm_efficiency)
        self.ovh = float(cost.step_overhead_s)
        self.pcie = float(cost.pcie_bytes_per_s or gpu.pcie_bytes_per_s * tp)
        self.copy_ovh = float(cost.swap_copy_overhead_s)
        kv_factor = 1 if model.mla_kv_lora_rank else 2
        self.copies_per_block = model.kv_layers * kv_factor
        self.swap_blocks_cap = o["swap_space_bytes"] // self.block_bytes if self.block_bytes else 0
        self.swap_used = 0

        pol_params = {}
        if o["admission"] == "sglang":
            pol_params = dict(init_new_token_ratio=o["init_new_token_ratio"],
                              min_new_token_ratio=o["min_new_token_ratio"],
                              new_token_ratio_decay=o["new_token_ratio_decay"])
        self.policy = make_policy(o["admission"], **pol_params)
        self.policy.bind(self)
        # Largest prefill a request may need (resume after preemption):
        # prompt + output - 1 tokens must fit in the pool below the watermark.
        self.max_fit_blocks = self.total_blocks - self.watermark_blocks

        # --- requests (grown on demand for closed loops)
        self.closed = wl.is_closed_loop
        n0 = 64 if self.closed else len(wl)
        self._alloc(n0)
        self.n_req = 0
        if not self.closed:
            arr = wl.arrival_s
            if self.until < math.inf:
                arr = arr[arr < self.until]
            self.open_arr = arr
            self.open_n = len(arr)
            self.check_fit_all(wl.prompt_tokens[:self.open_n], self._cap(wl.output_tokens[:self.open_n]))
        else:
            self.open_arr = np.zeros(0)
            self.open_n = 0
        self.next_open = 0
        self.closed_pending = []  # sorted list of (time, user)
        self.closed_issued = 0
        if self.closed:
            for u, t_u in enumerate(wl.user_start_s.tolist()):
                if t_u < wl.duration_s and t_u < self.until:
                    self.closed_pending.append((t_u, u))
            self.closed_pending.sort()
        self.user_of = {}

        self.running: list[int] = []
        self.prefilling: list[int] = []  # running requests still in prefill (subset)
        self.waiting: deque[int] = deque()
        self.swapped: deque[int] = deque()
        self._run_arr = None
        self.t = 0.0

        # output buffers: lists of numpy chunks (jumps) or scalars (steps)
        self.tl_chunks = []
        self.tl_rows = {k: [] for k in _TL_COLS}
        self.pauses = []   # [rid, start, end(nan), mode]
        self.open_pause = {}
        self.events = []   # (t, rid, mode)

    # ------------------------------------------------------------------ setup
    # Input validation is shared with kvsim's engine: only the scheduling loop
    # below is the independent reference.
    _cap = _FastEngine._cap
    check_fit_all = _FastEngine.check_fit_all
    check_fit_one = _FastEngine.check_fit_one
    _too_big = _FastEngine._too_big

    def _alloc(self, n):
        self.P = np.zeros(n, np.int64)
        self.O = np.zeros(n, np.int64)
        self.PRIO = np.zeros(n, np.int64)
        self.ARR = np.zeros(n)
        self.G = np.zeros(n, np.int64)          # tokens generated (delivered) so far
        self.BLK = np.zeros(n, np.int64)        # GPU blocks held
        self.PFL = np.zeros(n, np.int64)        # length of the current prefill (0 = decoding)
        self.PFD = np.zeros(n, np.int64)        # prefill tokens done in the current prefill
        self.FIRST = np.full(n, _FLOAT_NAN)
        self.FIN = np.full(n, _FLOAT_NAN)
        self.LAST = np.zeros(n)                 # time of the last token delivered
        self.NPRE = np.zeros(n, np.int64)
        self.RECOMP = np.zeros(n, np.int64)
        self.MAXGAP = np.zeros(n)
        self.NSWAP = np.zeros(n, np.int64)
        self.PAUSED = np.zeros(n)

    _ARRAYS = ("P", "O", "PRIO", "ARR", "G", "BLK", "PFL", "PFD", "FIRST", "FIN", "LAST", "NPRE",
               "RECOMP", "MAXGAP", "NSWAP", "PAUSED")

    def _grow(self):
        n = len(self.P)
        for name in self._ARRAYS:
            old = getattr(self, name)
            new = np.full(2 * n, _FLOAT_NAN) if name in ("FIRST", "FIN") else np.zeros(2 * n, old.dtype)
            new[:n] = old
            setattr(self, name, new)

    # --------------------------------------------------------------- arrivals
    def next_arrival(self) -> float:
        a = self.open_arr[self.next_open] if self.next_open < self.open_n else math.inf
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
        wl = self.wl
        while self.next_open < self.open_n and self.open_arr[self.next_open] <= t:
            i = self.next_open
            rid = self._new_request(float(self.open_arr[i]), int(wl.prompt_tokens[i]),
                                    int(self._cap(wl.output_tokens[i])), int(wl.priority[i]))
            self.next_open += 1
            self._enqueue(rid)
        while self.closed_pending and self.closed_pending[0][0] <= t:
            t_a, user = self.closed_pending.pop(0)
            k = self.closed_issued
            self.closed_issued += 1
            p, out = wl.next_lengths(k)
            out = min(out, self.max_tokens) if self.max_tokens is not None else out
            self.check_fit_one(k, p, out)
            rid = self._new_request(t_a, p, out, int(wl.request_priority))
            self.user_of[rid] = user
            self._enqueue(rid)

    def _key(self, rid):
        return (int(self.PRIO[rid]), float(self.ARR[rid]), rid)

    def _enqueue(self, rid, front=False):
        if self.priority_mode:
            keys = [self._key(r) for r in self.waiting]
            pos = bisect.bisect_left(keys, self._key(rid))
            self.waiting.insert(pos, rid)
        elif front:
            self.waiting.appendleft(rid)
        else:
            self.waiting.append(rid)

    # ---------------------------------------------------------------- running
    def generated_array(self, rids):
        return self.G[rids]

    def running_array(self):
        if self._run_arr is None:
            self._run_arr = np.array(self.running, dtype=np.int64)
        return self._run_arr

    def _add_running(self, rid):
        if self.priority_mode:
            keys = [self._key(r) for r in self.running]
            self.running.insert(bisect.bisect_right(keys, self._key(rid)), rid)
        else:
            self.running.append(rid)
        self._run_arr = None

    def _remove_running(self, rid):
        self.running.remove(rid)
        if self.PFL[rid]:
            self.prefilling.remove(rid)
        self._run_arr = None

    def _preempt(self, rid, t, step_state):
        """Evict ``rid`` (all its blocks). Returns the swap-out bytes (0 for recompute)."""
        self._remove_running(rid)
        self.policy.released(rid)
        blocks = int(self.BLK[rid])
        self.NPRE[rid] += 1
        step_state["preempted"] += 1
        mode = 0
        out_bytes = 0
        decoding = self.PFL[rid] == 0
        if (self.swap_mode and decoding and blocks
                and self.swap_used + blocks <= self.swap_blocks_cap):
            mode = 1
            self.swap_used += blocks
            out_bytes = blocks * self.block_bytes
            step_state["copies"] += blocks * self.copies_per_block
            self.swapped.append(rid)
            self.NSWAP[rid] += 1
            self.free += blocks
        else:
            # Discard the KV: everything computed so far is recomputed later.
            computed = int(self.PFD[rid]) if not decoding else int(self.P[rid] + self.G[rid] - 1)
            self.RECOMP[rid] += computed
            self.free += blocks
            self.BLK[rid] = 0
            self.PFL[rid] = int(self.P[rid] + self.G[rid])
            self.PFD[rid] = 0
            self._enqueue(rid, front=True)
        if self.G[rid] > 0 and rid not in self.open_pause:  # a pause continues until resumed
            self.open_pause[rid] = len(self.pauses)
            self.pauses.append([rid, float(self.LAST[rid]), _FLOAT_NAN, mode])
        self.events.append((t, rid, mode))
        return out_bytes

    # ------------------------------------------------------------------- run
    def run(self) -> SimResult:
        while True:
            busy = self.running or self.waiting or self.swapped
            if not busy:
                a = self.next_arrival()
                if a == math.inf or a >= self.until:
                    break
                self.t = max(self.t, a)
            if self.t >= self.until:
                break
            self.pull_arrivals(self.t)
            self.step()
        self.pull_arrivals(min(self.t, math.nextafter(self.until, 0.0)))
        return self.result()

    def step(self):
        """Schedule one step; execute it, or a run of identical decode steps."""
        t0 = self.t
        st = {"preempted": 0, "copies": 0}
        swap_out = swap_in = 0
        policy = self.policy

        # 1. decodes of running requests, in order; preempt on shortage.
        run = self.running_array()
        if self.prefilling:
            dec = run[self.PFL[run] == 0]
        else:
            dec = run
        if dec.size:
            L = self.P[dec] + self.G[dec]
            need = L > self.bs * self.BLK[dec]
            nneed = int(np.count_nonzero(need))
        else:
            nneed = 0
        if nneed > self.free:
            swap_out = self._allocate_with_preemption(t0, st)
            run = self.running_array()
            dec = run[self.PFL[run] == 0] if self.prefilling else run
        elif nneed:
            self.BLK[dec] += need
            self.free -= nneed
        n_dec = int(dec.size)

        # 2. prefill chunks for running requests still in prefill.
        budget = self.max_batched - n_dec
        chunks = []  # (rid, chunk)
        for rid in self.prefilling:
            if budget <= 0:
                break
            c = min(int(self.PFL[rid] - self.PFD[rid]), budget)
            chunks.append((rid, c))
            budget -= c

        # 3. swap-ins, then admissions, only if nothing was preempted.
        resumed_swap = []
        admitted = False
        if st["preempted"] == 0:
            while self.swapped and len(self.running) < self.max_num_seqs and budget >= 1:
                rid = self.swapped[0]
                blocks = int(self.BLK[rid])
                extra = 1 if self.P[rid] + self.G[rid] > self.bs * blocks else 0
                if self.free - blocks - extra < self.watermark_blocks:
                    break
                self.swapped.popleft()
                self.swap_used -= blocks
                self.free -= blocks + extra
                self.BLK[rid] += extra
                swap_in += blocks * self.block_bytes
                st["copies"] += blocks * self.copies_per_block
                self._add_running(rid)
                policy.admitted(rid)
                resumed_swap.append(rid)
                budget -= 1
            while self.waiting and not self.swapped and len(self.running) < self.max_num_seqs:
                rid = self.waiting[0]
                pf = int(self.PFL[rid])
                if budget <= 0 or (not self.chunked and pf > budget):
                    break
                blocks = -(-pf // self.bs)
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
            if self.priority_mode and len(self.prefilling) > 1:
                order = {r: i for i, r in enumerate(self.running)}
                self.prefilling.sort(key=order.__getitem__)

        if not chunks and not resumed_swap and st["preempted"] == 0 and swap_out == 0 \
                and not admitted and n_dec:
            self._decode_run(dec, t0)
            return
        if not chunks and not n_dec and not resumed_swap:
            if st["preempted"]:
                # Everything running was evicted in this step; nothing computes.
                dt = swap_out / self.pcie + st["copies"] * self.copy_ovh if swap_out else 0.0
                self.t = t0 + dt
                self._record_step(t0, self.t, dt, 0, 0, 0, 0, swap_out, swap_in, st)
                return
            raise RuntimeError("kvsim engine made no progress (internal error): "
                               f"t={t0}, waiting={len(self.waiting)}, free={self.free}")

        # 4. cost of the step.
        prefill_tokens = 0
        flops = 0
        kv_read = 0
        if n_dec or resumed_swap:
            ctx = int(self.P[dec].sum() + self.G[dec].sum()) if n_dec else 0
            for rid in resumed_swap:
                ctx += int(self.P[rid] + self.G[rid])
            nd = n_dec + len(resumed_swap)
            flops += self.flops_per_token * nd + self.attn_coef * ctx
            kv_read += ctx
        for rid, c in chunks:
            done = int(self.PFD[rid])
            prefill_tokens += c
            flops += self.flops_per_token * c + attention_flops(self.model, done, c)
            kv_read += done + c
        dt = self.ovh + max(flops / self.F, (self.weight_read + self.kvb * kv_read) / self.B)
        if swap_out or swap_in:
            dt = dt + ((swap_out + swap_in) / self.pcie + st["copies"] * self.copy_ovh)
        t1 = t0 + dt
        self.t = t1

        # 5. effects.
        emitted = 0
        finished = []
        if n_dec:
            self.G[dec] += 1
            gap = t1 - t0
            self.MAXGAP[dec] = np.maximum(self.MAXGAP[dec], gap)
            self.LAST[dec] = t1
            emitted += n_dec
            done_mask = self.G[dec] >= self.O[dec]
            if done_mask.any():
                finished.extend(dec[done_mask].tolist())
        for rid in resumed_swap:
            self.G[rid] += 1
            self._end_pause(rid, t1)
            self.LAST[rid] = t1
            emitted += 1
            if self.G[rid] >= self.O[rid]:
                finished.append(rid)
        for rid, c in chunks:
            self.PFD[rid] += c
            if self.PFD[rid] >= self.PFL[rid]:
                self.PFL[rid] = 0
                self.PFD[rid] = 0
                self.prefilling.remove(rid)
                self.G[rid] += 1
                emitted += 1
                if math.isnan(self.FIRST[rid]):
                    self.FIRST[rid] = t1
                else:
                    self._end_pause(rid, t1)
                self.LAST[rid] = t1
                if self.G[rid] >= self.O[rid]:
                    finished.append(rid)
        self._run_arr = None
        for rid in finished:
            self._finish(rid, t1)
        policy.stepped(1)
        self._record_step(t0, t1, dt, n_dec, prefill_tokens, n_dec + len(resumed_swap),
                          emitted, swap_out, swap_in, st)

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
        self.free += int(self.BLK[rid])
        self.BLK[rid] = 0
        self.running.remove(rid)
        self._run_arr = None
        self.policy.released(rid)
        if self.closed:
            user = self.user_of.pop(rid)
            t_next = t1 + self.wl.think_s
            if t_next < self.wl.duration_s and t_next < self.until:
                bisect.insort(self.closed_pending, (t_next, user))

    def _allocate_with_preemption(self, t, st):
        """Slow path: blocks are short. vLLM: walk the running queue in order;
        while the current request cannot grow, evict the last one (possibly
        itself). SGLang: retract the request with the fewest generated tokens
        until every decode fits."""
        if not self.policy.preempts:
            raise RuntimeError("kvsim: a policy that never preempts ran out of blocks (internal error)")
        swap_out = 0
        bs = self.bs
        if self.policy.name == "sglang":
            while True:
                run = self.running_array()
                dec = run[self.PFL[run] == 0]
                need = int(np.count_nonzero(self.P[dec] + self.G[dec] > bs * self.BLK[dec]))
                if need <= self.free:
                    break
                victim = min(self.running, key=lambda r: (int(self.G[r]), -int(self.P[r]), -r))
                swap_out += self._preempt(victim, t, st)
            self.policy.retracted()
            if need:
                mask = self.P[dec] + self.G[dec] > bs * self.BLK[dec]
                self.BLK[dec] += mask
                self.free -= need
            return swap_out
        queue = list(self.running)
        i = 0
        while i < len(queue):
            rid = queue[i]
            if self.PFL[rid] == 0 and self.P[rid] + self.G[rid] > bs * self.BLK[rid]:
                while self.free < 1:
                    victim = queue[-1]
                    swap_out += self._preempt(victim, t, st)
                    queue.pop()
                    if victim == rid:
                        break
                else:
                    self.BLK[rid] += 1
                    self.free -= 1
            i += 1
        return swap_out

    def _decode_run(self, dec, t0):
        """One pure decode step (blocks already taken)."""
        n = int(dec.size)
        S = int((self.P[dec] + self.G[dec]).sum())
        dt = self._decode_dt_scalar(n, S)
        t1 = t0 + dt
        self.G[dec] += 1
        self.MAXGAP[dec] = np.maximum(self.MAXGAP[dec], t1 - t0)
        self.LAST[dec] = t1
        self.t = t1
        self.policy.stepped(1)
        fin = dec[self.G[dec] >= self.O[dec]]
        for rid in fin.tolist():
            self._finish(rid, t1)
        st = {"preempted": 0, "copies": 0}
        self._record_step(t0, t1, dt, n, 0, n, n, 0, 0, st)

    def _decode_dt_scalar(self, n, S):
        flops = self.flops_per_token * n + self.attn_coef * S
        return self.ovh + max(flops / self.F, (self.weight_read + self.kvb * S) / self.B)

    def _waiting_counts(self, ends):
        """Queue length after each step: waiting now + arrivals by each step's end."""
        base = len(self.waiting)
        extra = np.zeros(len(ends), np.int64)
        if self.next_open < self.open_n:
            extra += np.searchsorted(self.open_arr, ends, side="right") - self.next_open
        if self.closed_pending:
            times = np.array([p[0] for p in self.closed_pending])
            extra += np.searchsorted(times, ends, side="right")
        return base + extra

    def _record_step(self, t0, t1, dt, n_dec, prefill_tokens, decode_tokens, emitted,
                     swap_out, swap_in, st):
        r = self.tl_rows
        r["t_s"].append(t1)
        r["dt_s"].append(dt)
        r["kv_blocks_used"].append(self.total_blocks - self.free)
        r["running"].append(len(self.running))
        r["waiting"].append(int(self._waiting_counts(np.array([t1]))[0]))
        r["swapped"].append(len(self.swapped))
        r["preemptions"].append(st["preempted"])
        r["decoding"].append(n_dec)
        r["prefill_tokens"].append(prefill_tokens)
        r["decode_tokens"].append(decode_tokens)
        r["emitted_tokens"].append(emitted)
        r["swap_out_bytes"].append(swap_out)
        r["swap_in_bytes"].append(swap_in)
        r["gap_s"].append(t1 - t0)
        self._flush_rows()

    def _flush_rows(self):
        r = self.tl_rows
        if r["t_s"]:
            self.tl_chunks.append({k: np.asarray(v, dtype=_TL_COLS[k]) for k, v in r.items()})
            for v in r.values():
                v.clear()

    # ---------------------------------------------------------------- result
    def result(self) -> SimResult:
        self._flush_rows()
        if self.tl_chunks:
            tl = {k: np.concatenate([c[k] for c in self.tl_chunks]).astype(dt, copy=False)
                  for k, dt in _TL_COLS.items()}
        else:
            tl = {k: np.zeros(0, dt) for k, dt in _TL_COLS.items()}
        n = self.n_req
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
            "max_gap_s": self.MAXGAP[:n].copy(),
            "paused_s": self.PAUSED[:n].copy(),
            "priority": self.PRIO[:n].copy(),
        }
        pz = np.array(self.pauses, dtype=float).reshape(-1, 4)
        pauses = {"request": pz[:, 0].astype(np.int64), "start_s": pz[:, 1], "end_s": pz[:, 2],
                  "mode": pz[:, 3].astype(np.int64)}
        ev = np.array(self.events, dtype=float).reshape(-1, 3)
        events = {"t_s": ev[:, 0], "request": ev[:, 1].astype(np.int64),
                  "mode": ev[:, 2].astype(np.int64)}
        cfg = {k: v for k, v in self.o.items()}
        cfg.update(
            model=self.model.name, gpu=self.gpu.name, num_gpu_blocks=self.total_blocks,
            watermark_blocks=self.watermark_blocks, max_num_batched_tokens=self.max_batched,
            kv_bytes_per_token=self.kvb, block_bytes=self.block_bytes,
            swap_space_blocks=self.swap_blocks_cap, simulated_s=float(self.t),
        )
        return SimResult(Table(requests), Table(tl), Table(pauses), Table(events), cfg)


_TL_COLS = {
    "t_s": np.float64, "dt_s": np.float64, "kv_blocks_used": np.int64, "running": np.int64,
    "waiting": np.int64, "swapped": np.int64, "preemptions": np.int64, "decoding": np.int64,
    "prefill_tokens": np.int64, "decode_tokens": np.int64, "emitted_tokens": np.int64,
    "swap_out_bytes": np.int64, "swap_in_bytes": np.int64, "gap_s": np.float64,
}
