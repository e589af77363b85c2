"""A finished run lets go of its state: nothing of it waits for the cyclic garbage collector.

The scheduler asks its admission policy and the policy reads the scheduler, so the two
refer to each other; the run's end breaks that (``Scheduler.end_run``). Before, a finished
run's whole state (the request table, the block manager, the decode group: about 90 MB
after 10^5 requests) stayed allocated until the collector's next full pass, which in a loop
of 30 runs of 10^4 requests came once: the process grew by 15 MB a run, to 442 MB. Runs on
whichever engine path the process has (the compiled one in CI; ``make unit`` also runs the
pure one).
"""
from __future__ import annotations

import gc

import pytest

import kvsim
from kvsim import Geometric, Workload
from kvsim.engine.loop import build_engine
from kvsim.engine.options import ADMISSION_NAMES

DAY = Workload.poisson(5.0, 40, prompt=1000, output=Geometric(200), seed=1)


def _cyclic_garbage(make) -> list[str]:
    """The types of what ``make()``'s result leaves to the cyclic collector once dropped
    (the collector is off while it runs, so that nothing is collected on the way). A first
    call goes before, unwatched: it may import what the run needs, and a module is a cycle."""
    make()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = make()
        del result
        gc.collect()
        return sorted({type(obj).__name__ for obj in gc.garbage})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


@pytest.mark.parametrize("options", [
    *({"admission": name} for name in ADMISSION_NAMES),
    {"engine": "v0", "preemption_mode": "swap"},
    {"kv_offloading_size": 4},
    {"scheduling_policy": "priority"},
], ids=lambda options: ",".join(f"{k}={v}" for k, v in options.items()))
def test_a_finished_run_leaves_nothing_to_the_cyclic_collector(options):
    def run():
        return kvsim.simulate(DAY, model="llama-3.1-8b", gpu="h100-80gb",
                              gpu_memory_utilization=0.5, **options)

    assert _cyclic_garbage(run) == []


def _alive(cls: type) -> int:
    """How many ``cls`` objects the collector tracks now (mypyc's classes take no weak
    references, so they are counted)."""
    return sum(type(obj) is cls for obj in gc.get_objects())


def test_the_scheduler_is_freed_with_the_last_reference_to_its_engine():
    build_engine(DAY, "llama-3.1-8b", "h100-80gb", {}).run()      # its imports, unwatched
    gc.collect()
    engine = build_engine(DAY, "llama-3.1-8b", "h100-80gb", {})
    scheduler_cls, policy_cls = type(engine.scheduler), type(engine.scheduler.policy)
    before = _alive(scheduler_cls), _alive(policy_cls)
    gc.disable()
    try:
        result = engine.run()
        del engine
        assert (_alive(scheduler_cls), _alive(policy_cls)) == (before[0] - 1, before[1] - 1)
    finally:
        gc.enable()
    assert result.requests.num_rows == len(DAY)             # the result keeps what it needs


def test_an_ended_engine_run_again_returns_the_same_result():
    engine = build_engine(DAY, "llama-3.1-8b", "h100-80gb", {})
    first = engine.run()
    again = engine.run()                                   # nothing left to do: the same end
    assert again.summary() == first.summary()
    assert again.requests.to_dict() == first.requests.to_dict()
