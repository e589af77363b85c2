"""The side-by-side benchmark against another simulator (benchmarks/peer.py) is only a
comparison if both simulators replay the same requests: the CSV kvsim reads and the JSON
the peer's trace loader reads must hold the same arrivals and lengths, in the same order."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from kvsim.traffic.workload import Workload

PEER_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "peer.py"


def load_peer_module():
    spec = importlib.util.spec_from_file_location("bench_peer", PEER_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_simulators_get_the_same_requests(tmp_path):
    peer = load_peer_module()
    files = peer.write_workloads(tmp_path, sizes=(60, 300))
    assert sorted(files) == [60, 300]
    for n, (ours, theirs) in files.items():
        replayed = Workload.from_trace(ours)
        rows = json.loads(theirs.read_text())
        assert 0.8 * n < len(rows) == len(replayed) < 1.2 * n        # a Poisson count near n
        assert [row["timestamp"] for row in rows] == [float(a) for a in replayed.arrival_s]
        assert [row["prompt_tokens"] for row in rows] == [int(p) for p in replayed.prompt_tokens]
        assert [row["output_tokens"] for row in rows] == [int(o) for o in replayed.output_tokens]
        assert len({row["id"] for row in rows}) == len(rows)
        assert len(set(row["output_tokens"] for row in rows)) > 5     # geometric, not constant


def test_the_peer_is_pinned_and_lives_apart_from_kvsims_environment():
    peer = load_peer_module()
    name, _, version = peer.PEER.partition("==")
    assert name == "sched-sim" and version.count(".") == 2
    assert peer.PEER_ENV.is_relative_to(Path(peer.ROOT) / ".cache")
