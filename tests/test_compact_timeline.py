"""The compact timeline (issue 33, item 2): decode runs kept as their parameters, the columns
expanded by numpy when first read, once.

Three checks: the expansion equals a row-by-row reading of what the recorder was told
(fuzzed call sequences, and fuzzed engine configurations against ``step_by_step``); a run
whose batch changes every step works; every lazily expanded column is computed once, and
``simulate`` alone expands none.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

import kvsim
from kvsim.engine import timeline
from kvsim.engine.loop import build_engine
from kvsim.engine.timeline import _CONST, TIMELINE_COLUMNS, CompactTimeline, Recorder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_engine_properties import random_config  # the fuzz harness's configurations

MODEL, GPU = "llama-2-7b", "l40s-48gb"


# ------------------------------------------------------------ a row-by-row reference reading
def _rows_of_calls(calls: list[tuple[str, tuple]]) -> dict[str, list]:
    """The timeline the calls describe, one row at a time in plain Python (the meaning
    :meth:`Recorder.step` and :meth:`Recorder.decode_run` document)."""
    rows: dict[str, list] = {name: [] for name in TIMELINE_COLUMNS}

    def add(**values):
        for name in TIMELINE_COLUMNS:
            rows[name].append(values.get(name, 0))

    for kind, args in calls:
        if kind == "step":
            t1, dt, gap, used, cached, const = args
            add(t_s=t1, dt_s=dt, gap_s=gap, kv_blocks_used=used, kv_blocks_cached=cached,
                **dict(zip(_CONST, const, strict=True)))
            continue
        (t0, ends, timing, T, crossings, used0, blank0, cached0, used_end, cached_end, batch,
         waiting, swapped, running_end, waiting_end, idle) = args
        context, growth, gpu_fixed_s, s_per_token, cpu_s, cpu_bound_until = timing
        bs, taken, previous = len(crossings), 0, t0
        for j in range(len(ends)):
            c = context + j * growth
            dt = gpu_fixed_s + s_per_token * c if c >= cpu_bound_until else cpu_s
            end = previous + dt
            if j > 0:
                taken += crossings[-(T + j) % bs]
            last = j == len(ends) - 1
            add(t_s=end, dt_s=dt, gap_s=end - previous,
                kv_blocks_used=used_end if last else used0 + taken,
                kv_blocks_cached=cached_end if last else cached0 - max(0, taken - blank0),
                running=running_end if last else batch + idle,
                waiting=waiting_end if last else waiting, swapped=swapped,
                decoding=batch, decode_tokens=batch, emitted_tokens=batch)
            previous = end
    return rows


def _random_calls(rng: random.Random) -> list[tuple[str, tuple]]:
    """A fuzzed sequence of single steps and decode runs (runs of 1 step too, batches that
    change from one call to the next, runs back to back)."""
    calls, t, T = [], rng.random(), rng.randint(0, 40)
    bs = rng.choice([1, 2, 4, 16])
    for _ in range(rng.randint(0, 30)):
        if rng.random() < 0.4:
            dt = rng.uniform(0.001, 0.1)
            gap = rng.choice([dt, rng.uniform(0, 0.3)])
            const = tuple(rng.randint(0, 9) for _ in _CONST)
            calls.append(("step", (t + dt, dt, gap, rng.randint(0, 99), rng.randint(0, 9), const)))
            t, T = t + dt, T + 1
            continue
        k = rng.choice([1, 1, 2, rng.randint(1, 60), rng.randint(1, 600)])
        t0 = t + rng.choice([0.0, rng.uniform(0, 0.5)])           # idle time before it, sometimes
        batch = rng.randint(1, 9)
        gpu_fixed_s, s_per_token = rng.uniform(0.001, 0.02), rng.uniform(0, 1e-5)
        context = rng.randint(0, 3000)
        # CPU-bound for a while, sometimes (asynchronous scheduling), or never
        cpu_s, cpu_bound_until = rng.choice([(0.0, 0), (rng.uniform(0.001, 0.05),
                                                       context + rng.randint(-50, 50 * k))])
        # the context grows by the batch a step, or (sliding windows) by another count
        growth = rng.choice([batch, batch, rng.randint(0, 3 * batch)])
        timing = (context, growth, gpu_fixed_s, s_per_token, cpu_s, cpu_bound_until)
        ends, end = [], t0                  # as the engine sums them
        for c in (context + j * growth for j in range(k)):
            end += gpu_fixed_s + s_per_token * c if c >= cpu_bound_until else cpu_s
            ends.append(end)
        crossings = [rng.randint(0, 8) for _ in range(bs)]
        used0, blank0, cached0 = rng.randint(0, 200), rng.randint(0, 50), rng.randint(0, 60)
        calls.append(("run", (t0, ends, timing, T, crossings, used0, blank0, cached0,
                              rng.randint(0, 200), rng.randint(0, 60), batch,
                              rng.randint(0, 9), rng.randint(0, 3), rng.randint(0, 9),
                              rng.randint(0, 9), rng.choice([0, 0, 2]))))
        t, T = ends[-1], T + k
    return calls


@pytest.mark.parametrize("seed", range(60))
def test_the_expansion_equals_a_row_by_row_reading_of_the_calls(seed, monkeypatch):
    # runs are expanded a group at a time: groups of one run, of a few, of all
    monkeypatch.setattr(timeline, "_CHUNK_STEPS", [1, 50, 1 << 16][seed % 3])
    calls = _random_calls(random.Random(seed))
    want = _rows_of_calls(calls)
    for final in (False, True):
        rec = Recorder()
        for kind, args in calls:
            (rec.step if kind == "step" else rec.decode_run)(*args)
        tl = rec.timeline(final=final)
        assert isinstance(tl, CompactTimeline) and tl.num_rows == len(want["t_s"])
        assert rec.end_s() == (want["t_s"][-1] if calls else 0.0)
        for name, dtype in TIMELINE_COLUMNS.items():
            column = tl[name]
            assert column.dtype == dtype, name
            # bytes, not values: the same sums in the same order
            assert column.tobytes() == np.array(want[name], dtype=dtype).tobytes(), (seed, name)


def test_a_final_timeline_freezes_its_recorder():
    """``final=True`` shares the recorder's buffers: the recorder can no longer grow."""
    rec = Recorder()
    rec.step(0.1, 0.1, 0.0, 1, 0, (1,) + (0,) * (len(_CONST) - 1))
    tl = rec.timeline(final=True)
    assert tl["t_s"].tolist() == [0.1]
    with pytest.raises(BufferError):
        rec.step(0.2, 0.1, 0.1, 1, 0, (1,) + (0,) * (len(_CONST) - 1))


# --------------------------------------------------------------- the engine's own records
def _tables(result) -> dict[str, bytes]:
    return {f"{t}/{c}": np.asarray(getattr(result, t)[c]).tobytes()
            for t in ("timeline", "requests") for c in getattr(result, t).columns}


@pytest.mark.parametrize("seed", range(12))
def test_jumps_expand_to_the_step_by_step_record_on_fuzzed_configurations(seed):
    """Runs of many decode steps, expanded, equal the same engine's record one step at a
    time (``step_by_step``), column for column, to the byte."""
    wl, opts = random_config(random.Random(1000 + seed))
    try:
        fast = kvsim.simulate(wl, model=MODEL, gpu=GPU, **opts)
    except kvsim.KvsimError as refused:                  # refused the same way, step by step
        with pytest.raises(kvsim.KvsimError, match=str(refused)[:40].replace("(", ".")):
            kvsim.simulate(wl, model=MODEL, gpu=GPU, step_by_step=True, **opts)
        return
    slow = kvsim.simulate(wl, model=MODEL, gpu=GPU, step_by_step=True, **opts)
    assert _tables(fast) == _tables(slow)


def test_the_fuzzed_configurations_do_jump():
    """The test above compares something: its configurations have decode runs of many steps."""
    long_runs = 0
    for seed in range(12):
        wl, opts = random_config(random.Random(1000 + seed))
        try:
            engine = build_engine(wl, MODEL, GPU, opts)
            engine.run()
        except kvsim.KvsimError:
            continue
        runs = engine.scheduler.rec.timeline()._runs
        long_runs += int((runs[:, 1] > 1).sum())
    assert long_runs >= 12


def test_a_run_whose_batch_changes_every_step():
    """Eight requests whose answers end one step apart: no two steps share a batch, every
    decode run is one step long, and the timeline still equals the step-by-step one."""
    reqs = [kvsim.Request(0.0, 16, 2 + i) for i in range(8)]
    opts = dict(num_gpu_blocks=200, block_size=4, max_num_seqs=8)
    fast = kvsim.simulate(reqs, model=MODEL, gpu=GPU, **opts)
    slow = kvsim.simulate(reqs, model=MODEL, gpu=GPU, step_by_step=True, **opts)
    assert _tables(fast) == _tables(slow)
    decoding = fast.timeline["decoding"]
    decode_only = decoding[fast.timeline["prefill_tokens"] == 0]
    assert decode_only.size >= 7 and (np.diff(decode_only) < 0).all()   # shrinks every step


@pytest.mark.pure_engine
def test_each_column_is_expanded_once_and_only_when_read(monkeypatch):
    expanded: list[str] = []
    real = CompactTimeline._expand

    def counting(self, name):
        expanded.append(name)
        real(self, name)

    monkeypatch.setattr(CompactTimeline, "_expand", counting)
    wl = kvsim.Workload.poisson(2.0, 30.0, prompt=400, output=120, seed=4)
    result = kvsim.simulate(wl, model=MODEL, gpu=GPU, gpu_memory_utilization=0.6)
    assert expanded == []                               # simulate alone expands nothing
    first = result.summary()                            # reads most columns and max_gap_s
    for name in TIMELINE_COLUMNS:
        assert result.timeline[name] is result.timeline[name]
    assert result.requests["max_gap_s"] is result.requests["max_gap_s"]
    assert result.summary() == first
    # every column once; the two time columns are expanded together, and the two block ones
    pairs = ({"t_s", "dt_s"}, {"kv_blocks_used", "kv_blocks_cached"})
    assert len(expanded) == len(set(expanded)) == len(TIMELINE_COLUMNS) - 2
    assert all(len(pair & set(expanded)) == 1 for pair in pairs)
    assert set(expanded).union(*pairs) == set(TIMELINE_COLUMNS)
    assert not result.timeline["t_s"].flags.writeable
