"""A live ``/metrics`` endpoint that replays a kvsim run, for a real Prometheus to scrape.

``kvsim exporter --scenario NAME --speed X --port P`` runs the scenario once,
then serves what a vLLM server's ``/metrics`` would have shown at simulated
time ``t = X x (wall-clock seconds since start)``, on 127.0.0.1 by default
(stdlib ``http.server``, one thread per connection). Once ``t`` passes the end
of the run the endpoint keeps showing the final state (the counters stop
growing, the gauges show the drained server), so a scrape never fails.

* ``GET /metrics`` (or ``HEAD``): the exposition, in OpenMetrics when the
  scraper asks for it (``Accept: application/openmetrics-text``), else the
  Prometheus text format 0.0.4, as prometheus_client serves it;
* ``GET /`` a one-line description; any other path 404; any other method 405
  (with ``Allow: GET, HEAD``);
* memory is bounded: the run's series are built once (their size is the
  run's), every scrape builds its registry afresh and drops it;
* Ctrl-C (SIGINT) or SIGTERM stops it cleanly, with no traceback.

Explained in chapter 4, *Detecting preemption*.
"""
from __future__ import annotations

import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from kvsim.errors import KvsimError, check_float, check_int

from .exposition import exposition
from .series import RunMetrics, run_metrics

__all__ = ["MetricsServer", "serve"]

_OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
_TEXT = "text/plain; version=0.0.4; charset=utf-8"


class MetricsServer:
    """Serve ``metrics`` (a :class:`RunMetrics`) replayed at ``speed`` x real time."""

    def __init__(self, metrics: RunMetrics, *, speed: float = 1.0, host: str = "127.0.0.1",
                 port: int = 8000, clock=time.monotonic):
        self.metrics = metrics
        self.speed = check_float("speed", speed, min=0.01, max=100_000)
        self.port = check_int("port", port, min=0, max=65535)
        self.host = host
        self.clock = clock
        self.t0 = clock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "kvsim-exporter"

            def log_message(self, *args):     # quiet: a scrape every few seconds
                pass

            def _send(self, code, body: bytes, ctype="text/plain; charset=utf-8", head=False,
                      extra=None):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _get(self, head):
                path = self.path.split("?", 1)[0]
                if path == "/metrics":
                    om = "application/openmetrics-text" in self.headers.get("Accept", "")
                    text = exposition(outer.metrics, outer.sim_time(), openmetrics=om)
                    self._send(200, text.encode("utf-8"), _OPENMETRICS if om else _TEXT, head)
                elif path == "/":
                    body = (f"kvsim exporter: {outer.metrics.labels['model_name']} replayed at "
                            f"{outer.speed:g}x; metrics at /metrics\n").encode()
                    self._send(200, body, head=head)
                else:
                    self._send(404, b"not found: try /metrics\n", head=head)

            def do_GET(self):
                self._get(head=False)

            def do_HEAD(self):
                self._get(head=True)

            def _not_allowed(self):
                self._send(405, b"method not allowed: GET or HEAD\n",
                           extra={"Allow": "GET, HEAD"})

            do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

        try:
            self.httpd = ThreadingHTTPServer((host, self.port), Handler)
        except OSError as exc:
            raise KvsimError(f"port={self.port} on {host} cannot be opened ({exc.strerror}): "
                             "expected a free port in [1, 65535]") from None
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]

    def sim_time(self) -> float:
        """The simulated time a scrape now sees (capped at the run's end)."""
        return min((self.clock() - self.t0) * self.speed, self.metrics.end_s)

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> threading.Thread:
        """Serve in a background thread (for tests and notebooks); stop with :meth:`close`."""
        th = threading.Thread(target=self.serve_forever, daemon=True)
        th.start()
        return th

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def serve(result, *, speed: float = 1.0, host: str = "127.0.0.1", port: int = 8000,
          version: str = "v1", model_name: str | None = None, out=sys.stderr) -> None:
    """Serve ``result`` until Ctrl-C or SIGTERM (the CLI's ``kvsim exporter``)."""
    metrics = run_metrics(result, version=version, model_name=model_name,
                          start_unix_s=round(time.time(), 3))
    server = MetricsServer(metrics, speed=speed, host=host, port=port)
    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    thread = server.start()
    print(f"kvsim exporter: serving http://{host}:{server.port}/metrics ({metrics.end_s:.0f} s "
          f"of simulated time at {server.speed:g}x, {metrics.end_s / server.speed:.0f} s of "
          f"wall time); Ctrl-C stops", file=out, flush=True)
    try:
        while not stop.wait(0.2):
            pass
    finally:
        server.close()
        thread.join(timeout=5)
        for s, h in old.items():
            signal.signal(s, h)
    print("kvsim exporter: stopped", file=out, flush=True)
