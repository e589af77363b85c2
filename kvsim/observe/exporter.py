"""A live ``/metrics`` endpoint that replays a kvsim run, for a real Prometheus to scrape.

``kvsim exporter --scenario NAME --speed X --port P`` runs the scenario once,
then serves what a vLLM server's ``/metrics`` would have shown at simulated
time ``t = X x (wall-clock seconds since start)``, on 127.0.0.1 by default
(stdlib ``http.server``). Once ``t`` passes the end of the run the endpoint
keeps showing the final state (the counters stop growing, the gauges show the
drained server), so a scrape never fails.

Every rate a scraper computes is in simulated time: at ``--speed X`` a
counter grows ``X`` times as fast per wall-clock second as the simulated
server's did, so ``rate(...)`` reads ``X`` times the simulated rate, while
Prometheus's windows and ``for`` clauses stay in wall-clock time (a ``[5m]``
window covers ``5X`` simulated minutes).

* ``GET /metrics`` (or ``HEAD``): the exposition, in OpenMetrics when the
  scraper asks for it (``Accept: application/openmetrics-text``), else the
  Prometheus text format 0.0.4, byte for byte as a vLLM server serves it;
* ``GET /health`` ``ok`` (200) while it serves, for a load balancer or a
  container's health check; ``GET /`` a one-line description; any other path
  404; any other method 405 (with ``Allow: GET, HEAD``);
* it listens on :data:`DEFAULT_PORT` (9188) unless told otherwise, not on
  vLLM's 8000, so it can run beside a real server;
* the exposition is rendered once per change of the simulated state, not per
  scrape: the series are step functions, so the text only changes when one of
  them does (:meth:`kvsim.observe.series.RunMetrics.state_index`); the last
  rendering (one per format) is kept and served to every scrape until the
  state moves on. Only one rendering runs at a time: a scrape that arrives
  while one is under way waits for it and gets it (a state at most one
  rendering, a few milliseconds of wall time, old), so a burst of scrapes
  costs one or two renderings, not one each;
* memory is bounded: the run's series are built once (their size is the
  run's), plus the last rendering of each format;
* Ctrl-C (SIGINT) or SIGTERM stops it cleanly, with no traceback.

It is built to be scraped by a fleet, not only by one Prometheus:

* the listen backlog is :data:`LISTEN_BACKLOG` (the stdlib's default of 5
  refuses or stalls a burst of simultaneous scrapes);
* one daemon thread per connection, each with a deadline of
  :data:`CONNECTION_TIMEOUT_S` from accept to the response's last byte: an
  idle or slow client (a slow-loris trickling one byte at a time included) is
  dropped when it runs out, so the threads alive at any moment are at most the
  connections accepted in the last :data:`CONNECTION_TIMEOUT_S` seconds. A
  thread per connection rather than a bounded pool: a pool of N lets N slow
  clients make every real scrape wait behind them, a deadline never does;
* a client that hangs up mid-request or mid-response costs one short line on
  stderr (no traceback) and the server keeps serving; a timeout costs none.

Explained in chapter 4, *Detecting preemption*.
"""
from __future__ import annotations

import io
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from kvsim.errors import KvsimError, check_float, check_int

from .exposition import exposition
from .series import RunMetrics, run_metrics

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

    from kvsim.engine.result import SimResult

__all__ = ["MetricsServer", "serve", "LISTEN_BACKLOG", "CONNECTION_TIMEOUT_S", "DEFAULT_PORT"]

#: The port the exporter listens on unless told otherwise: not vLLM's 8000 (a real server
#: and the exporter can run on one machine), and outside the ports Prometheus' own
#: components take (9090-9100).
DEFAULT_PORT = 9188

_OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"
_TEXT = "text/plain; version=0.0.4; charset=utf-8"

#: listen(2)'s backlog: connections the kernel completes and queues before the server
#: accepts them. socketserver's default is 5; a burst of simultaneous scrapes (a fleet of
#: Prometheus servers, an HA pair plus a federation, a load test) overflows it, and the
#: kernel then drops the overflow's handshakes, which clients see as second-long retries or
#: timeouts (measured: 26-42% of 200 simultaneous scrapes failed at 5). 1024 holds a burst of
#: a thousand scrapes while the accept loop catches up; Linux clamps it to
#: net.core.somaxconn (4096 since Linux 5.4), and queued connections cost only kernel memory.
LISTEN_BACKLOG = 1024

#: Seconds a connection may take from accept to the last byte of its response (reading the
#: request, building the exposition, sending it). Prometheus's default scrape_timeout is 10 s:
#: a scrape still unfinished by then has been abandoned by its scraper anyway, while a real
#: one takes milliseconds. It is a deadline, not a per-read timeout, so a client trickling
#: one byte every few seconds is dropped on time too.
CONNECTION_TIMEOUT_S = 10.0


class _DeadlineReader(io.RawIOBase):
    """A socket's receive side whose every read is bounded by one absolute deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("connection deadline passed")
        self.sock.settimeout(remaining)
        return self.sock.recv_into(buffer)


class _Server(ThreadingHTTPServer):
    """ThreadingHTTPServer with a fleet-sized backlog and quiet client disconnects."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True          # a stuck client never keeps the process alive at exit

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 log: TextIO | None) -> None:
        self.log = log
        super().__init__(address, handler)

    def handle_error(self, request: socket.socket | tuple[bytes, socket.socket],
                     client_address: tuple[str, int]) -> None:
        """A client that went away is routine: one line on the log, no traceback.

        ``BrokenPipeError``, ``ConnectionResetError`` and ``ConnectionAbortedError`` (all
        ``ConnectionError``) and a deadline that passed while writing (``TimeoutError``);
        anything else is a bug in kvsim and keeps socketserver's traceback.
        """
        exc = sys.exc_info()[1]
        if isinstance(exc, TimeoutError):
            return
        if isinstance(exc, ConnectionError):
            host, port = client_address[:2]
            log = self.log if self.log is not None else sys.stderr
            with suppress(OSError, ValueError):     # the log itself gone: nothing to tell
                print(f"kvsim exporter: client {host}:{port} disconnected "
                      f"({type(exc).__name__}); still serving", file=log, flush=True)
            return
        super().handle_error(request, client_address)


class MetricsServer:
    """Serve ``metrics`` (a :class:`RunMetrics`) replayed at ``speed`` x real time.

    Listens as soon as it is constructed (on ``port``; 0 picks a free one, then read
    :attr:`port`); :meth:`start` or :meth:`serve_forever` answers. ``timeout_s`` is each
    connection's deadline (default :data:`CONNECTION_TIMEOUT_S`); ``log`` is where a client's
    disconnect is reported, one line (default: ``sys.stderr`` at the time).
    """

    def __init__(self, metrics: RunMetrics, *, speed: float = 1.0, host: str = "127.0.0.1",
                 port: int = DEFAULT_PORT, clock: Callable[[], float] = time.monotonic,
                 timeout_s: float = CONNECTION_TIMEOUT_S, log: TextIO | None = None) -> None:
        self.metrics = metrics
        self.speed = check_float("speed", speed, min=0.01, max=100_000)
        self.port = check_int("port", port, min=0, max=65535)
        self.timeout_s = check_float("timeout_s", timeout_s, min=0.01, max=3600)
        self.host = host
        self.clock = clock
        self.t0 = clock()
        # the last rendering per format: {openmetrics: (state index, bytes)}; one at a time
        self._rendered: dict[bool, tuple[int, bytes]] = {}
        self._rendering: set[bool] = set()
        self._cond = threading.Condition()
        self.renders = 0                       # renderings made (tests and `make bench` read it)
        try:
            self.httpd = _Server((host, self.port), _handler_for(self), log)
        except OSError as exc:
            raise KvsimError(f"port={self.port} on {host} cannot be opened ({exc.strerror}): "
                             "expected a free port in [1, 65535]") from None
        self.port = self.httpd.server_address[1]

    def body(self, openmetrics: bool = False) -> bytes:
        """The exposition a scrape now gets (see the module docstring): the last rendering
        while the simulated state has not changed since, else a new one, made by one scrape
        while the others that arrive meanwhile wait for it."""
        t = self.sim_time()
        idx = self.metrics.state_index(t)
        with self._cond:
            got = self._rendered.get(openmetrics)
            if got is not None and got[0] >= idx:
                return got[1]
            if openmetrics in self._rendering:      # take the rendering under way
                while openmetrics in self._rendering:
                    self._cond.wait()
                got = self._rendered.get(openmetrics)
                if got is not None:
                    return got[1]
            self._rendering.add(openmetrics)
        body = None
        try:
            body = exposition(self.metrics, t, openmetrics=openmetrics).encode("utf-8")
            return body
        finally:
            with self._cond:
                self._rendering.discard(openmetrics)
                if body is not None:
                    self._rendered[openmetrics] = (idx, body)
                    self.renders += 1
                self._cond.notify_all()

    def sim_time(self) -> float:
        """The simulated time a scrape now sees (capped at the run's end)."""
        return min((self.clock() - self.t0) * self.speed, self.metrics.end_s)

    def serve_forever(self) -> None:
        """Answer connections in this thread until :meth:`close` (from another thread)."""
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> threading.Thread:
        """Serve in a background thread (for tests and notebooks); stop with :meth:`close`."""
        th = threading.Thread(target=self.serve_forever, daemon=True)
        th.start()
        return th

    def close(self) -> None:
        """Stop answering and close the listening socket (connections in flight are dropped)."""
        self.httpd.shutdown()
        self.httpd.server_close()


def _handler_for(outer: MetricsServer) -> type[BaseHTTPRequestHandler]:
    """The request handler class of one :class:`MetricsServer`: GET and HEAD of /metrics,
    / and /health, each connection within ``outer``'s deadline."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "kvsim-exporter"
        timeout = outer.timeout_s           # StreamRequestHandler sets it on the socket

        def setup(self) -> None:
            super().setup()
            self.deadline = time.monotonic() + outer.timeout_s
            self.rfile = io.BufferedReader(_DeadlineReader(self.connection, self.deadline))

        def log_message(self, format: str, *args: object) -> None:   # quiet: scrapes are routine
            pass

        def _arm(self) -> None:
            """Give the next send what is left of the connection's deadline."""
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("connection deadline passed")
            self.connection.settimeout(remaining)     # sendall: a total, not per send

        def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8",
                  head: bool = False, extra: Mapping[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self._arm()
            self.end_headers()
            if not head:
                self._arm()
                self.wfile.write(body)

        def _get(self, head: bool) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                om = "application/openmetrics-text" in self.headers.get("Accept", "")
                self._send(200, outer.body(om), _OPENMETRICS if om else _TEXT, head)
            elif path == "/":
                body = (f"kvsim exporter: {outer.metrics.labels['model_name']} replayed at "
                        f"{outer.speed:g}x; metrics at /metrics\n").encode()
                self._send(200, body, head=head)
            elif path == "/health":
                self._send(200, b"ok\n", head=head)
            else:
                self._send(404, b"not found: try /metrics or /health\n", head=head)

        def do_GET(self) -> None:
            self._get(head=False)

        def do_HEAD(self) -> None:
            self._get(head=True)

        def _not_allowed(self) -> None:
            self._send(405, b"method not allowed: GET or HEAD\n",
                       extra={"Allow": "GET, HEAD"})

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _not_allowed

    return Handler


def ready_line(host: str, port: int, speed: float) -> str:
    """The line ``kvsim exporter`` prints on stdout once it listens (scripts wait for it)."""
    return (f"kvsim exporter: serving /metrics on http://{host}:{port} "
            f"(simulated time runs {speed:g} x real time)")


def serve(result: SimResult, *, speed: float = 1.0, host: str = "127.0.0.1",
          port: int = DEFAULT_PORT, version: str = "v1", model_name: str | None = None,
          out: TextIO = sys.stderr, ready_out: TextIO | None = None) -> None:
    """Serve ``result`` until Ctrl-C or SIGTERM (the CLI's ``kvsim exporter``).

    Once the socket listens, :func:`ready_line` goes to ``ready_out`` (default: stdout),
    flushed, so a script can start scraping when it reads it; the run's length and the
    stop message go to ``out``.
    """
    metrics = run_metrics(result, version=version, model_name=model_name,
                          start_unix_s=round(time.time(), 3))
    server = MetricsServer(metrics, speed=speed, host=host, port=port)
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    thread = server.start()
    print(ready_line(host, server.port, server.speed),
          file=ready_out if ready_out is not None else sys.stdout, flush=True)
    print(f"kvsim exporter: {metrics.end_s:.0f} s of simulated time at {server.speed:g}x "
          f"take {metrics.end_s / server.speed:.0f} s of wall time; Ctrl-C stops",
          file=out, flush=True)
    try:
        while not stop.wait(0.2):
            pass
    finally:
        server.close()
        thread.join(timeout=5)
        for s, h in old.items():
            signal.signal(s, h)
    print("kvsim exporter: stopped", file=out, flush=True)
