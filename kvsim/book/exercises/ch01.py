"""Chapter 1, *Bytes per token and capacity*: its exercises and predictions."""
from __future__ import annotations

import math
from collections.abc import Mapping

from kvsim.model.memory import KVBudget, kv_budget, kv_bytes_per_token
from kvsim.model.presets import get_model
from kvsim.model.spec import ModelSpec
from kvsim.units import GB, MB, GiB, MiB, cdiv, format_bytes

from .base import Exercise, Prediction
from .setups import BELGAVI, H100_8B, belgavi_budget, h100_budget

#: Qwen2.5-14B's config.json (Qwen/Qwen2.5-14B on the Hugging Face Hub): a GQA
#: model that is not a kvsim preset, so no chart of the chapter shows its answer.
QWEN_14B_CONFIG = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
    "hidden_size": 5120, "intermediate_size": 13824, "num_hidden_layers": 48,
    "num_attention_heads": 40, "num_key_value_heads": 8, "vocab_size": 152064,
    "max_position_embeddings": 32768, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
}

#: DeepSeek-V2-Lite's config.json (deepseek-ai/DeepSeek-V2-Lite), the fields MLA's
#: cache depends on: 27 layers, a 512-number latent and a 64-number rotary key.
DSV2_LITE_CONFIG = {
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
    "hidden_size": 2048, "intermediate_size": 10944, "moe_intermediate_size": 1408,
    "num_hidden_layers": 27, "num_attention_heads": 16, "num_key_value_heads": 16,
    "kv_lora_rank": 512, "q_lora_rank": None, "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 64,
    "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1,
    "vocab_size": 102400, "max_position_embeddings": 163840, "torch_dtype": "bfloat16",
}


def _spec(config: Mapping[str, object], name: str) -> ModelSpec:

    return ModelSpec.from_hf_config(config, name=name)


def _gqa_bytes() -> tuple[int, str]:

    m = _spec(QWEN_14B_CONFIG, "qwen2.5-14b")
    n = kv_bytes_per_token(m)
    return n, (f"2 x {m.kv_layers} layers x {m.num_kv_heads} KV heads x {m.head_dim} x 2 B "
               f"= {n:,} B ({format_bytes(n, 'KiB', 0)}) per token; the "
               f"{m.num_attention_heads} query heads share the {m.num_kv_heads} KV heads")


def _gqa_as_mha() -> int:
    m = _spec(QWEN_14B_CONFIG, "qwen2.5-14b")
    return _gqa_bytes()[0] * m.num_attention_heads // m.num_kv_heads


def _mla_bytes() -> tuple[int, str]:

    m = _spec(DSV2_LITE_CONFIG, "deepseek-v2-lite")
    n = kv_bytes_per_token(m)
    return n, (f"{m.kv_layers} layers x ({m.mla_kv_lora_rank} + {m.mla_rope_head_dim}) x 2 B = "
               f"{n:,} B per token: one latent per layer stands for the keys and values of "
               f"all {m.num_attention_heads} heads")


def _mla_with_factor_two() -> int:
    return 2 * _mla_bytes()[0]


def _mla_per_head() -> int:
    m = _spec(DSV2_LITE_CONFIG, "deepseek-v2-lite")
    return _mla_bytes()[0] * m.num_attention_heads


#: The utilisation of the "pool in GiB" exercise: not Belgavi's 0.60, whose pool
#: the chapter prints in GiB before the exercises.
POOL_GIB_UTIL = 0.50


def _pool_budget() -> KVBudget:

    return kv_budget(BELGAVI["gpu"], BELGAVI["model"], gpu_memory_utilization=POOL_GIB_UTIL)


def _pool_gib() -> tuple[float, str]:
    b = _pool_budget()
    v = b.kv_bytes / GiB
    return v, f"{b.kv_bytes:,} B / 2**30 = {v:.2f} GiB ({format_bytes(b.kv_bytes, 'GB')})"


def _pool_gb() -> float:
    return _pool_budget().kv_bytes / GB


def _pool_gib_scaled() -> float:
    # Belgavi's 0.60 pool scaled by 0.50 / 0.60, as if the weights shrank too.
    return belgavi_budget().kv_bytes / GiB * POOL_GIB_UTIL / BELGAVI["gpu_memory_utilization"]


def _fp8_tokens() -> tuple[int, str]:
    b = belgavi_budget("fp8")
    return b.tokens, (f"{b.blocks:,} blocks of {b.block_size} = {b.tokens:,} tokens at "
                      f"{b.kv_bytes_per_token:,} B each, twice the 16-bit pool")


def _fp8_tokens_decimal() -> float:
    # the pool / 0.25 MB, reading the 0.25 MiB per token as 0.25 MB.
    b = belgavi_budget("fp8")
    return b.kv_bytes / (b.kv_bytes_per_token / MiB * MB)


def _bf16_tokens() -> int:
    return belgavi_budget().tokens


#: The longer answers of the "blocks for a long answer" exercise (chapter 5's prompt change).
LONG_OUTPUT = 600


def _blocks_held() -> tuple[int, str]:
    b = belgavi_budget()
    length = BELGAVI["prompt_tokens"] + LONG_OUTPUT
    n = b.blocks_for(length)
    return n, (f"ceil({length:,} / {b.block_size}) = {n}; the last block has "
               f"{n * b.block_size - length} empty slots but is held whole")


def _blocks_floor() -> int:
    b = belgavi_budget()
    return (BELGAVI["prompt_tokens"] + LONG_OUTPUT) // b.block_size


def _max_num_seqs_fp8() -> tuple[int, str]:
    b = h100_budget("fp8")
    seq = H100_8B["p95_prompt_tokens"] + H100_8B["p95_output_tokens"]
    n = b.max_concurrent(seq)
    return n, (f"{b.blocks:,} blocks // {b.blocks_for(seq)} per request = {n}, "
               f"twice the 16-bit figure")


def _max_num_seqs_bf16() -> int:
    b = h100_budget()
    return b.max_concurrent(H100_8B["p95_prompt_tokens"] + H100_8B["p95_output_tokens"])


def _bytes_8b_kib() -> tuple[float, str]:

    m = get_model("llama-3.1-8b")
    n = kv_bytes_per_token(m)
    return n / 1024, (f"2 x {m.kv_layers} layers x {m.num_kv_heads} KV heads x {m.head_dim} x "
                      f"2 B = {n:,} B: the 32 query heads share 8 KV heads, a quarter of "
                      f"Llama-2-7B's 512 KiB")


def _a40_pool_gb() -> tuple[float, str]:
    b = belgavi_budget()
    return b.kv_bytes / GB, (f"CUDA's {format_bytes(b.gpu.memory_bytes, 'GB')} x 0.60 - "
                             f"{format_bytes(b.weight_bytes, 'GB')} of weights - "
                             f"{format_bytes(b.activation_bytes, 'GB')} measured reserve; the "
                             f"envelope's 13.3 GB assumes 48 GB and a 2 GB reserve")


def _belgavi_requests() -> tuple[int, str]:
    b = belgavi_budget()
    seq = BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"]
    n = b.max_concurrent(seq)
    return n, f"{b.blocks:,} blocks // {b.blocks_for(seq)} blocks per {seq:,}-token request"


def _belgavi_requests_today() -> int:
    return _belgavi_requests()[0]


def _h100_requests() -> tuple[int, str]:
    b = h100_budget()
    seq = H100_8B["p95_prompt_tokens"] + H100_8B["p95_output_tokens"]
    n = b.max_concurrent(seq)
    return n, (f"{b.blocks:,} blocks // {b.blocks_for(seq)} per request; vLLM V1's default "
               f"max_num_seqs on this GPU is {H100_8B['default_max_num_seqs']:,}")


#: The utilisation of the "what happens if" exercise (off the static twin's grid).
WHATIF_UTIL = 0.72


def _util_whatif_requests() -> tuple[int, str]:

    b = kv_budget(BELGAVI["gpu"], BELGAVI["model"], gpu_memory_utilization=WHATIF_UTIL)
    seq = BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"]
    n = b.max_concurrent(seq)
    extra = WHATIF_UTIL - BELGAVI["gpu_memory_utilization"]
    new = b.blocks - belgavi_budget().blocks
    return n, (f"{extra:.2f} more of {format_bytes(b.gpu.memory_bytes, 'GiB')} is "
               f"{format_bytes(round(b.gpu.memory_bytes * extra), 'GiB')}, all of it KV (the "
               f"weights and reserve do not grow): {new} more blocks of "
               f"{format_bytes(b.block_bytes, 'MiB', 0)}, {b.blocks:,} blocks // "
               f"{b.blocks_for(seq)} = {n}")


def _util_whatif_linear() -> int:
    # scaling the 0.60 capacity by 0.72 / 0.60, as if the weights shrank too
    return math.floor(_belgavi_requests()[0] * WHATIF_UTIL / BELGAVI["gpu_memory_utilization"])


def _block_32_budget() -> KVBudget:

    return kv_budget(BELGAVI["gpu"], BELGAVI["model"],
                     gpu_memory_utilization=BELGAVI["gpu_memory_utilization"], block_size=32)


def _block_32_requests() -> tuple[int, str]:
    b = _block_32_budget()
    seq = BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"]
    n = b.max_concurrent(seq)
    per = b.blocks_for(seq)
    return n, (f"{b.blocks:,} blocks of 32 // ceil({seq:,} / 32) = {per} per request = {n}: "
               f"a request now holds {per * 32:,} slots against {cdiv(seq, 16) * 16:,} with "
               f"blocks of 16, so the last, part-empty block wastes more")


def _block_32_doubled() -> int:
    # "twice the tokens per block, so twice the requests"
    return 2 * _belgavi_requests()[0]


# --- the slips each exercise's hints answer (values from kvsim, never typed) -----------

def _gqa_kib() -> float:
    # the answer in KiB, the unit the chapter's Predict box asked for
    return _gqa_bytes()[0] / 1024


def _gqa_one_layer() -> int:
    return _gqa_bytes()[0] // _spec(QWEN_14B_CONFIG, "qwen2.5-14b").kv_layers


def _mla_no_rope() -> int:
    # the latent alone, the rotary key left out
    m = _spec(DSV2_LITE_CONFIG, "deepseek-v2-lite")
    return m.kv_layers * m.mla_kv_lora_rank * 2


def _mla_kib() -> float:
    return _mla_bytes()[0] / 1024


def _mla_chapter_example() -> int:
    # DeepSeek-V3, the MLA model the chapter's chart and its eq-mla-bytes check use
    return kv_bytes_per_token(get_model("deepseek-v3"))


def _pool_gib_at_060() -> float:
    # the pool the chapter prints (at Belgavi's 0.60), not the exercise's 0.50
    return belgavi_budget().kv_bytes / GiB


def _pool_gib_no_reserve() -> float:
    b = _pool_budget()
    return (b.usable_bytes - b.weight_bytes) / GiB


def _fp8_blocks() -> int:
    return belgavi_budget("fp8").blocks


def _fp8_halved() -> float:
    # "FP8 halves": the tokens halved instead of the bytes per token
    return belgavi_budget().tokens / 2


def _blocks_answer_only() -> int:
    return cdiv(LONG_OUTPUT, belgavi_budget().block_size)


def _blocks_today() -> int:
    return belgavi_budget().blocks_for(BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"])


def _blocks_each_part() -> int:
    # prompt and answer rounded up separately, as if each started a block of its own
    b = belgavi_budget()
    return b.blocks_for(BELGAVI["prompt_tokens"]) + b.blocks_for(LONG_OUTPUT)


def _blocks_as_slots() -> int:
    return _blocks_held()[0] * belgavi_budget().block_size


def _max_num_seqs_prompts_fp8() -> int:
    # admission's ceiling: p95 prompts only, the chapter's prompt_ceiling with FP8
    b = h100_budget("fp8")
    return b.blocks // b.blocks_for(H100_8B["p95_prompt_tokens"])


def _util_whatif_budget() -> KVBudget:
    return kv_budget(BELGAVI["gpu"], BELGAVI["model"], gpu_memory_utilization=WHATIF_UTIL)


def _util_whatif_new_blocks_only() -> int:
    # only the blocks the extra 0.12 brings, divided by a request's blocks
    b = belgavi_budget()
    extra = _util_whatif_budget().blocks - b.blocks
    return extra // b.blocks_for(BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"])


def _block_32_same_blocks() -> int:
    # blocks of 32 per request, but the 16-token pool's block count kept
    seq = BELGAVI["prompt_tokens"] + BELGAVI["output_tokens"]
    return belgavi_budget().blocks // _block_32_budget().blocks_for(seq)


EXERCISES: list[Exercise] = [
    Exercise(
        id="ch01-gqa-bytes",
        question="KV cache bytes per token of Qwen2.5-14B (48 layers, 40 query heads, 8 KV heads "
                 "of 128, bf16)",
        kind="int", unit="bytes", solve=_gqa_bytes, derive=True,
        hint="2 (K and V) x layers x KV heads x head_dim x 2 bytes",
        traps=((lambda: _gqa_bytes()[0] // 2,
                "that is half the answer: every token stores a key AND a value"),
               (_gqa_as_mha,
                "you used the attention (query) heads; the cache stores only the KV heads (GQA)"),
               (_gqa_kib,
                "that is the answer in KiB, the Predict box's unit; the question asks bytes, "
                "and a KiB is 1,024 of them"),
               (_gqa_one_layer,
                "that is one layer's cache; every layer keeps its own keys and values")),
    ),
    Exercise(
        id="ch01-mla-bytes",
        question="KV cache bytes per token of DeepSeek-V2-Lite (MLA: 27 layers, kv_lora_rank 512, "
                 "qk_rope_head_dim 64, bf16)",
        kind="int", unit="bytes", solve=_mla_bytes, derive=True,
        hint="layers x (kv_lora_rank + qk_rope_head_dim) x 2 bytes",
        traps=((_mla_with_factor_two,
                "MLA stores one latent per layer, not a K and a V: no factor 2"),
               (_mla_per_head,
                "the latent is shared by all the heads: no head count"),
               (_mla_no_rope,
                "each layer also caches the small positional key (qk_rope_head_dim numbers) "
                "beside the latent"),
               (_mla_chapter_example,
                "that is DeepSeek-V3's, the chapter's example with its 61 layers; use "
                "DeepSeek-V2-Lite's layers"),
               (_mla_kib,
                "that is in KiB; the question asks bytes, and a KiB is 1,024 of them")),
    ),
    Exercise(
        id="ch01-pool-gib",
        question="the Belgavi KV pool in GiB at gpu_memory_utilization 0.50, from the memory CUDA "
                 "reports, the weights and the reserve in GiB",
        kind="float", unit="GiB", solve=_pool_gib, abs_tol=0.02, derive=True,
        hint="by eq-kv-pool: the utilisation times the memory CUDA reports, minus the weights "
             "and the measured reserve, all in GiB (2**30 bytes)",
        traps=((_pool_gb, "that is the pool in GB (10**9 bytes); a GiB is 2**30 bytes"),
               (_pool_gib_scaled,
                "that scales the 0.60 pool by 0.50 / 0.60; the weights and the reserve do not "
                "shrink, so the pool loses the whole 0.10 of the GPU"),
               (_pool_gib_at_060,
                "that is the pool at Belgavi's 0.60, the chapter's; at 0.50 vLLM may use a tenth "
                "of the card less"),
               (_pool_gib_no_reserve,
                "subtract the measured reserve (activations, the CUDA context) as well as the "
                "weights")),
    ),
    Exercise(
        id="ch01-fp8-tokens",
        question="tokens in the Belgavi KV pool with an FP8 cache, from its blocks in fp16",
        kind="int", unit="tokens", solve=_fp8_tokens, rel_tol=0.005, derive=True,
        hint="FP8 stores one byte a number, so by eq-kv-bytes a token costs half: the same pool "
             "holds twice the blocks vLLM logs (its null block aside), 16 tokens each",
        traps=((_bf16_tokens,
                "that is the 16-bit pool; with FP8 a token costs half the bytes, so the same "
                "pool holds more tokens"),
               (_fp8_tokens_decimal,
                "that is the decimal reading (0.25 MB per token); a token costs 0.25 MiB = 262,144 B"),
               (_fp8_blocks, "that is in blocks; the question asks tokens, 16 to a block"),
               (_fp8_halved,
                "FP8 halves the bytes per token, not the tokens: the same pool holds more "
                "of them, not fewer")),
    ),
    Exercise(
        id="ch01-blocks-held",
        question="KV blocks of 16 that hold 850 + 600 tokens of cache",
        kind="int", unit="blocks", solve=_blocks_held, derive=True,
        hint="a request of L tokens holds ceil(L / block_size) blocks; L is prompt plus answer",
        traps=((_blocks_floor, "a partly filled last block is still a whole block: round up"),
               (_blocks_answer_only,
                "the prompt's tokens stay in the cache too: L is prompt plus answer"),
               (_blocks_today,
                "that is today's 850 + 250; the question has 600-token answers"),
               (_blocks_each_part,
                "the answer continues in the prompt's last block: round up the sum once, not "
                "each part"),
               (_blocks_as_slots, "that is in token slots; the question asks blocks of 16")),
    ),
    Exercise(
        id="ch01-max-num-seqs",
        question="max_num_seqs for Llama-3.1-8B on an H100 80 GB at 0.90 with an FP8 cache, p95 "
                 "6k, from the pool's blocks in bf16",
        kind="int", unit="sequences", solve=_max_num_seqs_fp8, abs_tol=1, derive=True,
        hint="FP8 halves a block's bytes, so the pool holds twice the blocks (V1's null block "
             "aside); by eq-requests divide them by the blocks of one p95 request, prompt plus "
             "answer, and round down",
        traps=((_max_num_seqs_bf16, "that is the bf16 figure; the question asks for an FP8 cache"),
               (lambda: H100_8B["default_max_num_seqs"],
                "that is vLLM V1's default on an H100, the cap that never binds; size "
                "max_num_seqs from the capacity at the p95 length"),
               (_max_num_seqs_prompts_fp8,
                "that is how many p95 prompts fit, where admission stops; a running sequence "
                "needs room for its whole request, prompt plus answer")),
    ),
    Exercise(
        id="ch01-whatif-util",
        question="concurrent Belgavi requests (850 + 250) at gpu_memory_utilization 0.72",
        kind="int", unit="requests", solve=_util_whatif_requests, derive=True,
        hint="by eq-kv-pool the extra 0.12 of the card all goes to the pool: turn it into blocks "
             "of 8 MiB, add them to today's, then divide by a request's blocks",
        traps=((_util_whatif_linear,
                "that scales the whole capacity by 0.72 / 0.60; only the KV pool grows, the "
                "weights and the reserve stay the same size"),
               (_belgavi_requests_today,
                "that is the capacity at 0.60; at 0.72 the pool gains 0.12 of the card"),
               (_util_whatif_new_blocks_only,
                "that counts only the new blocks; the pool keeps the ones it had at 0.60")),
    ),
    Exercise(
        id="ch01-whatif-block-size",
        question="concurrent Belgavi requests (850 + 250) with block_size 32 instead of 16",
        kind="int", unit="requests", solve=_block_32_requests, derive=True,
        hint="a block of 32 tokens takes twice the bytes, so the same pool has half the blocks "
             "(V1's null block aside); each request rounds up to whole blocks of 32",
        traps=((_belgavi_requests_today,
                "that is the figure for blocks of 16; with blocks of 32 the pool has half as many "
                "blocks and each request rounds up to a multiple of 32 tokens"),
               (_block_32_doubled,
                "a block of 32 holds twice the tokens, but the pool has half as many blocks"),
               (_block_32_same_blocks,
                "the pool's bytes do not change, so blocks twice as large are half as many: "
                "halve the block count before dividing")),
    ),
]

PREDICTIONS: list[Prediction] = [
    Prediction(id="ch01-predict-gqa", unit="KiB",
               question="KV cache per token of Llama-3.1-8B (32 layers, 8 KV heads of 128, bf16)",
               solve=_bytes_8b_kib),
    Prediction(id="ch01-predict-pool", unit="GB",
               question="the Belgavi KV pool that vLLM V1 computes on a real A40 at 0.60",
               solve=_a40_pool_gb, rel_tol=0.05),
    Prediction(id="ch01-predict-requests", unit="requests",
               question="how many 850 + 250-token requests fit in that pool at once",
               solve=_belgavi_requests),
    Prediction(id="ch01-predict-h100", unit="requests",
               question="how many p95 requests (2,000 + 4,000 tokens) of Llama-3.1-8B fit on an "
                        "H100 at 0.90",
               solve=_h100_requests),
]


