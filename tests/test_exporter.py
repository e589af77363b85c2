"""kvsim exporter: a live /metrics endpoint replaying a run (real HTTP on loopback)."""
from __future__ import annotations

import io
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

import kvsim
from kvsim.observe import exporter
from kvsim.observe.exporter import CONNECTION_TIMEOUT_S, LISTEN_BACKLOG, MetricsServer
from kvsim.observe.series import run_metrics

ROOT = Path(__file__).resolve().parents[1]


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
    return None


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
    assert get(url + "/health")[::2] == (200, "ok\n")
    code, headers, body = get(url + "/health", method="HEAD")
    assert code == 200 and body == "" and headers["Content-Length"] == "3"
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
    (["--vllm-version", "v9"], "vllm_version='v9'"),
    (["--version", "v1-0.10"], "expected --vllm-version v1-0.10"),     # the flag's old meaning
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


# --- a real server: a burst of scrapes, clients that hang up, idle clients, the ready line ---

def test_the_constants_are_sized_for_a_fleet():
    assert LISTEN_BACKLOG >= 128 and exporter._Server.request_queue_size == LISTEN_BACKLOG
    assert 1 <= CONNECTION_TIMEOUT_S <= 60


def test_fifty_concurrent_scrapes_all_succeed(served):
    _, srv, clock, url = served
    clock.now = 6.0
    start = threading.Barrier(50)

    def scrape(_):
        start.wait()                                   # all 50 connect at once
        try:
            code, _, body = get(url + "/metrics")
        except OSError as exc:                         # refused, reset, timed out
            return repr(exc)
        return None if code == 200 and preemptions(body) is not None else f"status {code}"

    with ThreadPoolExecutor(50) as pool:
        failures = [f for f in pool.map(scrape, range(50)) if f is not None]
    assert failures == []


def test_a_client_that_hangs_up_mid_response_costs_one_line(served, monkeypatch, capfd):
    _, srv, _, url = served
    log = io.StringIO()
    monkeypatch.setattr(srv.httpd, "log", log)
    # a body far larger than the socket buffers, so the server is still sending when the
    # client resets the connection
    monkeypatch.setattr(srv, "body", lambda openmetrics=False: b"x" * 8_000_000)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", srv.port))
    s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    assert s.recv(64).startswith(b"HTTP/1.0 200")     # the response has begun
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()                                          # an RST, mid-body
    deadline = time.time() + 10
    while "disconnected" not in log.getvalue() and time.time() < deadline:
        time.sleep(0.05)
    lines = log.getvalue().splitlines()
    assert len(lines) == 1 and re.fullmatch(
        r"kvsim exporter: client 127\.0\.0\.1:\d+ disconnected \((ConnectionResetError|"
        r"BrokenPipeError)\); still serving", lines[0]), lines
    monkeypatch.undo()                                 # the real exposition again
    code, _, body = get(url + "/metrics")              # and the server still serves
    assert code == 200 and preemptions(body) is not None
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error" not in err


def test_a_hang_up_before_the_request_is_read_is_quiet_too(capfd):
    log = io.StringIO()
    srv = MetricsServer(run_metrics(kvsim.run_scenario("mission-1-storm")), port=0, log=log)
    srv.start()
    try:
        for _ in range(3):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET /metr")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        assert get(f"http://127.0.0.1:{srv.port}/metrics")[0] == 200
    finally:
        srv.close()
    assert len(log.getvalue().splitlines()) <= 3
    assert "Traceback" not in capfd.readouterr().err


def served_with_timeout(timeout_s):
    srv = MetricsServer(run_metrics(kvsim.run_scenario("mission-1-storm")), port=0,
                        timeout_s=timeout_s, log=io.StringIO())
    srv.start()
    return srv


def closed_by_server(s: socket.socket, wait_s: float = 20) -> bool:
    """True when the server closes ``s`` (EOF or reset) within a generous ``wait_s``."""
    s.settimeout(wait_s)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_an_idle_connection_is_closed_after_the_timeout():
    srv = served_with_timeout(0.3)
    try:
        idle = socket.create_connection(("127.0.0.1", srv.port))
        assert closed_by_server(idle)
        idle.close()
        assert get(f"http://127.0.0.1:{srv.port}/metrics")[0] == 200
    finally:
        srv.close()
    assert srv.httpd.log.getvalue() == ""              # a timeout is routine: no log line


def test_a_slow_loris_is_dropped_at_the_deadline_not_per_byte():
    """A client sending a header byte every 50 ms never lets a per-read timeout of 0.3 s
    expire; the connection's deadline still closes it."""
    srv = served_with_timeout(0.3)
    try:
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.settimeout(5)
        dropped = False
        payload = b"GET /metrics HTTP/1.0\r\n" + b"X-Slow: " + b"a" * 2_000
        for i in range(len(payload)):                  # at most ~100 s; stops at the drop
            try:
                s.sendall(payload[i:i + 1])
            except (BrokenPipeError, ConnectionResetError):
                dropped = True
                break
            time.sleep(0.05)
        assert dropped
        s.close()
    finally:
        srv.close()


def test_many_idle_connections_do_not_keep_their_threads():
    srv = served_with_timeout(0.3)
    base = threading.active_count()
    try:
        conns = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(100)]
        assert all(closed_by_server(c) for c in conns)
        for c in conns:
            c.close()
        deadline = time.time() + 20
        while threading.active_count() > base and time.time() < deadline:
            time.sleep(0.05)
        assert threading.active_count() <= base
        assert get(f"http://127.0.0.1:{srv.port}/metrics")[0] == 200
    finally:
        srv.close()


def test_timeout_is_checked():
    with pytest.raises(kvsim.KvsimError, match=r"timeout_s=0 is out of range: expected a number \[0\.01, 3600\]"):
        MetricsServer(run_metrics(kvsim.run_scenario("mission-1-storm")), port=0, timeout_s=0)


def test_the_ready_line_comes_on_stdout_once_it_listens():
    """With --port 0 the ready line is the only way to learn the port: a script that scrapes
    the moment it reads the line must succeed, with no retry."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "kvsim", "exporter", "--scenario",
                             "mission-1-storm", "--speed", "20", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)
    try:
        line = proc.stdout.readline()
        m = re.fullmatch(r"kvsim exporter: serving /metrics on http://127\.0\.0\.1:(\d+) "
                         r"\(simulated time runs 20 x real time\)\n", line)
        assert m, line
        code, _, body = get(f"http://127.0.0.1:{m.group(1)}/metrics")
        assert code == 200 and "vllm:num_preemptions_total" in body
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and out == "" and "Traceback" not in err


def test_help_explains_that_speed_multiplies_every_rate():
    proc = subprocess.run([sys.executable, "-m", "kvsim", "exporter", "--help"],
                          capture_output=True, text=True, timeout=30, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    text = " ".join(proc.stdout.split())
    assert proc.returncode == 0
    assert "simulated time" in text and "multiplies every rate by N" in text
    assert "N times the simulated server's rate" in text


# ------------------------------------------- issue 30: one rendering per change of state

def test_the_exposition_is_rendered_once_per_change_of_the_simulated_state(served, monkeypatch):
    """A burst of scrapes at one state costs one rendering; a scrape after the state moved
    costs one more, and every scrape gets what the exposition at its instant is."""
    r, srv, clock, url = served
    from kvsim.observe.exposition import exposition
    calls = []

    def counted(*args, **kwargs):
        calls.append(args[1])
        return exposition(*args, **kwargs)

    monkeypatch.setattr(exporter, "exposition", counted)
    metrics = srv.metrics
    times = metrics.change_times()
    clock.now = float(times[len(times) // 2]) / srv.speed           # at a change
    with ThreadPoolExecutor(32) as pool:
        bodies = list(pool.map(lambda _: get(url + "/metrics")[2], range(64)))
    assert len(calls) == 1 and len(set(bodies)) == 1
    assert bodies[0] == exposition(metrics, calls[0])
    # a time between two changes gives the same state: no new rendering
    between = (float(times[len(times) // 2]) + float(times[len(times) // 2 + 1])) / 2
    clock.now = between / srv.speed
    assert get(url + "/metrics")[2] == bodies[0] and len(calls) == 1
    # the next change: one new rendering, the exposition at that instant
    clock.now = float(times[len(times) // 2 + 1]) / srv.speed
    body = get(url + "/metrics")[2]
    assert len(calls) == 2 and body == exposition(metrics, calls[1]) != bodies[0]
    # OpenMetrics is rendered (and kept) on its own
    om = get(url + "/metrics", headers={"Accept": "application/openmetrics-text"})[2]
    assert len(calls) == 3 and om.endswith("# EOF\n")
    assert srv.renders == 3


def test_the_state_index_counts_every_series_change():
    metrics = run_metrics(kvsim.run_scenario("mission-1-storm"))
    times = metrics.change_times()
    tl = metrics.result.timeline
    assert set(tl["t_s"].tolist()) <= set(times.tolist())           # every step's gauges
    first = metrics.result.requests["first_token_s"]
    assert set(first[~np.isnan(first)].tolist()) <= set(times.tolist())   # counters, TTFT
    assert metrics.state_index(0.0) == int((times <= 0.0).sum())
    assert metrics.state_index(metrics.end_s + 1.0) == len(times)
