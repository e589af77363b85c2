"""``kvsim capacity``: KV bytes per token, the pool, its blocks and tokens, and concurrency.

Chapter 1's question, "is my cache simply too small?", answered from the model,
the GPU and the utilisation (or from the pool a real server logged).
"""
from __future__ import annotations

import argparse

from .arguments import (
    Subcommands,
    UsageError,
    add_pool_flags,
    add_subcommand,
    block_size,
    max_model_len,
    seq_len,
    tensor_parallel,
    utilization,
)
from .names import canonical_args, named_model
from .output import dump

__all__ = ["add_parser", "run", "EXAMPLES"]

#: Real command lines, shown at the end of ``kvsim capacity --help``.
EXAMPLES = (
    "kvsim capacity --model llama-2-7b --gpu a40-48gb --util 0.60 --seq-len 1100",
    "kvsim capacity --model llama-3.1-8b --gpu h100-80gb --kv-cache-tokens 448367 "
    "--max-model-len 20000 --seq-len 6000",
    "kvsim capacity --model llama-3.1-8b --gpu h100-80gb --util 0.9 --kv-dtype fp8 --json",
)


def add_parser(subparsers: Subcommands) -> argparse.ArgumentParser:
    """Register ``capacity`` and its flags."""
    parser = add_subcommand(subparsers, "capacity", examples=EXAMPLES, rules=True,
                            help="KV bytes per token, pool, blocks, tokens, concurrency")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="model preset name (see `kvsim models`)")
    source.add_argument("--config", metavar="PATH", help="a Hugging Face config.json")
    parser.add_argument("--gpu", required=True, help="GPU preset name (see `kvsim gpus`)")
    parser.add_argument("--util", type=utilization, metavar="F", default=None,
                        help="gpu_memory_utilization in (0, 1] (required unless the pool is pinned)")
    parser.add_argument("--kv-dtype", default=None, metavar="D", help="fp32, fp16, bf16 or fp8 "
                        "(default: the model's dtype)")
    parser.add_argument("--block-size", type=block_size, default=16, metavar="N",
                        help="tokens per KV block (default 16)")
    parser.add_argument("--seq-len", type=seq_len, default=None, metavar="N",
                        help="also report how many sequences of N tokens fit")
    parser.add_argument("--tp", type=tensor_parallel, default=1, metavar="N",
                        help="tensor_parallel_size")
    parser.add_argument("--max-model-len", type=max_model_len, default=None, metavar="N",
                        help="the server's max_model_len (default: the model's): the start-up "
                             "line kvsim predicts, and how --kv-cache-tokens is read")
    add_pool_flags(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> str:
    """The budget as a table (or JSON), with ``--seq-len``'s concurrency when asked."""
    from kvsim.model.memory import kv_budget, pinned_budget
    from kvsim.model.presets import get_model
    from kvsim.model.vllm_defaults import VLLM_VERSION_DEFAULT

    canonical_args(args)
    model = get_model(named_model(args))
    if args.seq_len is not None:
        model.check_seq_len(args.seq_len, "--seq-len")
    if args.max_model_len is not None:
        model.check_seq_len(args.max_model_len, "--max-model-len")
    length = args.max_model_len or model.max_model_len
    engine = args.engine or "v1"
    pinned = args.num_gpu_blocks is not None or args.kv_cache_tokens is not None
    if pinned:
        if args.util is not None:
            raise UsageError("kvsim capacity: error: --util with a pinned pool: expected either "
                             "--util F or --num-gpu-blocks/--kv-cache-tokens, not both")
        budget = pinned_budget(args.gpu, model, num_gpu_blocks=args.num_gpu_blocks,
                               kv_cache_tokens=args.kv_cache_tokens, kv_dtype=args.kv_dtype,
                               block_size=args.block_size, tensor_parallel_size=args.tp,
                               engine=engine, max_model_len=length)
    else:
        if args.util is None:
            raise UsageError("kvsim capacity: error: the following arguments are required: "
                             "--util (or pin the pool with --num-gpu-blocks or --kv-cache-tokens)")
        budget = kv_budget(args.gpu, model, gpu_memory_utilization=args.util,
                           kv_dtype=args.kv_dtype, block_size=args.block_size,
                           tensor_parallel_size=args.tp, engine=engine)
    if args.json:
        out = dict(model=budget.model.name, gpu=budget.gpu.name, engine=budget.engine,
                   gpu_memory_utilization=None if pinned else budget.gpu_memory_utilization,
                   tensor_parallel_size=budget.tensor_parallel_size, kv_dtype=budget.kv_dtype,
                   block_size=budget.block_size, max_model_len=length,
                   usable_bytes=budget.usable_bytes, weight_bytes=budget.weight_bytes,
                   activation_bytes=budget.activation_bytes,
                   peak_activation_bytes=budget.peak_activation_bytes,
                   non_torch_bytes=budget.non_torch_bytes,
                   kv_bytes_per_token=budget.kv_bytes_per_token,
                   kv_bytes=budget.kv_bytes, block_bytes=budget.block_bytes,
                   vllm_blocks=budget.vllm_blocks, blocks=budget.blocks, tokens=budget.tokens,
                   log_tokens=budget.log_tokens, pinned=pinned,
                   startup_log=budget.startup_log(length) if engine == "v1" else None)
        if args.seq_len is not None:
            out.update(seq_len=args.seq_len, max_concurrent=budget.max_concurrent(args.seq_len))
        return dump(out)
    text = budget.describe()
    if engine == "v1":
        text += "".join(f"\nvLLM {VLLM_VERSION_DEFAULT} logs  {line}" for line in budget.startup_log(length))
    if args.seq_len is not None:
        text += (f"\nmax_concurrent  {budget.max_concurrent(args.seq_len):,} sequences of "
                 f"{args.seq_len:,} tokens "
                 f"({budget.blocks_for(args.seq_len) + budget.state_blocks_per_request:,} "
                 f"blocks each)")
    return text
