"""kvsim.plan: the highest sustainable rate under an SLO, searched, costed, cached, on any executor."""
from __future__ import annotations

import math
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.runs import planner, summary_cache
from kvsim.runs.planner import ConfigPlan, Plan, _run_planned, misses
from kvsim.runs.planner_costs import gpu_hours_per_million, pareto_front, replicas_for
from kvsim.runs.planner_traffic import GeneratedTraffic, ReplayedTraffic
from kvsim.traffic.lengths import Fixed, Geometric

#: The runs here are made unless a test sets its own cache: these tests count runs.
pytestmark = pytest.mark.usefixtures("no_run_cache")

BASE = {"model": "llama-2-7b", "gpu": "a40-48gb"}
GRID = {"gpu_memory_utilization": [0.5, 0.9]}
SLO = {"ttft_p99_s": 2.0, "preemptions_per_1k": 20}
SHORT = dict(output=Geometric(250), seeds=[0, 1], duration_s=60.0, warmup_s=15.0, rel_tol=0.1)


def _plan(base=BASE, grid=GRID, **changes) -> Plan:
    kwargs = dict(SHORT, slo=SLO)
    kwargs.update(changes)
    return kvsim.plan(base, grid, **kwargs)


def _identical(a, b) -> bool:
    return a.columns == b.columns and all(
        a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes() for k in a.columns)


@pytest.fixture(scope="module")
def serial():
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("KVSIM_RUN_CACHE", raising=False)
        return _plan()


def test_the_search_brackets_the_threshold_a_dense_scan_finds(serial):
    traffic = GeneratedTraffic(Fixed(850), Geometric(250))
    for config in serial.configs:
        assert config.rate_per_s == min(config.seed_rates) > 0
        for seed, low, high in zip(SHORT["seeds"], config.seed_rates, config.seed_failing_rates, strict=True):
            assert high - low <= SHORT["rel_tol"] * low
            # the dense scan, same seed and settings: rates in steps of 0.05 up to the first miss
            last_pass = first_fail = None
            for rate in np.round(np.arange(0.05, 8.0, 0.05), 10).tolist():
                summary = _run_planned((config.settings, traffic, rate, seed, 60.0, 15.0))
                if misses(summary, SLO):
                    first_fail = rate
                    break
                last_pass = rate
            assert last_pass is not None and first_fail is not None
            # the true threshold lies in (last_pass, first_fail] and in (low, high]
            assert last_pass < high and low < first_fail, (config.point, seed, low, high,
                                                           last_pass, first_fail)


def test_the_answer_holds_on_every_seed_and_the_spread_is_reported(serial):
    for config in serial.configs:
        lo, mid, hi = config.spread
        assert lo == config.rate_per_s <= mid <= hi
        assert config.failing_seeds == ()
        assert config.at_rate["ttft_p99_s"] <= SLO["ttft_p99_s"]
        assert config.at_rate["preemptions_per_1k"] <= SLO["preemptions_per_1k"]
        assert config.infeasible is None and config.limited_by in SLO
    # more memory holds more traffic
    assert serial.configs[1].rate_per_s > serial.configs[0].rate_per_s
    assert serial.runs == sum(c.runs for c in serial.configs) == serial.runs_made


def test_a_rerun_reads_every_run_back_and_a_changed_setting_or_engine_runs_again(tmp_path,
                                                                               monkeypatch):
    monkeypatch.setenv("KVSIM_RUN_CACHE", str(tmp_path))
    first = _plan()
    assert first.runs_made == first.runs > 0
    again = _plan()
    assert again.runs_made == 0 and again.runs == first.runs
    assert _identical(again.table(), first.table())
    changed = _plan(base={**BASE, "max_num_seqs": 16})
    assert changed.runs_made == changed.runs
    longer = _plan(duration_s=61.0)
    assert longer.runs_made == longer.runs
    monkeypatch.setattr(summary_cache, "fingerprint", lambda package=None: "f" * 64)
    new_engine = _plan()
    assert new_engine.runs_made == new_engine.runs
    assert _identical(new_engine.table(), first.table())
    assert _plan(cache=False).runs_made == first.runs


def test_a_process_pool_gives_the_same_plan(serial):
    with ProcessPoolExecutor(2) as pool:
        pooled = _plan(executor=pool)
        batched = _plan(executor=pool, chunk_size=2)
    assert _identical(pooled.table(), serial.table()) and pooled.runs == serial.runs
    assert _identical(batched.table(), serial.table())


def test_a_dask_cluster_gives_the_same_plan(serial):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        clustered = _plan(executor=client.get_executor())
    assert _identical(clustered.table(), serial.table()) and clustered.runs == serial.runs


def test_progress_shows_each_round_on_stderr(capsys):
    _plan(grid={"gpu_memory_utilization": [0.9]}, progress=True)
    err = capsys.readouterr().err
    assert "(plan round 1)" in err and "(plan round 2)" in err and "2/2 runs" in err
    _plan(grid={"gpu_memory_utilization": [0.9]}, progress=False)
    assert capsys.readouterr().err == ""


def test_infeasible_configurations_say_why():
    common = dict(seeds=[0], duration_s=60.0, warmup_s=15.0)
    pool = kvsim.plan(BASE, {"num_gpu_blocks": [150]}, slo={"preemptions_per_1k": 0},
                      prompt=850, output=1000, start_rate_per_s=0.2, min_rate_per_s=0.2, **common)
    (tiny,) = pool.configs
    assert (tiny.rate_per_s, tiny.infeasible) == (0.0, "preemption")
    assert tiny.reason.startswith("preemption: at the lowest rate searched, 0.2 req/s")
    slow = kvsim.plan(BASE, None, slo={"ttft_p99_s": 0.01}, **common)
    (config,) = slow.configs
    assert (config.rate_per_s, config.infeasible) == (0.0, "queueing")
    assert "ttft_p99_s" in config.reason and "with no preemption" in config.reason
    assert config.runs == 6               # 1, 0.5, 0.25, 0.125, 0.0625, then the floor 0.05
    assert slow.rounds == 6               # one rate a round, and nothing to confirm
    huge = kvsim.plan(BASE, None, slo={"ttft_p99_s": 5.0}, prompt=5000, **common)
    (config,) = huge.configs
    assert (config.rate_per_s, config.infeasible, config.runs) == (0.0, "capacity", 1)
    assert config.reason.startswith("capacity:") and "can never run" in config.reason
    for plan in (pool, slow, huge):
        assert plan.cheapest(1.0) is None and plan.pareto() == []
        assert "\n" not in plan.configs[0].reason


def _engine_with_thresholds(thresholds: dict, bad_band: tuple[float, float] = (0.0, 0.0)):
    """A stand-in for a run: seed s holds a p99 TTFT of 1 s exactly up to ``thresholds[s]``
    req/s (TTFT = rate / threshold), and seed 1 also fails inside ``bad_band``."""
    def run(task):
        _, _, rate, seed, _, _ = task
        ttft = rate / thresholds[seed]
        if seed == 1 and bad_band[0] <= rate <= bad_band[1]:
            ttft = 10.0
        return {"requests_rejected": 0, "ttft_p99_s": ttft, "preemptions_per_1k": 0.0,
                "goodput_fraction": 1.0}
    return run


def test_the_search_arithmetic_on_known_thresholds(monkeypatch):
    monkeypatch.setattr(planner, "_run_planned", _engine_with_thresholds({0: 2.7, 1: 4.1}))
    plan = kvsim.plan(BASE, None, slo={"ttft_p99_s": 1.0}, seeds=[0, 1], rel_tol=0.01)
    (config,) = plan.configs
    for threshold, low, high in zip((2.7, 4.1), config.seed_rates, config.seed_failing_rates, strict=True):
        assert low <= threshold < high and high - low <= 0.01 * low
    # seed 0: 1, 2 pass, 4 fails; bisections 3, 2.5, 2.75, 2.625, 2.6875, 2.71875, 2.703125
    assert config.seed_rates[0] == 2.6875 and config.seed_failing_rates[0] == 2.703125
    assert config.rate_per_s == 2.6875 and config.limited_by == "ttft_p99_s"
    assert config.failing_seeds == () and "on every seed" in config.reason
    # seed 1: 1, 2, 4 pass, 8 fails; 6, 5, 4.5, 4.25, 4.125, 4.0625, 4.09375; then it is run
    # at the configuration's 2.6875 to confirm
    assert config.seed_rates[1] == 4.09375 and config.seed_failing_rates[1] == 4.125
    assert plan.runs == config.runs == 10 + 11 + 1


def test_a_seed_that_fails_below_its_own_threshold_is_named(monkeypatch):
    engine = _engine_with_thresholds({0: 2.7, 1: 4.1}, bad_band=(2.6, 2.7))
    monkeypatch.setattr(planner, "_run_planned", engine)
    (config,) = kvsim.plan(BASE, None, slo={"ttft_p99_s": 1.0}, seeds=[0, 1],
                           rel_tol=0.01).configs
    assert config.seed_rates[1] > 4.0 and config.rate_per_s == 2.6875
    assert config.failing_seeds == (1,) and "seed(s) 1 fail at it" in config.reason


def test_a_rate_above_the_search_range_is_a_lower_bound():
    plan = kvsim.plan(BASE, None, slo={"ttft_p99_s": 100.0}, seeds=[0], duration_s=30.0,
                      warmup_s=5.0, start_rate_per_s=0.5, max_rate_per_s=1.0)
    (config,) = plan.configs
    assert config.capped and config.rate_per_s == 1.0 and config.failing_rate_per_s is None
    assert math.isnan(plan.table()["failing_rate_per_s"][0]) and "lower bound" in config.reason


def test_a_trace_is_rescaled_to_the_rate_and_repeated():
    trace = kvsim.Workload.from_arrays([0.0, 1.0, 2.0, 3.0], [100, 200, 300, 400], [10, 20, 30, 40],
                                       duration_s=4.0)
    replay = ReplayedTraffic.from_workload(trace)
    assert replay.trace_rate_per_s == 1.0
    w = replay.at(2.0, 0, 4.0)
    assert w.arrival_s.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    assert w.prompt_tokens.tolist() == [100, 200, 300, 400] * 2
    later = replay.at(2.0, 1, 3.0)                     # seed 1 starts one span (3 s) in
    assert later.arrival_s.tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert later.prompt_tokens.tolist() == [300, 400, 100, 200, 300, 400]
    assert len(replay.at(0.5, 0, 8.0)) == 4
    assert replay.digest() != ReplayedTraffic.from_workload(trace.capped(15)).digest()


def test_a_plan_over_a_trace(tmp_path):
    source = kvsim.Workload.poisson(1.0, 300.0, prompt=850, output=Geometric(250), seed=7)
    path = tmp_path / "trace.csv"
    source.to_csv(path)
    by_path = kvsim.plan(BASE, None, slo=SLO, trace=path, seeds=[0, 1], duration_s=60.0,
                         warmup_s=15.0, rel_tol=0.1)
    by_workload = kvsim.plan(BASE, None, slo=SLO, trace=kvsim.Workload.from_trace(path),
                             seeds=[0, 1], duration_s=60.0, warmup_s=15.0, rel_tol=0.1)
    assert _identical(by_path.table(), by_workload.table())
    assert by_path.configs[0].rate_per_s > 0


def test_goodput_fraction_is_delivered_over_offered_answer_tokens():
    summary = _run_planned((BASE, GeneratedTraffic(Fixed(850), Fixed(250)), 0.5, 0, 600.0, 20.0))
    fraction = summary["goodput_fraction"]
    assert 0.98 < fraction <= 1.0                       # a light load delivers what it is sent
    window = summary["simulated_s"] - 20.0
    assert fraction == pytest.approx(summary["goodput_tok_s"] / summary["offered_output_tok_s"],
                                     rel=1e-12)
    assert summary["offered_output_tok_s"] * window == pytest.approx(
        250 * (summary["requests_arrived"]))
    assert misses(summary, {"goodput_fraction": fraction}) == []          # a lower limit
    assert misses(summary, {"goodput_fraction": min(1.0, fraction + 1e-6)}) == ["goodput_fraction"]


# ------------------------------------------------ costs, the cheapest configuration, the Pareto set

def test_gpu_hours_and_replicas_arithmetic():
    assert gpu_hours_per_million(10.0, 1) == pytest.approx(1e6 / 36000)
    assert gpu_hours_per_million(5.0, 2) == pytest.approx(4 * 1e6 / 36000)
    assert gpu_hours_per_million(0.0, 1) == math.inf
    r = replicas_for(25.0, 10.0, 2, 3.0, index=4)
    assert (r.index, r.replicas, r.gpus, r.dollars_per_hour) == (4, 3, 6, 18.0)
    assert r.dollars_per_million == pytest.approx(18.0 * 1e6 / (3600 * 25.0))
    assert replicas_for(20.0, 10.0, 1, None, 0).replicas == 2         # an exact multiple
    assert replicas_for(20.0, 10.0, 1, None, 0).dollars_per_hour is None


def test_the_pareto_front_keeps_only_undominated_points():
    points = [(0, 1.0, 10.0), (1, 2.0, 10.0), (2, 2.0, 12.0), (3, 3.0, 30.0), (4, 0.5, 5.0)]
    assert pareto_front(points) == [4, 1, 3]
    assert pareto_front([(0, 1.0, 1.0), (1, 1.0, 1.0)]) == [0, 1]     # ties dominate neither


def _config(gpu: str, rate: float, ttft: float, gpus: int = 1) -> ConfigPlan:
    return ConfigPlan(point={"gpu": gpu}, settings={"gpu": gpu}, rate_per_s=rate,
                      failing_rate_per_s=rate * 1.05, seed_rates=(rate,),
                      seed_failing_rates=(rate * 1.05,), capped=False,
                      limited_by="ttft_p99_s", infeasible=None if rate else "queueing",
                      reason="", runs=1, gpu=gpu, gpus_per_replica=gpus,
                      at_rate={"ttft_p99_s": ttft} if rate else {})


def test_cheapest_and_pareto_on_a_known_plan():
    configs = (_config("a", 4.0, 1.0), _config("b", 10.0, 0.5), _config("a", 6.0, 1.5, gpus=2),
               _config("b", 0.0, 0.0))
    plan = Plan(configs, {"ttft_p99_s": 2.0}, (0,), 0.05, 4, 4, 3, {"a": 1.0, "b": 3.0})
    assert plan.dollars_per_million(0) == pytest.approx(1.0 * 1e6 / (3600 * 4.0))
    assert plan.dollars_per_million(1) == pytest.approx(3.0 * 1e6 / (3600 * 10.0))
    # 20 req/s: a needs 5 replicas ($5/h), b 2 ($6/h), a x2 GPUs 4 replicas ($8/h)
    best = plan.cheapest(20.0)
    assert (best.index, best.replicas, best.dollars_per_hour) == (0, 5, 5.0)
    # 9 req/s: a 3 replicas ($3/h), b 1 ($3/h): a tie goes to the first listed
    assert plan.cheapest(9.0).index == 0
    assert plan.cheapest(10.0).dollars_per_hour == 3.0
    assert [r.index for r in plan.replicas(20.0)] == [0, 1, 2]
    # dollars per million: a 69.4, b 83.3, a x2 92.6 -> a beats a x2 on both; b has the rate
    assert plan.pareto() == [0, 1]
    assert plan.pareto("ttft") == [1]
    unpriced = Plan(configs, {"ttft_p99_s": 2.0}, (0,), 0.05, 4, 4, 3, None)
    assert unpriced.dollars_per_million(0) is None
    assert unpriced.cheapest(20.0).index == 1        # GPU-hours: a 5, b 2, a x2 8
    table = plan.table()
    assert table["dollars_per_million"][1] == pytest.approx(3.0 * 1e6 / (3600 * 10.0))
    assert table["infeasible"].tolist() == ["", "", "", "queueing"]


def test_a_plan_as_text():
    from kvsim.runs.planner_report import format_plan
    configs = (_config("a", 4.0, 1.0), _config("b", 10.0, 0.5), _config("b", 0.0, 0.0))
    plan = Plan(configs, {"ttft_p99_s": 2.0}, (0, 1), 0.05, 9, 4, 3, {"a": 1.0, "b": 3.0})
    lines = format_plan(plan, 20.0).splitlines()
    assert lines[0].split() == ["#", "gpu", "rate_per_s", "seeds_min-max", "limited_by", "runs",
                                "ttft_p99_s", "$_per_million"]
    assert lines[1].split() == ["0", "a", "4", "4-4", "ttft_p99_s", "1", "1", "69.4"]
    assert lines[3].split() == ["2", "b", "0", "0-0", "QUEUEING", "1", "-", "-"]
    assert "SLO: ttft_p99_s <= 2; on every one of seeds 0, 1; rates within 5%" in lines[5]
    assert "Pareto set (rate against dollars per million requests): #0, #1" in lines
    assert ("For 20 req/s: #0 x 5 replica(s), 5 GPU(s), $5.00 an hour, $69.44 per million "
            "requests") in lines
    assert lines[-1] == "Search: 9 runs (4 made, 5 read back from the run cache) in 3 rounds"
    with pytest.raises(KvsimError, match=r"target_rate_per_s=-1 is out of range"):
        format_plan(plan, -1)


def test_prices_on_a_real_plan(serial):
    priced = Plan(serial.configs, serial.slo, serial.seeds, serial.rel_tol, serial.runs,
                  serial.runs_made, serial.rounds, {"a40-48gb": 0.8})
    more_memory = priced.configs[1]
    assert priced.dollars_per_million(1) == pytest.approx(0.8 * 1e6 / (3600 * more_memory.rate_per_s))
    assert priced.pareto() == [1]                    # the same GPU, more rate: cheaper per request


# ------------------------------------------------ bad inputs: one line naming value and range

@pytest.mark.parametrize("changes, words", [
    (dict(slo={"nope": 1}), ["slo key 'nope'", "ttft_p99_s"]),
    (dict(slo={}), ["slo={}", "non-empty"]),
    (dict(slo={"ttft_p99_s": -1}), ["slo['ttft_p99_s']=-1", ">= 0"]),
    (dict(slo={"goodput_fraction": 1.5}), ["slo['goodput_fraction']=1.5", "(0, 1]"]),
    (dict(seeds=[]), ["plan: seeds is empty"]),
    (dict(seeds=[1, 1]), ["plan: seeds [1, 1] repeat a seed"]),
    (dict(seeds=None), ["plan: seeds = None", "1 to 1,000 seeds"]),
    (dict(rel_tol=0), ["rel_tol=0", "[0.0001, 1.0]"]),
    (dict(start_rate_per_s=500.0), ["start_rate_per_s=500", "[0.05, 200]"]),
    (dict(min_rate_per_s=0), ["min_rate_per_s=0", "[1e-06, 1000000.0]"]),
    (dict(duration_s=0), ["duration_s=0", "(0, 10000000]"]),
    (dict(prices={"h100-80gb": 2.0}), ["no price for GPU 'a40-48gb'", "a40-48gb"]),
    (dict(prices={"a40-48gb": -1}), ["prices['a40-48gb']=-1", "(0, 1000000.0]"]),
    (dict(prices=[1.0]), ["prices=[1.0]", "mapping"]),
    (dict(base={**BASE, "seed": 3}), ["'seed' is set by the planner"]),
    (dict(base={"gpu": "a40-48gb"}), ["no 'model'"]),
    (dict(base=[1]), ["base = [1]", "mapping"]),
    (dict(grid={"gpu_memory_utilization": [0.5, 1.5]}), ["gpu_memory_utilization=1.5", "(0, 1]"]),
    (dict(grid={"nope": [1]}), ["'nope'", "not known"]),
    (dict(trace=kvsim.Workload.closed_loop(2, 10.0)), ["not an open-loop workload"]),
    (dict(output=0), ["output=0", "[1, "]),
    (dict(cache="yes"), ["cache = 'yes'", "None, True or False"]),
])
def test_bad_inputs_are_one_line_errors(changes, words):
    with pytest.raises(KvsimError) as info:
        _plan(**changes)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)


def test_bad_questions_to_a_plan_are_one_line_errors(serial):
    for call, words in ((lambda: serial.cheapest(0), ["target_rate_per_s=0", "(0, 1000000.0]"]),
                        (lambda: serial.pareto("latency"), ["against='latency'", "'cost'"])):
        with pytest.raises(KvsimError) as info:
            call()
        assert all(w in str(info.value) for w in words), str(info.value)


def test_plan_is_public():
    assert kvsim.plan is planner.plan and kvsim.Plan is Plan


# ------------------------------------------------ kvsim plan

CLI = ["plan", "--model", "llama-2-7b", "--grid", "gpu=a40-48gb,h100-80gb", "--slo", "ttft_p99_s=2",
       "--slo", "preemptions_per_1k=20", "--seeds", "0-1", "--duration", "30", "--warmup", "5",
       "--rel-tol", "0.1"]


def test_the_cli_prints_the_plan_and_the_cheapest_for_a_target(capsys):
    from kvsim.cli import main
    assert main([*CLI, "--price", "a40-48gb=0.8", "--price", "h100-80gb=2.5", "--target",
                 "20"]) == 0
    out, err = capsys.readouterr()
    assert err == ""                                  # no progress line: not a terminal
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["#", "gpu", "rate_per_s"]
    assert [line.split()[1] for line in lines[1:3]] == ["a40-48gb", "h100-80gb"]
    assert any(line.startswith("For 20 req/s: #") and "per million requests" in line
               for line in lines)
    assert lines[-1].startswith("Search: ")
    direct = kvsim.plan({"model": "llama-2-7b"}, {"gpu": ["a40-48gb", "h100-80gb"]},
                        slo={"ttft_p99_s": 2, "preemptions_per_1k": 20}, seeds=[0, 1],
                        duration_s=30.0, warmup_s=5.0, rel_tol=0.1,
                        output=kvsim.Geometric(250))
    assert [float(line.split()[2]) for line in lines[1:3]] == pytest.approx(
        [c.rate_per_s for c in direct.configs], rel=5e-3)   # 3 significant digits


def test_the_cli_json_is_the_same_on_two_workers(capsys):
    import json

    from kvsim.cli import main
    assert main([*CLI, "--json", "--target", "5"]) == 0
    serial = json.loads(capsys.readouterr().out)
    assert main([*CLI, "--json", "--target", "5", "--workers", "2"]) == 0
    pooled = json.loads(capsys.readouterr().out)
    assert serial == pooled
    assert [row["gpu"] for row in serial["configs"]] == ["a40-48gb", "h100-80gb"]
    assert serial["cheapest"]["replicas"] >= 1 and serial["pareto"]
    assert serial["runs"] == sum(row["runs"] for row in serial["configs"])


@pytest.mark.parametrize("extra, words", [
    (["--slo", "nope=1"], ["slo key 'nope' is not known"]),
    (["--slo", "ttft_p99_s"], ["--slo 'ttft_p99_s' is malformed", "name=value"]),
    (["--slo", "ttft_p99_s=3"], ["--slo ttft_p99_s is given twice"]),
    (["--price", "a40-48gb=free"], ["prices['a40-48gb']='free' is not a number"]),
    (["--price", "a40-48gb=0.8"], ["no price for GPU 'h100-80gb'"]),
    (["--trace", "t.csv", "--prompt", "100"], ["--trace and --prompt/--output-mean"]),
    (["--gpu", "a40-48gb"], ["--gpu and gpu= in --set or --grid are both given"]),
    (["--rel-tol", "0"], ["rel_tol=0", "> 0"]),
    (["--seeds", "x"], ["--seeds 'x' is malformed"]),
])
def test_the_cli_says_what_is_wrong_in_one_line(capsys, extra, words):
    from kvsim.cli import main
    assert main([*CLI, *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def test_the_cli_needs_an_slo(capsys):
    from kvsim.cli import main
    assert main(["plan", "--model", "llama-2-7b", "--gpu", "a40-48gb"]) == 2
    assert "--slo is missing" in capsys.readouterr().err
