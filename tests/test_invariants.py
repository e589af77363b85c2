"""``simulate(..., check=True)``: vLLM-style invariants asserted after every step.

* every scenario, with jumps and step by step, passes every invariant and gives
  the same result as an unchecked run (the checks only read);
* each invariant catches its planted fault: a leaked block, a request queued
  twice, a step over its token budget, a batch over ``max_num_seqs``, a pool
  whose counts disagree, a token count past its limit, a request that finished
  short of its answer.
"""
from __future__ import annotations

import pytest

import kvsim
from kvsim.engine import invariants
from kvsim.engine.blocks import IN_DECODE_GROUP, BlockPool
from kvsim.engine.loop import build_engine
from kvsim.engine.plan import BATCH, StepPlan
from kvsim.runs.scenarios import get_scenario


@pytest.mark.parametrize("name", kvsim.list_scenarios())
def test_every_scenario_keeps_every_invariant(name):
    for step_by_step in (False, True):
        checked = kvsim.run_scenario(name, step_by_step=step_by_step, check=True)
        plain = kvsim.run_scenario(name, step_by_step=step_by_step)
        assert checked.summary() == plain.summary()
        assert list(checked.timeline["kv_blocks_used"]) == list(plain.timeline["kv_blocks_used"])


def test_check_is_off_by_default_and_a_bool():
    assert kvsim.ENGINE_DEFAULTS["check"] is False
    with pytest.raises(kvsim.KvsimError, match="check"):
        kvsim.run_scenario("belgavi", check="yes")


class _Stop(Exception):
    pass


def stopped_after(eng, steps: int):
    """Run the engine ``eng`` (built step by step) and stop it after ``steps`` steps: its
    scheduler, mid-run."""
    seen = [0]

    def stop_after(_engine):
        seen[0] += 1
        if seen[0] == steps:
            raise _Stop

    with pytest.raises(_Stop):
        eng.run(after_step=stop_after)
    return eng.scheduler


def _engine_mid_run(steps: int = 40, **overrides):
    """The scheduler of a Belgavi engine (prefix caching on, V1) stopped after ``steps`` steps."""
    kwargs = get_scenario("belgavi", **overrides)
    workload, model, gpu = kwargs.pop("workload"), kwargs.pop("model"), kwargs.pop("gpu")
    sched = stopped_after(build_engine(workload, model, gpu, dict(kwargs, step_by_step=True)), steps)
    assert sched.running, "the planted faults need running requests"
    invariants.check_invariants(sched)        # sound before any fault
    return sched


def test_a_leaked_block_is_caught():
    eng = _engine_mid_run()
    eng.kv.pool.take(1)                        # a block taken that nobody holds
    with pytest.raises(AssertionError, match=r"blocks in use, the running requests hold"):
        invariants.check_invariants(eng)


def test_a_request_queued_twice_is_caught():
    eng = _engine_mid_run()
    eng.waiting.push(next(iter(eng.running)))
    with pytest.raises(AssertionError, match="running and waiting at once"):
        invariants.check_invariants(eng)


def test_the_budget_and_the_batch_size_are_asserted():
    eng = _engine_mid_run()
    eng.last_plan = StepPlan(BATCH, n_group=eng.cfg.max_num_batched_tokens + 1)
    with pytest.raises(AssertionError, match="tokens scheduled in one step"):
        invariants.check_invariants(eng)
    eng.last_plan = StepPlan(BATCH)
    object.__setattr__(eng.cfg, "max_num_seqs", len(eng.running) - 1)
    with pytest.raises(AssertionError, match="requests running, max_num_seqs"):
        invariants.check_invariants(eng)


def test_the_pools_own_counts_are_checked():
    eng = _engine_mid_run()
    eng.kv.pool.cached_free += 1
    with pytest.raises(AssertionError, match="cached_free=.* but the free queue holds"):
        invariants.check_invariants(eng)


def test_token_counts_past_their_limits_are_caught():
    eng = _engine_mid_run()
    rid = next(iter(eng.running))
    eng.requests.computed[rid] = eng.requests.target[rid] + 1
    with pytest.raises(AssertionError, match=f"request {rid} computed"):
        invariants.check_invariants(eng)


def test_a_request_that_finished_short_is_caught():
    eng = _engine_mid_run(steps=400)
    done = [r for r in range(eng.requests.count) if eng.requests.finish[r] == eng.requests.finish[r]]
    assert done
    eng.requests.generated[done[0]] -= 1
    with pytest.raises(AssertionError, match=f"request {done[0]} finished with"):
        invariants.check_finished(eng)


@pytest.mark.pure_engine
def test_a_faulty_pool_fails_a_checked_run(monkeypatch):
    """The check runs inside simulate: an engine bug stops the run at the step it happens."""
    real = BlockPool.take
    calls = {"n": 0}

    def leaky(self, n):
        calls["n"] += 1
        real(self, n + (1 if calls["n"] == 30 else 0))

    monkeypatch.setattr(BlockPool, "take", leaky)
    with pytest.raises(AssertionError, match="kvsim invariant broken after step"):
        kvsim.run_scenario("belgavi", check=True)


def _finished_engine(**overrides):
    """A small run driven to its end with check=False, for planting faults in its books."""
    reqs = [kvsim.Request(0.0, 40, 5), kvsim.Request(0.001, 5000, 5), kvsim.Request(0.3, 30, 4)]
    eng = build_engine(kvsim.Workload.from_requests(reqs), "llama-2-7b", "a40-48gb",
                       dict(gpu_memory_utilization=0.6, **overrides))
    eng.run()
    invariants.check_finished(eng.scheduler)            # sound before any fault
    return eng.scheduler


def test_a_touched_refused_request_is_caught_at_the_end():
    sched = _finished_engine()
    assert sched.requests.rejected[1] == 1
    sched.requests.generated[1] = 3                      # a refused request with tokens
    with pytest.raises(AssertionError, match="refused request 1 was generated tokens"):
        invariants.check_finished(sched)


def test_books_that_do_not_balance_are_caught_at_the_end():
    sched = _finished_engine()
    sched.requests.finish[2] = float("nan")              # a request lost: neither finished,
    with pytest.raises(AssertionError, match=r"3 requests arrived but 1 finished, 1 were "
                                             r"refused and 0 are left"):
        invariants.check_finished(sched)                 # refused nor left in the engine


@pytest.mark.pure_engine
def test_a_last_row_that_shows_a_refused_request_waiting_is_caught(monkeypatch):
    """The old bug's shape: a drained run whose last row still counts a request waiting."""
    sched = _finished_engine()
    real = sched.rec.timeline()
    stuck = dict(real, waiting=real["waiting"].copy())
    stuck["waiting"][-1] = 1
    monkeypatch.setattr(sched.rec, "timeline", lambda: stuck)
    with pytest.raises(AssertionError, match="nothing is left in the engine but the "
                                             "timeline's last row shows"):
        invariants.check_finished(sched)
    ended = dict(real, t_s=real["t_s"] + 0.5)            # a run time past the last step
    monkeypatch.setattr(sched.rec, "timeline", lambda: ended)
    with pytest.raises(AssertionError, match="the timeline ends at .* the run at"):
        invariants.check_finished(sched)


def test_a_stale_count_of_a_decoding_request_is_caught():
    """A decode-group member's own counts read the group's marker (its real count is the
    group's closed form), and a request outside the group never does."""
    eng = _engine_mid_run()
    member = next(iter(eng.decoding.offset))
    assert eng.requests.generated[member] == IN_DECODE_GROUP == eng.kv.held[member]
    assert eng.generated_now(member) > 0 and eng.kv.held_by(member, eng.step) > 0
    eng.requests.generated[member] = 3                 # a count left behind by the group
    with pytest.raises(AssertionError, match=f"request {member} \\(in the decode group\\)"):
        invariants.check_invariants(eng)
    eng.requests.generated[member] = IN_DECODE_GROUP
    invariants.check_invariants(eng)
    eng.decoding.remove(member, eng.step)              # out of the group, its counts not written back
    with pytest.raises(AssertionError, match=f"request {member} \\(out of the decode group\\)"):
        invariants.check_invariants(eng)
