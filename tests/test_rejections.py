"""A run survives requests that can never run, as a vLLM server does.

A vLLM server answers a prompt of ``max_model_len`` tokens or more with HTTP
400 and serves everyone else; kvsim's scheduler (``unfit_requests="reject"``,
the default) refuses each such request when it arrives, records why
(``requests["rejected"]``, :data:`kvsim.engine.fit.REJECTION_REASONS`) and
counts it in ``summary()["requests_rejected"]``. A refused request never
touches the engine, so the others run exactly as if it had never been sent.
``unfit_requests="error"`` keeps the one-line error instead.
"""
from __future__ import annotations

import numpy as np
import pytest

import kvsim
from kvsim.engine.fit import REJECTION_REASONS
from kvsim.observe.series import scrape

R = kvsim.Request
MODEL, GPU = "llama-2-7b", "a40-48gb"          # max_model_len 4,096
SAME_COLUMNS = ("t_s", "dt_s", "kv_blocks_used", "running", "preemptions", "prefill_tokens",
                "emitted_tokens")


def run(requests, **opts):
    return kvsim.simulate(requests, model=MODEL, gpu=GPU, gpu_memory_utilization=0.6, **opts)


def mixed_requests(n=60, every=7):
    """``n`` requests 0.2 s apart; every ``every``-th has a 5,000-token prompt (too long)."""
    return [R(0.2 * i, 5000 if i % every == 3 else 400 + 37 * (i % 5), 120) for i in range(n)]


def test_a_too_long_prompt_is_refused_and_the_rest_is_served():
    reqs = mixed_requests()
    r = run(reqs)
    long = np.array([q.prompt_tokens >= 4096 for q in reqs])
    rq = r.requests
    assert rq.num_rows == len(reqs)                       # a row for every request sent
    assert (rq["rejected"][long] == 1).all() and not rq["rejected"][~long].any()
    assert REJECTION_REASONS[1].startswith("prompt of max_model_len")
    s = r.summary()
    assert s["requests_rejected"] == int(long.sum()) == 9
    assert s["requests_arrived"] == len(reqs)
    assert s["requests_finished"] == len(reqs) - 9         # every other request finished
    assert np.isnan(rq["first_token_s"][long]).all() and np.isnan(rq["finish_s"][long]).all()


def test_the_others_run_exactly_as_without_the_refused_ones():
    reqs = mixed_requests()
    with_bad = run(reqs)
    without = run([q for q in reqs if q.prompt_tokens < 4096])
    for col in SAME_COLUMNS:
        assert np.array_equal(with_bad.timeline[col], without.timeline[col]), col
    served = with_bad.requests["rejected"] == 0
    for col in ("first_token_s", "finish_s", "preemptions", "generated_tokens"):
        assert np.array_equal(with_bad.requests[col][served], without.requests[col],
                              equal_nan=True), col
    sa, sb = with_bad.summary(), without.summary()
    for key in ("ttft_p95_s", "itl_p99_s", "preemptions_per_1k", "goodput_tok_s"):
        assert sa[key] == sb[key], key                     # latencies over the served only


def test_unfit_requests_error_stops_at_the_first_one():
    with pytest.raises(kvsim.KvsimError, match=r"^request 3 has a prompt of 5,000 tokens: "
                                               r"expected fewer than max_model_len=4,096"):
        run(mixed_requests(), unfit_requests="error")


def test_every_request_refused_is_a_run_that_serves_nothing():
    r = run([R(0.0, 5000, 10), R(1.0, 4096, 10)])
    s = r.summary()
    assert (s["requests_rejected"], s["requests_finished"]) == (2, 0)
    assert r.timeline.num_rows == 0 and s["ttft_p95_s"] == 0.0


def test_a_refused_request_is_not_in_the_servers_request_metrics():
    """vLLM refuses it at the API server (HTTP 400): no engine counter or histogram sees it."""
    reqs = mixed_requests()
    r, clean = run(reqs), run([q for q in reqs if q.prompt_tokens < 4096])
    a = scrape(r, interval_s=5.0, until_s=60.0)
    b = scrape(clean, interval_s=5.0, until_s=60.0)
    for series in ("vllm:prompt_tokens_total", 'vllm:request_success_total{finished_reason="stop"}',
                   "vllm:e2e_request_latency_seconds_count", "vllm:num_requests_waiting"):
        assert np.array_equal(a[series], b[series]), series


def test_a_closed_loop_user_who_is_refused_sends_the_next_request():
    """Prompts of 10-200 tokens on a 6-block pool (96 tokens): the longer ones are refused,
    and each refused user sends again after its think time."""
    wl = kvsim.Workload.closed_loop(users=2, duration_s=5.0, prompt=kvsim.Uniform(10, 200),
                                    output=20, think_s=0.1, seed=3)
    r = kvsim.simulate(wl, model=MODEL, gpu=GPU, num_gpu_blocks=6, engine="v0",
                       enable_prefix_caching=False, watermark=0.0)
    rq = r.requests
    refused = rq["rejected"] == 2
    assert refused.any() and (~refused).any()
    assert not np.isnan(rq["finish_s"][~refused]).any() or r.simulated_s >= 5.0
    # a refused request's user is not stuck: it sends again think_s (0.1 s) after the refusal
    arrivals = rq["arrival_s"]
    for t in arrivals[refused]:
        if t + 0.1 < 5.0:
            assert np.isclose(arrivals, t + 0.1, rtol=0, atol=1e-9).any(), t
    assert r.summary()["requests_rejected"] == int(refused.sum())


def test_the_shared_conversation_trace_on_a_4k_model(shared_data):
    """The Azure conversation trace has prompts longer than a 4k model's context: they are
    refused one by one and the hour's other requests are served."""
    trace = kvsim.Workload.from_trace(shared_data / "AzureLLMInferenceTrace_conv.csv")
    r = kvsim.simulate(trace, model=MODEL, gpu="a100-80gb", until_s=300.0)
    rq = r.requests
    too_long = rq["prompt_tokens"] >= 4096
    assert too_long.any()
    assert np.array_equal(rq["rejected"] == 1, too_long)
    assert r.summary()["requests_rejected"] == int(too_long.sum())
    assert r.summary()["requests_finished"] > 0


# ------------------------------------------------------------- absurd inputs, one line each

def test_an_arrival_time_past_the_simulated_limit_is_one_line():
    for make in (lambda: kvsim.Workload.from_requests([R(0.0, 10, 10), R(1e15, 10, 10)]),
                 lambda: kvsim.Workload.from_arrays([0.0, 1e300], [10, 10], [10, 10])):
        with pytest.raises(kvsim.KvsimError) as e:
            run(make())
        msg = str(e.value)
        assert "\n" not in msg and "arrival_s" in msg and "out of range" in msg, msg
        assert "10000000]" in msg or "10,000,000]" in msg, msg
    assert run(kvsim.Workload.from_requests([R(0.0, 10, 10), R(9e6, 10, 10)])).summary()[
        "requests_finished"] == 2                            # 104 days is still accepted


def test_a_closed_loop_without_end_needs_until_s():
    wl = kvsim.Workload.closed_loop(users=2, duration_s=1e9, prompt=100, output=10)
    with pytest.raises(kvsim.KvsimError, match=r"^duration_s=1e\+09 is out of range: .*until_s"):
        run(wl)
    assert run(wl, until_s=2.0).simulated_s < 2.5


def test_a_config_with_absurdly_many_layers_is_one_line():
    cfg = dict(model_type="llama", num_hidden_layers=10**15, hidden_size=4096,
               num_attention_heads=32, vocab_size=32000, intermediate_size=11008)
    with pytest.raises(kvsim.KvsimError,
                       match=r"^num_hidden_layers=1000000000000000 is out of range: "
                             r"expected an integer \[1, 4096\] \(beyond any real checkpoint\)$"):
        kvsim.ModelSpec.from_hf_config(cfg)


# ------------------------------------------------------------- issue 30: every run ends, books

def test_a_closed_loop_whose_every_request_is_refused_stops_after_max_errors():
    """The issue's load test: 40 users for 600 s with 500-token prompts on a 2-block pool.
    Every request is refused and each user sent the next one a round trip later: about 24
    million requests. The load test now stops after max_errors (1,000) refusals, as
    GuideLLM's max_errors constraint does, and says so (the count is asserted, not the
    time: it ends in a fraction of a second)."""
    wl = kvsim.Workload.closed_loop(40, 600, prompt=500, output=5)
    r = kvsim.simulate(wl, model="llama-2-7b", gpu="a100-80gb", num_gpu_blocks=2, check=True)
    rq = r.requests
    assert rq.num_rows == 1000 and (rq["rejected"] == 2).all()
    assert r.counters["load_stopped_s"] == pytest.approx(0.024)    # 25 rounds of 40, 1 ms apart
    assert r.counters["load_stop_reason"] == ("1,000 of its requests were refused "
                                               "(max_errors=1,000)")
    s = r.summary()
    assert (s["requests_arrived"], s["requests_rejected"], s["requests_finished"]) == (1000,
                                                                                      1000, 0)
    assert r.timeline.num_rows == 0 and s["simulated_s"] == 0.0     # no step ever ran


def test_max_errors_is_the_load_tests_and_a_served_load_test_never_stops():
    refused = kvsim.Workload.closed_loop(3, 5.0, prompt=kvsim.Uniform(10, 200), output=20,
                                         think_s=0.05, seed=3, max_errors=4)
    r = kvsim.simulate(refused, model=MODEL, gpu=GPU, num_gpu_blocks=6, engine="v0",
                       enable_prefix_caching=False, watermark=0.0, check=True)
    rq = r.requests
    n_refused = int((rq["rejected"] > 0).sum())
    assert 4 <= n_refused < 4 + 3 and r.counters["load_stopped_s"] is not None
    assert (rq["arrival_s"] <= r.counters["load_stopped_s"]).all()   # nothing sent after
    assert not np.isnan(rq["finish_s"][rq["rejected"] == 0]).any()   # the rest was served
    served = kvsim.run_scenario("load-test-40")
    assert served.counters["load_stopped_s"] is None and served.counters["load_stop_reason"] \
        is None


def test_the_cli_says_when_a_load_test_stopped(capsys):
    from kvsim.cli import main
    assert main(["simulate", "--scenario", "load-test-40", "--set", "num_gpu_blocks=2"]) == 0
    out, err = capsys.readouterr()
    assert "# note: the load test stopped sending at t = " in out and "max_errors=1,000" in out
    assert main(["simulate", "--scenario", "load-test-40", "--set", "num_gpu_blocks=2",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("kvsim: note: the load test stopped sending") and '"requests_' in out


def _drained_then_refused():
    """One request served, then one refused during the last step, then one refused after the
    run drained (0.5 s): the issue's two books cases."""
    last = kvsim.simulate([R(0.0, 100, 5)], model=MODEL, gpu="a100-80gb").timeline["t_s"][-1]
    return kvsim.simulate([R(0.0, 100, 5), R(last - 0.001, 5000, 5), R(0.5, 5000, 5)],
                          model=MODEL, gpu="a100-80gb", check=True)


def test_a_refused_request_never_counts_as_waiting_and_the_run_ends_at_its_last_step():
    r = _drained_then_refused()
    tl, s = r.timeline, r.summary()
    assert r.requests["rejected"].tolist() == [0, 1, 1]
    assert not tl["waiting"].any()                          # never counted as waiting
    assert s["simulated_s"] == float(tl["t_s"][-1]) < 0.5   # not the refusal at 0.5 s
    assert (s["requests_arrived"], s["requests_finished"], s["requests_rejected"]) == (3, 1, 2)
    waiting = scrape(r, interval_s=0.5, until_s=5.0)["vllm:num_requests_waiting"]
    assert not waiting.any()                                # the gauge does not stick at 1


@pytest.mark.pure_engine
def test_the_invariant_checker_catches_a_refused_request_in_a_queue(monkeypatch):
    """check=True asserts the books at the end: a refused request left in the waiting queue
    (the old waiting-count bug's shape) fails the run."""
    from kvsim.engine.scheduler import Scheduler

    original = Scheduler.pull_arrivals

    def leaky(self, t):
        before = self.requests.count
        original(self, t)
        for rid in range(before, self.requests.count):
            if self.requests.rejected[rid] and rid not in self.waiting:
                self.waiting.push(rid)                       # the planted fault

    monkeypatch.setattr(Scheduler, "pull_arrivals", leaky)
    with pytest.raises(AssertionError, match="refused requests .* in the engine's queues|"
                                             "refused request .* was queued"):
        _drained_then_refused()
