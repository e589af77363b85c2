"""Helpers the engine tests share (small hand-checkable runs)."""
from __future__ import annotations

import numpy as np


def row_at(result, t):
    """Index of the timeline row that ends at time ``t`` (exactly)."""
    idx = np.flatnonzero(result.timeline["t_s"] == t)
    assert idx.size == 1, f"no single timeline row ends at {t}"
    return int(idx[0])


def assert_drained(result, requests_in=None):
    """A run that drained: empty cache and queues in the last row, every answer complete."""
    tl, rq = result.timeline, result.requests
    last = {c: int(tl[c][-1]) for c in ("kv_blocks_used", "running", "waiting", "swapped")}
    assert last == {"kv_blocks_used": 0, "running": 0, "waiting": 0, "swapped": 0}
    assert not np.isnan(rq["finish_s"]).any()
    assert np.array_equal(rq["generated_tokens"], rq["output_tokens"])
    if requests_in is not None:
        assert rq.num_rows == len(requests_in)
    assert (tl["kv_blocks_used"] <= result.total_blocks).all()
