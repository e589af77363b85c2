"""``kvsim twin``: reading a server's metrics, building its twin, the round trip, bad input.

The round trip: a kvsim run, its exporter's scrape text (one scrape since start, and a
pair), the twin, the twin's run, against the run's own summary, with the tolerances the
module docstring of :mod:`kvsim.observe.twin` states. The real scrapes are the fragments
in ``book/data/scrapes`` (see its SOURCES.md; the book reads one).
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

import kvsim
from kvsim.cli import main
from kvsim.errors import KvsimError
from kvsim.observe.exposition import exposition
from kvsim.observe.readings import between, read_prometheus_json, read_scrape_text, since_start
from kvsim.observe.twin import build_twin, fit_lengths, match_model, what_ifs
from kvsim.traffic.lengths import Fixed, Geometric, LogNormal

SCRAPES = Path(__file__).resolve().parents[1] / "book" / "data" / "scrapes"


def _scrape(result, t, **kw):
    return read_scrape_text(exposition(result, t, **kw), f"scrape@{t:g}")


# --- the round trip ----------------------------------------------------------------------

#: (scenario, scenario overrides, one scrape at / pair of scrapes at, and the window the
#: run's own summary covers). incident-day: its healthy first 15 minutes only (a stationary
#: twin of a window that holds a rush is the rush's average, not the rush).
CASES = {
    "belgavi-one": ("belgavi", {}, "one", None),
    "belgavi-pair": ("belgavi", {}, "pair", (120.0, None)),
    "belgavi-long-one": ("belgavi-long", {}, "one", None),
    "belgavi-long-pair": ("belgavi-long", {}, "pair", (120.0, None)),
    "mission-1-storm-one": ("mission-1-storm", {}, "one", None),
    "incident-day-healthy-pair": ("incident-day", {"recovery_s": 0.0, "storm_s": 1.0,
                                                   "healthy_s": 900.0}, "pair", (300.0, 900.0)),
}
SEEDS = (0, 1, 2)


def _round_trip(name, seed):
    scenario, over, mode, span = CASES[name]
    r = kvsim.run_scenario(scenario, seed=seed, **over)
    if mode == "one":
        end = r.simulated_s
        window = since_start(_scrape(r, end), uptime_s=end)
        ref = r.summary(warmup_s=0)
    else:
        a, b = span[0], span[1] or r.simulated_s
        window = between(_scrape(r, a), _scrape(r, b), b - a)
        ref = r.summary(warmup_s=a) if span[1] is None else \
            kvsim.run_scenario(scenario, seed=seed, until_s=b, warmup_s=a, **over).summary()
    twin = build_twin(window, seed=100 + seed)    # other arrivals than the server's own draw
    return r, window, twin, ref, twin.run().summary()


@pytest.fixture(scope="module")
def trips():
    return {}


def _trips(trips, name):
    if name not in trips:
        trips[name] = [_round_trip(name, s) for s in SEEDS]
    return trips[name]


@pytest.mark.parametrize("name", list(CASES))
def test_the_twin_reads_the_pool_model_and_gpu_back_exactly(trips, name):
    for r, _, twin, _, _ in _trips(trips, name):
        assert twin.model == r.config["model"]
        assert twin.gpu in ("a40-48gb", "l40s-48gb")       # the two 48 GB cards fit alike
        assert twin.options["num_gpu_blocks"] == r.total_blocks - 1   # less V1's null block
        assert twin.options["block_size"] == r.config["block_size"]
        assert twin.options["max_model_len"] == r.config["max_model_len"]
        assert twin.options["enable_prefix_caching"] == r.config["enable_prefix_caching"]
        assert isinstance(twin.prompt, Fixed) and twin.prompt.n == 850
        # a cold two-minute window sees only the answers short enough to have finished:
        # censored buckets, which a log-normal can fit better than the geometric truth
        assert isinstance(twin.output, Geometric) or name == "mission-1-storm-one"


@pytest.mark.parametrize("name", list(CASES))
def test_the_twin_reads_the_rate_and_step_time_back(trips, name):
    for r, window, twin, ref, _ in _trips(trips, name):
        # every request that arrived in the window, finished or in flight at its end
        assert twin.rate_per_s * window.seconds == pytest.approx(twin.observed["requests"])
        arrived = ref["requests_arrived"] if CASES[name][2] == "pair" else r.requests.num_rows
        assert twin.observed["requests"] == pytest.approx(arrived, rel=0.02, abs=3)
        # the GPU is the server's, so the fitted scale is 1 within the buckets' resolution
        assert 0.95 <= twin.options["step_time_scale"] <= 1.06


@pytest.mark.parametrize("name", list(CASES))
def test_the_twin_reproduces_the_summary_within_the_stated_tolerances(trips, name):
    got = _trips(trips, name)
    for _, _, _, ref, mine in got:
        assert mine["itl_p50_s"] == pytest.approx(ref["itl_p50_s"], rel=0.15)
        assert abs(mine["kv_usage_mean"] - ref["kv_usage_mean"]) <= 0.2

    def med(key, which):
        return statistics.median(float(g[which][key]) for g in got)

    assert med("kv_usage_mean", 4) == pytest.approx(med("kv_usage_mean", 3), abs=0.12)
    assert med("goodput_tok_s", 4) == pytest.approx(med("goodput_tok_s", 3), rel=0.15)
    p_ref, p_twin = med("preemptions_per_1k", 3), med("preemptions_per_1k", 4)
    assert abs(p_twin - p_ref) <= 50 or 1 / 1.5 <= p_twin / p_ref <= 1.5
    t_ref, t_twin = med("ttft_p95_s", 3), med("ttft_p95_s", 4)
    assert 0.5 <= t_twin / t_ref <= 2.0


def test_the_twin_is_deterministic():
    r = kvsim.run_scenario("mission-1-storm")
    w = since_start(_scrape(r, r.simulated_s), uptime_s=r.simulated_s)
    a, b = build_twin(w).to_dict(), build_twin(w).to_dict()
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_a_fitted_scale_recovers_a_slower_server():
    """A server 1.5x slower than kvsim's A40: the twin's scale comes back near 1.5."""
    r = kvsim.run_scenario("incident-day", healthy_s=600.0, storm_s=1.0, recovery_s=0.0,
                           step_time_scale=1.5)
    w = between(_scrape(r, 120.0), _scrape(r, 600.0), 480.0)
    twin = build_twin(w, gpu="a40-48gb", seed=7)
    assert twin.options["step_time_scale"] == pytest.approx(1.5, rel=0.06)


def test_answers_cut_by_max_tokens_give_the_cap():
    r = kvsim.run_scenario("belgavi", max_tokens=400)
    w = between(_scrape(r, 120.0), _scrape(r, r.simulated_s), r.simulated_s - 120.0)
    twin = build_twin(w, fit_scale=False)
    assert twin.options["max_tokens"] == pytest.approx(400, rel=0.1)
    assert twin.output.mean == pytest.approx(250, rel=0.1)


def test_the_openmetrics_vllm_underscore_trap_reads_the_same():
    r = kvsim.run_scenario("mission-1-storm")
    t = r.simulated_s
    om = exposition(r, t, openmetrics=True)
    trapped = om.replace("\nvllm:", "\nvllm_")
    assert "\nvllm_num_preemptions_total" in trapped
    plain = since_start(_scrape(r, t), uptime_s=t)
    read = since_start(read_scrape_text(trapped, "om"), uptime_s=t)
    assert read.increases == plain.increases
    assert any("vllm_" in n and "OpenMetrics" in n for n in read.notes)


def test_older_names_v1_010_and_v0():
    r = kvsim.run_scenario("mission-1-storm")
    t = r.simulated_s
    for version, engine in (("v1-0.10", "v1"), ("v0", "v0")):
        w = since_start(_scrape(r, t, version=version), uptime_s=t)
        twin = build_twin(w, fit_scale=False)
        assert twin.version == version and twin.options["engine"] == engine
        itl = "vllm:time_per_output_token_seconds"
        assert w.histogram(itl) is not None and twin.observed["itl_p50_s"] > 0


def test_a_prometheus_range_export_and_an_instant_query():
    r = kvsim.run_scenario("mission-1-storm")
    a, b = _scrape(r, 30.0), _scrape(r, 120.0)
    result = [{"metric": {"__name__": k[0], **dict(k[1])},
               "values": [[1000.0, str(a.values.get(k, 0.0))], [1090.0, str(v)]]}
              for k, v in b.values.items()]
    w = read_prometheus_json({"status": "success",
                              "data": {"resultType": "matrix", "result": result}})
    assert w.seconds == 90.0
    ref = between(a, b, 90.0)
    assert w.total("vllm:request_success_total") == ref.total("vllm:request_success_total")
    vec = read_prometheus_json({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "vllm:num_requests_running"}, "value": [1090.0, "3"]}]}})
    assert vec.at_unix_s == 1090.0


def test_fit_lengths_picks_the_family_the_buckets_show():
    import numpy as np
    rng = np.random.default_rng(0)
    edges = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, float("inf")]
    for dist, kind in ((Geometric(300), Geometric), (LogNormal(400, 0.9), LogNormal),
                       (Fixed(850), Fixed)):
        x = dist.sample(rng, 20_000)
        cum = [float((x <= e).sum()) for e in edges]
        got, ks = fit_lengths(edges, cum, x.size, float(x.sum()))
        assert isinstance(got, kind), (dist, got)
        assert got.mean == pytest.approx(x.mean(), rel=1e-3) and ks < 0.02


def test_match_model_by_hugging_face_id():
    assert match_model(["meta-llama/Llama-3.1-8B-Instruct"])[0] == "llama-3.1-8b"
    assert match_model(["meta-llama/Llama-2-7b-chat-hf"])[0] == "llama-2-7b"
    assert match_model(["Qwen/Qwen2.5-7B-Instruct"])[0] == "qwen2.5-7b"
    assert match_model(["zai-org/GLM-4.5", "/home/jovyan/qwen3-8b"]) == (None, None)


def test_what_ifs_are_the_chapters_levers():
    r = kvsim.run_scenario("mission-1-storm", seed=1)
    w = since_start(_scrape(r, r.simulated_s), uptime_s=r.simulated_s)
    rows = what_ifs(build_twin(w, seed=101))
    cases = [row["case"] for row in rows]
    assert cases[0] == "twin (baseline)" and len(rows) == 5
    assert rows[1]["change"]["num_gpu_blocks"] > rows[0]["change"].get("num_gpu_blocks", 0)
    base = rows[0]["preemptions_per_1k"]
    assert base > 0
    fp8 = next(row for row in rows if row["case"] == "FP8 KV cache")
    assert fp8["preemptions_per_1k"] < base


# --- real scrapes ------------------------------------------------------------------------

def _found(twin):
    return {f.what: f for f in twin.findings}


def test_real_0_11_cache_config_gives_the_pool_and_says_what_is_missing():
    w = since_start(read_scrape_text((SCRAPES / "vllm-0.11.0-issue-28924.prom").read_text(),
                                     "issue-28924"))
    twin = build_twin(w, fit_scale=False)
    f = _found(twin)
    assert twin.options["num_gpu_blocks"] == 9270 and twin.options["block_size"] == 16
    assert twin.options["enable_prefix_caching"] is True
    assert "0.65" in f["gpu_memory_utilization"].value and f["KV pool"].inferred
    inferred = {k for k, v in f.items() if v.inferred}
    assert {"block_size", "KV pool", "prefix caching", "KV cache dtype",
            "gpu_memory_utilization"} <= inferred
    for what, why in (("model", "no model_name label"), ("GPU", "vLLM exports no GPU"),
                      ("arrival rate", "no vllm:request_success_total"),
                      ("prompt lengths", "no vllm:request_prompt_tokens"),
                      ("step-time scale", "no vllm:inter_token_latency_seconds"),
                      ("max_num_seqs", "not in /metrics")):
        assert not f[what].inferred and why in f[what].why, (what, f[what])


def test_real_0_10_glm_fragment_names_each_gap():
    w = since_start(read_scrape_text(
        (SCRAPES / "vllm-0.10.0-production-stack-617.prom").read_text(), "ps-617"))
    twin = build_twin(w)
    f = _found(twin)
    assert twin.version == "v1-0.10"
    assert not f["model"].inferred and "'zai-org/GLM-4.5' matches no kvsim preset" in f["model"].why
    assert "incomplete" in f["output lengths"].why
    assert "vllm:time_per_output_token_seconds is incomplete" in f["step-time scale"].why
    assert "no vllm:cache_config_info" in f["KV pool"].why
    assert w.seconds is None            # no timestamps, no process start: said, not guessed


def test_real_two_engine_fragment_counts_the_engines():
    w = since_start(read_scrape_text(
        (SCRAPES / "vllm-0.10-pr-22227-two-engines.prom").read_text(), "pr-22227"))
    twin = build_twin(w)
    f = _found(twin)
    assert f["engines"].inferred and f["engines"].value.startswith("2 (engine=0,1)")
    assert "vllm:inter_token_latency_seconds is incomplete" in f["step-time scale"].why


def test_the_cli_on_a_real_scrape(capsys):
    assert main(["twin", str(SCRAPES / "vllm-0.11.0-issue-28924.prom"), "--no-what-ifs"]) == 0
    out = capsys.readouterr().out
    assert "9,270 usable blocks of 16" in out and "not inferred" in out
    assert main(["twin", str(SCRAPES / "vllm-0.11.0-issue-28924.prom"), "--no-what-ifs",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["options"]["num_gpu_blocks"] == 9270 and d["command"].startswith("kvsim simulate")


def test_the_cli_twin_command_runs_in_kvsim_simulate(tmp_path, capsys):
    r = kvsim.run_scenario("mission-1-storm")
    scrape = tmp_path / "s.prom"
    scrape.write_text(exposition(r, r.simulated_s))
    trace = tmp_path / "twin.csv"
    assert main(["twin", str(scrape), "--uptime", str(r.simulated_s), "--json",
                 "--no-what-ifs", "--trace-out", str(trace)]) == 0
    d = json.loads(capsys.readouterr().out)
    argv = d["command"].split()[1:]
    assert main(argv + ["--json"]) == 0
    ran = json.loads(capsys.readouterr().out)
    twin = build_twin(since_start(_scrape(r, r.simulated_s), uptime_s=r.simulated_s))
    assert ran["goodput_tok_s"] == pytest.approx(twin.run().summary()["goodput_tok_s"])


# --- bad input ---------------------------------------------------------------------------

def _bad(tmp_path, capsys, content, *extra, mode="w"):
    paths = []
    for i, c in enumerate(content if isinstance(content, list) else [content]):
        p = tmp_path / f"f{i}"
        if isinstance(c, bytes):
            p.write_bytes(c)
        else:
            p.write_text(c)
        paths.append(str(p))
    code = main(["twin", *paths, *extra, "--no-what-ifs"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert "not Prometheus exposition text" in _bad(tmp_path, capsys, "hello world, no metrics\n")
    assert "(it starts like JSON) is not valid JSON" in _bad(tmp_path, capsys, "{not json")
    assert "not a Prometheus answer" in _bad(tmp_path, capsys, '{"a": 1}')
    assert "binary file" in _bad(tmp_path, capsys, b"\x00\x01\x02PK")
    assert "not UTF-8" in _bad(tmp_path, capsys, b"\xff\xfe\xfa")
    assert "is empty" in _bad(tmp_path, capsys, "\n\n")
    err = _bad(tmp_path, capsys, "# TYPE python_gc_objects_collected_total counter\n"
               'python_gc_objects_collected_total{generation="0"} 12.0\n')
    assert "no vLLM series" in err
    assert "does not exist" in _bad(tmp_path, capsys, "x 1\n", str(tmp_path / "missing.prom"))


def test_a_pair_in_the_wrong_order_is_one_line(tmp_path, capsys):
    r = kvsim.run_scenario("mission-1-storm")
    early, late = exposition(r, 30.0), exposition(r, 120.0)
    err = _bad(tmp_path, capsys, [late, early], "--seconds", "90")
    assert "goes down" in err and "earlier scrape first" in err


def test_api_errors_name_the_value():
    with pytest.raises(KvsimError, match="uptime_s"):
        since_start(read_scrape_text('vllm:num_requests_running 1\n'), uptime_s=-1)
    with pytest.raises(KvsimError, match="expected a kvsim.observe.readings.Window"):
        build_twin("scrape.prom")


def test_fit_lengths_refuses_counts_that_do_not_match_the_edges():
    # zip() used to drop the extra edges, fitting a distribution to a truncated histogram
    with pytest.raises(KvsimError, match="cumulative has 4 counts for 3 edges"):
        fit_lengths([100.0, 1000.0, float("inf")], [50.0, 90.0, 100.0, 100.0], 100.0, 40_000.0)


@pytest.mark.parametrize("points", [["12", "34"], [[1000.0, "5"], [1090.0, "6", "7"]],
                                    [[1000.0, "5"], [None, "6"]], {"1000": "5"}])
def test_a_range_export_whose_values_are_not_pairs_is_one_line(points):
    # two-character strings used to be read as [time, value] pairs ("12": t=1, v=2)
    answer = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "vllm:num_requests_running"}, "values": points}]}}
    with pytest.raises(KvsimError, match=r"a value is not a \[time, \"number\"\] pair"):
        read_prometheus_json(answer)
