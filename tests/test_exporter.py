"""kvsim exporter: a live /metrics endpoint replaying a run (real HTTP on loopback)."""
from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

import kvsim
from kvsim.observe.exporter import MetricsServer
from kvsim.observe.series import run_metrics


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture()
def served():
    r = kvsim.run_scenario("mission-1-storm")
    clock = Clock()
    srv = MetricsServer(run_metrics(r), speed=10, port=0, clock=clock)
    srv.start()
    yield r, srv, clock, f"http://127.0.0.1:{srv.port}"
    srv.close()


def get(url, method="GET", headers=None):
    req = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def preemptions(text):
    for f in text_string_to_metric_families(text):
        if f.name == "vllm:num_preemptions":
            return next(s.value for s in f.samples if s.name.endswith("_total"))


def test_replays_at_speed_and_stops_at_the_end(served):
    r, srv, clock, url = served
    clock.now = 6.0                                    # 6 s of wall time at 10x: t = 60 s
    code, headers, body = get(url + "/metrics")
    assert code == 200 and headers["Content-Type"].startswith("text/plain; version=0.0.4")
    at60 = int((r.events["t_s"] <= 60.0).sum())
    assert preemptions(body) == at60
    clock.now = 1_000.0                                # long past the end: the final state
    assert preemptions(get(url + "/metrics")[2]) == r.events.num_rows
    assert srv.sim_time() == r.simulated_s


def test_openmetrics_negotiation_head_404_405(served):
    _, _, _, url = served
    code, headers, body = get(url + "/metrics",
                              headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert code == 200 and headers["Content-Type"].startswith("application/openmetrics-text")
    assert body.rstrip().endswith("# EOF")
    code, headers, body = get(url + "/metrics", method="HEAD")
    assert code == 200 and body == "" and int(headers["Content-Length"]) > 1000
    assert get(url + "/nothing-here")[0] == 404
    code, headers, _ = get(url + "/metrics", method="POST")
    assert code == 405 and headers["Allow"] == "GET, HEAD"
    assert get(url + "/")[0] == 200


def test_memory_is_bounded_over_many_scrapes(served):
    import tracemalloc
    _, _, clock, url = served
    clock.now = 3.0
    get(url + "/metrics")
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for i in range(200):
        clock.now = 3.0 + i * 0.05
        get(url + "/metrics")
    grown = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert grown < 2_000_000, grown


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_serves_and_stops_cleanly_on_ctrl_c():
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "kvsim", "exporter", "--scenario",
                             "mission-1-storm", "--speed", "50", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 20
        while True:
            try:
                code, _, body = get(f"http://127.0.0.1:{port}/metrics")
                break
            except (urllib.error.URLError, ConnectionError):
                if time.time() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        assert code == 200 and "vllm:kv_cache_usage_perc" in body
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0
    assert "Traceback" not in err and "stopped" in err


@pytest.mark.parametrize("args, needle", [
    (["--speed", "0"], "speed=0.0 is out of range"),
    (["--speed", "fast"], "speed='fast' is not a number"),
    (["--port", "70000"], "port=70000 is out of range"),
    (["--version", "v9"], "version='v9'"),
])
def test_bad_flags_are_one_line(args, needle):
    proc = subprocess.run([sys.executable, "-m", "kvsim", "exporter", "--scenario",
                           "mission-1-storm", *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert needle in proc.stderr and proc.stderr.count("\n") == 1


def test_port_in_use_is_a_one_line_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "kvsim", "exporter", "--scenario",
                               "mission-1-storm", "--port", str(port)],
                              capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and f"port={port}" in proc.stderr
    assert proc.stderr.count("\n") == 1
