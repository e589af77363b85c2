"""kvsim's KV pool against published vLLM start-up logs: blocks predicted vs logged.

    python benchmarks/startup_logs.py      # also printed by make bench

The logs' figures, each with its source, are in ``startup_logs.json`` beside this
file. For every log kvsim sizes the pool from the model, the GPU's memory as the
log reports it and the server's settings (engine, gpu_memory_utilization, the
tokens and sequences it profiled), never from the log's own memory figures;
then the error is split into its parts with the log's figures (weights,
activation peak, non-PyTorch memory: kvsim minus the log, in GiB). A positive
block error means kvsim promises more KV than the server had.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import kvsim
from kvsim.model.memory import kv_budget
from kvsim.units import GiB

LOGS = Path(__file__).resolve().with_name("startup_logs.json")


def load_logs(path: Path = LOGS) -> list[dict]:
    """The logs of ``startup_logs.json``, as published."""
    return json.loads(path.read_text(encoding="utf-8"))["logs"]


def compare(log: dict) -> dict:
    """kvsim's prediction for one log: blocks, relative error and its parts (GiB)."""
    # The log's GPU: the memory CUDA reported to vLLM ("total_gpu_memory"); nothing else
    # of the card enters the budget.
    gpu = replace(kvsim.get_gpu("a40-48gb"), name=log["gpu"],
                  memory_bytes=round(log["total_gpu_memory_gib"] * GiB),
                  datasheet_memory_bytes=None, nvidia_smi_mib=None)
    b = kv_budget(gpu, log["model"], gpu_memory_utilization=log["gpu_memory_utilization"],
                  block_size=log["block_size"], engine=log["engine"],
                  max_num_batched_tokens=log["max_num_batched_tokens"],
                  max_num_seqs=log["max_num_seqs"])
    activations_log = log["peak_torch_memory_gib"] - log["weights_gib"]
    return {
        "source": log["source"], "quote": log["quote"], "model": log["model"], "gpu": log["gpu"],
        "max_model_len": log["max_model_len"], "max_num_batched_tokens": log["max_num_batched_tokens"],
        "log_blocks": log["gpu_blocks"], "kvsim_blocks": b.vllm_blocks,
        "error": b.vllm_blocks / log["gpu_blocks"] - 1,
        "d_weights_gib": b.weight_bytes / GiB - log["weights_gib"],
        "d_activations_gib": b.peak_activation_bytes / GiB - activations_log,
        "d_non_torch_gib": b.non_torch_bytes / GiB - log["non_torch_memory_gib"],
        "d_kv_gib": b.kv_bytes / GiB - log["kv_cache_size_gib"],
    }


def table(path: Path = LOGS) -> list[dict]:
    """:func:`compare` for every log."""
    return [compare(log) for log in load_logs(path)]


def format_table(rows: list[dict]) -> str:
    head = (f"  {'model':<13} {'max_model_len':>13} {'profiled':>9} {'log':>7} {'kvsim':>7} "
            f"{'error':>7}   {'d weights':>9} {'d activ.':>9} {'d non-torch':>11}  (kvsim - log, GiB)")
    lines = [head]
    for r in rows:
        lines.append(f"  {r['model']:<13} {r['max_model_len']:>13,} {r['max_num_batched_tokens']:>9,} "
                     f"{r['log_blocks']:>7,} {r['kvsim_blocks']:>7,} {r['error']:>+7.1%}   "
                     f"{r['d_weights_gib']:>+9.3f} {r['d_activations_gib']:>+9.3f} "
                     f"{r['d_non_torch_gib']:>+11.3f}")
        lines.append(f"      {r['gpu']}; {r['source']} ({r['quote']})")
    return "\n".join(lines)


def main() -> int:
    rows = table()
    print(f"\nKV pool against {len(rows)} published vLLM start-up logs (blocks as vLLM logs them; "
          f"benchmarks/startup_logs.json):")
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
