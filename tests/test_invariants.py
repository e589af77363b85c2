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
from kvsim.engine.blocks import BlockPool
from kvsim.engine.loop import build_engine
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


def _engine_mid_run(steps: int = 40, **overrides):
    """The scheduler of a Belgavi engine (prefix caching on, V1) stopped after ``steps`` steps."""
    kwargs = get_scenario("belgavi", **overrides)
    workload, model, gpu = kwargs.pop("workload"), kwargs.pop("model"), kwargs.pop("gpu")
    eng = build_engine(workload, model, gpu, dict(kwargs, step_by_step=True))
    seen = [0]

    def stop_after(_engine):
        seen[0] += 1
        if seen[0] == steps:
            raise _Stop

    with pytest.raises(_Stop):
        eng.run(after_step=stop_after)
    sched = eng.scheduler
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
    eng.step_tokens = eng.cfg.max_num_batched_tokens + 1
    with pytest.raises(AssertionError, match="tokens scheduled in one step"):
        invariants.check_invariants(eng)
    eng.step_tokens = 0
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
