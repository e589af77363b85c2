"""``kvsim scenarios``, ``kvsim models`` and ``kvsim gpus``: the presets, one line each."""
from __future__ import annotations

import argparse

from .arguments import Subcommands, add_subcommand
from .output import dump

__all__ = ["add_parsers", "scenarios", "models", "gpus"]


def scenarios(args: argparse.Namespace) -> str:
    """Each scenario's name and the first line of its description."""
    from kvsim.runs import scenarios as presets
    names = presets.list_scenarios()
    rows = [dict(name=n, description=presets.describe_scenario(n)) for n in names]
    if args.json:
        return dump(rows)
    width = max((len(n) for n in names), default=0)
    lines = []
    for row in rows:
        first = row["description"].splitlines()[0] if row["description"] else ""
        if first.startswith(row["name"] + ":"):         # the name is already in the first column
            first = first[len(row["name"]) + 1:].strip()
        lines.append(f"{row['name']:<{width}}  {first}")
    return "\n".join(lines)


def models(args: argparse.Namespace) -> str:
    """Each model preset: attention, layers, KV bytes per token, parameters, source."""
    from kvsim.model.presets import get_model, list_models
    from kvsim.units import format_bytes
    specs = [get_model(n) for n in list_models()]
    if args.json:
        return dump([s.to_dict() for s in specs])
    lines = [f"{'name':<14} {'attention':<9} {'layers':>6} {'KV/token':>10} {'params':>8}  source"]
    for spec in specs:
        lines.append(f"{spec.name:<14} {spec.attention_kind:<9} {spec.kv_layers:>6} "
                     f"{format_bytes(spec.kv_bytes_per_token(), 'KiB', 0):>10} "
                     f"{spec.num_params / 1e9:>7.2f}B  {spec.source}")
    return "\n".join(lines)


def gpus(args: argparse.Namespace) -> str:
    """Each GPU preset: memory as CUDA reports it and on the datasheet, bandwidths, FLOPS."""
    from kvsim.model.hardware import get_gpu, list_gpus
    from kvsim.units import format_bytes
    presets = [get_gpu(n) for n in list_gpus()]
    if args.json:
        return dump([g.to_dict() for g in presets])
    lines = [f"{'name':<11} {'CUDA reports':>13} {'datasheet':>10} {'HBM peak':>12} "
             f"{'dense TFLOPS':>12} {'PCIe effective':>15}  calibration"]
    for gpu in presets:
        sheet = (format_bytes(gpu.datasheet_memory_bytes, 'GB', 0)
                 if gpu.datasheet_memory_bytes else "-")
        lines.append(f"{gpu.name:<11} {format_bytes(gpu.memory_bytes, 'GiB', 2):>13} {sheet:>10} "
                     f"{gpu.hbm_bytes_per_s / 1e9:>9,.0f} GB/s {gpu.peak_flops / 1e12:>12,.1f} "
                     f"{gpu.pcie_bytes_per_s / 1e9:>10,.0f} GB/s  {gpu.calibration}")
    return "\n".join(lines)


def add_parsers(subparsers: Subcommands) -> None:
    """Register the three listings (each takes --json)."""
    for name, text, run in (("scenarios", "list the scenarios", scenarios),
                            ("models", "list the model presets", models),
                            ("gpus", "list the GPU presets", gpus)):
        parser = add_subcommand(subparsers, name, help=text,
                                examples=(f"kvsim {name}", f"kvsim {name} --json"))
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.set_defaults(run=run)
