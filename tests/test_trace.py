"""Trace replay: the real Azure LLM inference trace, synthetic round trips, malformed rows."""
from __future__ import annotations

import csv
import io
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from kvsim.errors import KvsimError
from kvsim.traffic.lengths import Geometric, LogNormal
from kvsim.traffic.workload import TRACE_HEADERS, Workload

AZURE = "AzureLLMInferenceTrace_conv.csv"


# ---- the real trace (skips when ../shared/data is absent) ------------------------------------


def reference_rows(path: Path):
    """Read the trace with the stdlib only: (seconds since the first row, context, generated)."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        assert next(reader) == ["TIMESTAMP", "ContextTokens", "GeneratedTokens"]
        rows = list(reader)
    stamps = []
    for ts, _, _ in rows:
        whole, frac = ts.split(".")                       # 7 fractional digits: 100 ns ticks
        t = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S")
        stamps.append((t, int(frac.ljust(7, "0"))))
    t0, f0 = stamps[0]
    secs = [(t - t0).total_seconds() + (f - f0) / 1e7 for t, f in stamps]
    return secs, [int(r[1]) for r in rows], [int(r[2]) for r in rows]


@pytest.fixture(scope="module")
def azure_path(shared_data: Path) -> Path:
    path = shared_data / AZURE
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return path


@pytest.fixture(scope="module")
def azure(azure_path):
    return Workload.from_trace(azure_path)


@pytest.fixture(scope="module")
def reference(azure_path):
    return reference_rows(azure_path)


def test_real_trace_loads_every_row(azure, reference, azure_path):
    secs, ctx, gen = reference
    # the published one-hour conversation trace: 19,366 requests after the header
    # (19,367 lines; the last one has no trailing newline, so `wc -l` says 19,366)
    assert len(azure) == len(secs) == 19_366
    assert azure_path.read_bytes().count(b"\n") == 19_366
    assert azure.arrival_s[0] == 0.0
    assert np.abs(azure.arrival_s - np.array(secs)).max() < 1e-6
    assert azure.prompt_tokens.tolist() == ctx and azure.output_tokens.tolist() == gen
    assert (azure.priority == 0).all() and not azure.is_closed_loop


def test_real_trace_spans_about_an_hour_with_pinned_means(azure, reference):
    secs, ctx, gen = reference
    assert 3300 < azure.arrival_s[-1] < 3700 and azure.arrival_s[-1] == pytest.approx(secs[-1])
    assert azure.duration_s == pytest.approx(secs[-1])
    assert azure.prompt_tokens.mean() == pytest.approx(sum(ctx) / len(ctx), rel=1e-12)
    assert azure.output_tokens.mean() == pytest.approx(sum(gen) / len(gen), rel=1e-12)
    assert (np.diff(azure.arrival_s) >= 0).all()
    text = azure.describe()
    assert "19,366 requests" in text and AZURE in text


def test_real_trace_window_limit_and_time_scale(azure_path, reference):
    secs = np.array(reference[0])
    w = Workload.from_trace(azure_path, start_s=600, duration_s=120)
    inside = (secs >= 600) & (secs < 720)
    assert len(w) == inside.sum() > 50
    assert np.abs(w.arrival_s - (secs[inside] - 600)).max() < 1e-6
    assert w.duration_s == 120 and w.arrival_s.min() >= 0 and w.arrival_s.max() < 120
    fast = Workload.from_trace(azure_path, start_s=600, duration_s=120, time_scale=2.0)
    assert np.allclose(fast.arrival_s, w.arrival_s / 2) and fast.duration_s == 60
    assert fast.prompt_tokens.tobytes() == w.prompt_tokens.tobytes()
    head = Workload.from_trace(azure_path, limit=100)
    assert len(head) == 100 and np.abs(head.arrival_s - secs[:100]).max() < 1e-6


# ---- synthetic traces ------------------------------------------------------------------------


def test_seconds_trace_round_trips_exactly(tmp_path):
    w = Workload.poisson(3, 200, prompt=LogNormal(850, 0.5), output=Geometric(250), seed=1)
    path = tmp_path / "mine.csv"
    w.to_csv(path)
    assert path.read_text().splitlines()[0] == "arrival_s,prompt_tokens,output_tokens"
    v = Workload.from_trace(path)
    for col in ("arrival_s", "prompt_tokens", "output_tokens", "priority"):
        assert getattr(v, col).tobytes() == getattr(w, col).tobytes()


def test_seconds_trace_written_by_hand_with_priority(tmp_path):
    path = tmp_path / "hand.csv"
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["arrival_s", "prompt_tokens", "output_tokens", "priority"])
        out.writerows([[0.5, 100, 10, 1], [0.5, 200, 20, -1], [2.25, 300, 30, 0]])
    w = Workload.from_trace(path)
    assert w.arrival_s.tolist() == [0.5, 0.5, 2.25]     # arrival_s is used as given
    assert w.prompt_tokens.tolist() == [100, 200, 300]
    assert w.priority.tolist() == [1, -1, 0]
    buf = io.StringIO()
    w.to_csv(buf)
    assert buf.getvalue().splitlines()[0] == TRACE_HEADERS[2]
    assert Workload.from_trace(io.StringIO(buf.getvalue())).priority.tolist() == [1, -1, 0]


def test_azure_format_synthetic_with_crlf_bom_blank_lines_and_quotes(tmp_path):
    text = ("\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\r\n"
            "2023-11-16 23:59:59.9000000,100,10\r\n"
            "\r\n"
            "2023-11-17 00:00:00.0000001,200,20\r\n"
            "2023-11-17 00:00:01.2500000,300,30")
    path = tmp_path / "azure.csv"
    path.write_bytes(text.encode("utf-8"))
    w = Workload.from_trace(path)
    assert w.arrival_s.tolist() == pytest.approx([0.0, 0.1000001, 1.35], abs=1e-9)
    assert w.output_tokens.tolist() == [10, 20, 30]
    quoted = text.replace("2023-11-17 00:00:01.2500000,300", '"2023-11-17 00:00:01.2500000","300"')
    q = Workload.from_trace(io.BytesIO(quoted.encode()))
    assert q.arrival_s.tobytes() == w.arrival_s.tobytes()
    assert q.prompt_tokens.tolist() == [100, 200, 300]


def test_file_objects_text_and_binary():
    text = "arrival_s,prompt_tokens,output_tokens\n0,5,6\n1.5,7,8\n"
    a = Workload.from_trace(io.StringIO(text))
    b = Workload.from_trace(io.BytesIO(text.encode()))
    assert a.arrival_s.tolist() == b.arrival_s.tolist() == [0.0, 1.5]
    assert a.output_tokens.tolist() == [6, 8]


HEAD = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
OK1 = "2023-11-16 18:15:46.6805900,374,44\n"
OK2 = "2023-11-16 18:15:50.9951690,396,109\n"
SEC = "arrival_s,prompt_tokens,output_tokens\n"


@pytest.mark.parametrize("text,line,needle", [
    (HEAD + OK1 + "2023-11-16 18:15:50.9951690,396\n", 3, "2 columns: expected 3"),
    (HEAD + OK1 + OK2 + "2023-11-16 18:15:51.2,879,55,1\n", 4, "4 columns: expected 3"),
    (HEAD + OK1 + "2023-11-16 18:15:50.9951690,abc,109\n", 3, "ContextTokens='abc'"),
    (HEAD + OK1 + "2023-11-16 18:15:50.9951690,396,0\n", 3, "GeneratedTokens='0'"),
    (HEAD + OK1 + OK2 + "2023-11-16 18:15:52.0,-5,10\n", 4, "ContextTokens='-5'"),
    (HEAD + OK1 + "2023-11-16 18:15:50.9951690,39.5,10\n", 3, "ContextTokens='39.5'"),
    (HEAD + OK1 + "2023-13-16 18:15:50.9951690,396,109\n", 3, "TIMESTAMP='2023-13-16"),
    (HEAD + OK1 + "yesterday,396,109\n", 3, "TIMESTAMP='yesterday'"),
    (HEAD + OK1 + "NaT,396,109\n", 3, "TIMESTAMP='NaT'"),
    (HEAD + OK1 + ",396,109\n", 3, "TIMESTAMP=''"),
    (HEAD + OK2 + OK1, 3, "TIMESTAMP='2023-11-16 18:15:46.6805900' is earlier than the row"),
    (HEAD + OK1 + "\n" + "2023-11-16 18:15:50.9951690,396,x\n", 4, "GeneratedTokens='x'"),
    (SEC + "0,5,6\n-1,5,6\n", 3, "arrival_s='-1'"),
    (SEC + "0,5,6\nnan,5,6\n", 3, "arrival_s='nan'"),
    (SEC + "0,5,6\n2,5,6\n1,5,6\n", 4, "arrival_s='1' is earlier"),
    (SEC + "0,5,6\n1,5,99999999999999999999\n", 3, "output_tokens='99999999999999999999'"),
])
def test_malformed_rows_name_the_line_and_value(text, line, needle):
    with pytest.raises(KvsimError) as err:
        Workload.from_trace(io.StringIO(text))
    msg = str(err.value)
    assert f"line {line}:" in msg and needle in msg and "\n" not in msg


def test_unknown_header_lists_the_accepted_ones():
    with pytest.raises(KvsimError) as err:
        Workload.from_trace(io.StringIO("time,in,out\n0,1,1\n"))
    msg = str(err.value)
    assert "line 1" in msg and "'time,in,out'" in msg
    assert all(h in msg for h in TRACE_HEADERS)


def test_empty_files_missing_files_and_empty_windows(tmp_path):
    with pytest.raises(KvsimError, match="is empty"):
        Workload.from_trace(io.StringIO(""))
    with pytest.raises(KvsimError, match="header but no rows"):
        Workload.from_trace(io.StringIO(SEC))
    with pytest.raises(KvsimError, match=r"trace '.*nope.csv' does not exist"):
        Workload.from_trace(tmp_path / "nope.csv")
    with pytest.raises(KvsimError, match=r"start_s=50 .* selects no request"):
        Workload.from_trace(io.StringIO(SEC + "0,5,6\n1,5,6\n"), start_s=50, duration_s=5)
    with pytest.raises(KvsimError, match=r"time_scale=0 is out of range"):
        Workload.from_trace(io.StringIO(SEC + "0,5,6\n"), time_scale=0)
    with pytest.raises(KvsimError, match=r"limit=0 is out of range"):
        Workload.from_trace(io.StringIO(SEC + "0,5,6\n"), limit=0)
