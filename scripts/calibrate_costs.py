"""Refit the cost model's per-GPU constants to measured kernel timings and print the errors.

    python scripts/calibrate_costs.py [PROFILE_FOLDER]

PROFILE_FOLDER holds Vidur's ``<gpu>_<model>_mlp.csv`` profiles (default:
``../shared/data/vidur-profiling`` next to the repository). For every GPU it
prints the fitted ``matmul_efficiency``, ``memory_efficiency`` and
``kernel_latency_s`` beside the preset's, then the error table of the presets.
A preset that disagrees with its fit is flagged: copy the fitted figures into
``kvsim/model/hardware.py`` (the tests check that the two agree).
"""
from __future__ import annotations

import sys
from pathlib import Path

from kvsim.engine import calibration
from kvsim.model.hardware import get_gpu

DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "vidur-profiling"


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else DEFAULT
    rows = calibration.read_profiles(folder)
    print(f"{len(rows):,} profile rows from {folder}\n")
    stale = False
    for name in sorted({r.gpu for r in rows}):
        fit = calibration.fit_gpu(rows, name)
        gpu = get_gpu(name)
        now = (gpu.matmul_efficiency, gpu.memory_efficiency, gpu.kernel_latency_s)
        new = (fit["matmul_efficiency"], fit["memory_efficiency"], fit["kernel_latency_s"])
        flag = "" if now == new else "   <- the preset differs: update kvsim/model/hardware.py"
        stale |= now != new
        print(f"{name:<10} fitted matmul {new[0]:.2f}, memory {new[1]:.2f}, latency "
              f"{new[2] * 1e6:.1f} us (worst row {100 * fit['worst']:.1f} %); preset "
              f"{now[0]:.2f}, {now[1]:.2f}, {now[2] * 1e6:.1f} us{flag}")
    print()
    print(calibration.format_error_table(calibration.error_table(rows)))
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
