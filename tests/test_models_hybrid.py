"""Every way a real config.json declares its layer kinds (chapter 1, *Bytes per token and capacity*).

Each test is built from the figures of a published config.json (the model id
is in its docstring; only the fields kvsim reads are inlined, as facts) and
checks the layer-kind counts, the KV bytes per token, the fixed per-request
state and, where the publisher gives one, the parameter count (within 3 %).
"""
from __future__ import annotations

import json
import struct
from collections import Counter

import pytest

from kvsim.errors import KvsimError
from kvsim.model.config_json import text_config
from kvsim.model.dtypes import DTYPE_BYTES
from kvsim.model.layer_kinds import LAYER_KINDS, layer_ffns, layer_kinds
from kvsim.model.parameters import estimate_params
from kvsim.model.presets import get_model, preset_config
from kvsim.model.spec import ModelSpec


def kinds_of(cfg: dict) -> Counter:
    text = text_config(cfg)
    return Counter(layer_kinds(text, text["num_hidden_layers"]))


# ----------------------------------------------------------------------------- configs

NEMOTRON_H_8B = dict(
    model_type="nemotron_h", num_hidden_layers=52, hidden_size=4096,
    hybrid_override_pattern="M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-",
    num_attention_heads=32, num_key_value_heads=8, attention_head_dim=128,
    intermediate_size=21504, mlp_hidden_act="relu2", mamba_num_heads=128, mamba_head_dim=64,
    ssm_state_size=128, n_groups=8, conv_kernel=4, expand=2, use_conv_bias=True, use_bias=False,
    vocab_size=131072, max_position_embeddings=8192, tie_word_embeddings=False,
    torch_dtype="bfloat16")

NEMOTRON_3_NANO_PATTERN = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
NEMOTRON_3_NANO = dict(
    model_type="nemotron_h", num_hidden_layers=52, hidden_size=2688, head_dim=128,
    num_attention_heads=32, num_key_value_heads=2, hybrid_override_pattern=NEMOTRON_3_NANO_PATTERN,
    n_routed_experts=128, n_shared_experts=1, num_experts_per_tok=6, moe_intermediate_size=1856,
    moe_shared_expert_intermediate_size=3712, mamba_num_heads=64, mamba_head_dim=64,
    ssm_state_size=128, n_groups=8, conv_kernel=4, mamba_ssm_cache_dtype="float32",
    vocab_size=131072, max_position_embeddings=262144, tie_word_embeddings=False,
    torch_dtype="bfloat16")

JAMBA_V01 = dict(
    model_type="jamba", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
    num_key_value_heads=8, intermediate_size=14336, attn_layer_period=8, attn_layer_offset=4,
    expert_layer_period=2, expert_layer_offset=1, num_experts=16, num_experts_per_tok=2,
    mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=256, mamba_conv_bias=True,
    mamba_proj_bias=False, vocab_size=65536, max_position_embeddings=262144,
    tie_word_embeddings=False, torch_dtype="bfloat16")

BAMBA_9B = dict(
    model_type="bamba", num_hidden_layers=32, hidden_size=4096, num_attention_heads=32,
    num_key_value_heads=8, intermediate_size=14336, attn_layer_indices=[9, 18, 27],
    mamba_n_heads=128, mamba_d_head=64, mamba_n_groups=1, mamba_d_state=128, mamba_d_conv=4,
    mamba_expand=2, vocab_size=128256, tie_word_embeddings=False, torch_dtype="bfloat16")

FALCON_H1_7B = dict(
    model_type="falcon_h1", num_hidden_layers=44, hidden_size=3072, num_attention_heads=12,
    num_key_value_heads=2, head_dim=128, intermediate_size=12288, vocab_size=130048,
    mamba_d_state=256, mamba_n_groups=1, mamba_n_heads=24, mamba_d_head=128, mamba_d_ssm=3072,
    mamba_expand=2, mamba_d_conv=4, max_position_embeddings=262144, tie_word_embeddings=False,
    torch_dtype="bfloat16")

MINIMAX_M1 = dict(
    model_type="minimax_m1", num_hidden_layers=80, hidden_size=6144, intermediate_size=9216,
    num_attention_heads=64, num_key_value_heads=8, head_dim=128, attn_type_list=([0] * 7 + [1]) * 10,
    num_local_experts=32, num_experts_per_tok=2, shared_intermediate_size=0, vocab_size=200064,
    max_position_embeddings=10240000, tie_word_embeddings=False, torch_dtype="bfloat16")

GPT_OSS_20B = dict(
    model_type="gpt_oss", num_hidden_layers=24, hidden_size=2880, num_attention_heads=64,
    num_key_value_heads=8, head_dim=64, num_local_experts=32, num_experts_per_tok=4,
    intermediate_size=2880, vocab_size=201088, sliding_window=128, attention_bias=True,
    layer_types=["sliding_attention", "full_attention"] * 12, max_position_embeddings=131072,
    rope_scaling=dict(rope_type="yarn", factor=32.0, original_max_position_embeddings=4096),
    tie_word_embeddings=False, torch_dtype="bfloat16")

LFM2_1_2B = dict(
    model_type="lfm2", num_hidden_layers=16, hidden_size=2048, num_attention_heads=32,
    num_key_value_heads=8, full_attn_idxs=[2, 5, 8, 10, 12, 14], conv_L_cache=3, conv_bias=False,
    block_ff_dim=12288, block_auto_adjust_ff_dim=True, block_ffn_dim_multiplier=1.0,
    block_multiple_of=256, vocab_size=65536, max_position_embeddings=128000, tie_embedding=True,
    torch_dtype="bfloat16")

RECURRENTGEMMA_2B = dict(
    model_type="recurrent_gemma", num_hidden_layers=26, hidden_size=2560, intermediate_size=15360,
    num_attention_heads=10, num_key_value_heads=1, lru_width=2560, attention_window_size=2048,
    conv1d_width=4, block_types=["recurrent", "recurrent", "attention"], vocab_size=256000,
    torch_dtype="bfloat16")

LLAMA4_SCOUT = {"model_type": "llama4", "torch_dtype": "bfloat16", "text_config": dict(
    model_type="llama4_text", num_hidden_layers=48, hidden_size=5120, num_attention_heads=40,
    num_key_value_heads=8, head_dim=128, attention_chunk_size=8192, interleave_moe_layer_step=1,
    intermediate_size=8192, intermediate_size_mlp=16384, num_local_experts=16,
    num_experts_per_tok=1, use_qk_norm=True, vocab_size=202048, max_position_embeddings=10485760,
    rope_scaling=dict(rope_type="llama3", factor=16.0, original_max_position_embeddings=8192),
    torch_dtype="bfloat16")}

GRANITE_4_H_TINY = dict(
    model_type="granitemoehybrid", num_hidden_layers=40, hidden_size=1536, num_attention_heads=12,
    num_key_value_heads=4, intermediate_size=512, shared_intermediate_size=1024,
    num_local_experts=64, num_experts_per_tok=6, mamba_d_state=128, mamba_n_groups=1,
    mamba_n_heads=48, mamba_d_head=64, mamba_expand=2, mamba_d_conv=4,
    layer_types=(["mamba"] * 5 + ["attention"] + ["mamba"] * 9 + ["attention"] + ["mamba"] * 9
                 + ["attention"] + ["mamba"] * 9 + ["attention"] + ["mamba"] * 4),
    vocab_size=100352, max_position_embeddings=131072, tie_word_embeddings=True,
    torch_dtype="bfloat16")

ZAMBA2_7B = dict(
    model_type="zamba2", num_hidden_layers=81, hidden_size=3584, num_attention_heads=32,
    num_key_value_heads=32, ffn_hidden_size=14336, expansion_factor=2, conv_dimension=4,
    state_size=64, mamba_headdim=64, mamba_ngroups=2, num_mem_blocks=2, lora_rank=128,
    use_shared_attention_lora=False, add_bias_linear=False,
    layers_block_type=(["mamba"] * 6 + ["hybrid"] + ["mamba"] * 4 + ["hybrid"]
                       + (["mamba"] * 5 + ["hybrid"]) * 11 + ["mamba"] * 3),
    vocab_size=32000, max_position_embeddings=4096, torch_dtype="bfloat16")

QWEN3_5_397B = {"model_type": "qwen3_5_moe", "tie_word_embeddings": False, "text_config": dict(
    model_type="qwen3_5_moe_text", num_hidden_layers=60, hidden_size=4096, num_attention_heads=32,
    num_key_value_heads=2, head_dim=256, attn_output_gate=True, attention_bias=False,
    layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 15, full_attention_interval=4,
    linear_conv_kernel_dim=4, linear_key_head_dim=128, linear_num_key_heads=16,
    linear_num_value_heads=64, linear_value_head_dim=128, num_experts=512, num_experts_per_tok=10,
    moe_intermediate_size=1024, shared_expert_intermediate_size=1024, mlp_only_layers=[],
    vocab_size=248320, max_position_embeddings=262144, dtype="bfloat16")}

MAMBA_2_8B = dict(
    model_type="mamba", num_hidden_layers=64, hidden_size=2560, intermediate_size=5120,
    state_size=16, conv_kernel=4, expand=2, time_step_rank=160, use_bias=False, use_conv_bias=True,
    vocab_size=50280, tie_word_embeddings=True, torch_dtype="float32")

MAMBA_CODESTRAL = dict(
    model_type="mamba2", num_hidden_layers=64, hidden_size=4096, num_heads=128, head_dim=64,
    state_size=128, n_groups=8, expand=2, conv_kernel=4, vocab_size=32768,
    tie_word_embeddings=False, torch_dtype="bfloat16")

FALCON_MAMBA_7B = dict(
    model_type="falcon_mamba", num_hidden_layers=64, hidden_size=4096, intermediate_size=8192,
    state_size=16, conv_kernel=4, expand=16, time_step_rank=256, use_bias=False,
    use_conv_bias=True, vocab_size=65024, tie_word_embeddings=False, torch_dtype="bfloat16")


# ----------------------------------------------------------------------------- one test per style


def test_hybrid_override_pattern_nemotron_h_8b():
    """nvidia/Nemotron-H-8B-Base-8K: M Mamba2, * attention, - MLP; one mixer or MLP a layer; 8B."""
    assert kinds_of(NEMOTRON_H_8B) == {"mamba": 24, "mlp": 24, "full": 4}
    m = ModelSpec.from_hf_config(NEMOTRON_H_8B)
    assert (m.num_layers, m.kv_layers, m.head_dim) == (52, 4, 128)
    assert m.kv_bytes_per_token() == 4 * 2 * 8 * 128 * 2 == 16_384
    # per Mamba2 layer: conv 3 x (8192 + 2 x 8 x 128) in bf16, SSM 128 x 64 x 128 in fp32
    # (vLLM's NemotronH hook defaults mamba_ssm_cache_dtype to float32)
    assert m.state_bytes_per_request == 24 * (3 * 10_240 * 2 + 128 * 64 * 128 * 4) == 102_137_856
    assert m.num_params == pytest.approx(8e9, rel=0.03)


def test_nemotron_3_nano_moe_pattern_and_block_list_agree():
    """nvidia/Nemotron-3-Nano-30B-A3B: E marks MoE layers (relu2 experts); 31.6B total, ~3.6B active.

    The same stack spelled as ``layers_block_type`` (mamba/moe/attention, as
    newer Nemotron-H configs do) gives the same spec.
    """
    assert kinds_of(NEMOTRON_3_NANO) == {"mamba": 23, "mlp": 23, "full": 6}
    m = ModelSpec.from_hf_config(NEMOTRON_3_NANO)
    assert m.kv_bytes_per_token() == 6 * 2 * 2 * 128 * 2 == 6144
    assert m.state_bytes_per_request == 23 * (3 * (4096 + 2 * 8 * 128) * 2 + 64 * 64 * 128 * 4)
    assert m.num_params == pytest.approx(31.6e9, rel=0.03)
    assert m.active_params == pytest.approx(3.6e9, rel=0.03)
    assert m.compute_shape().num_experts == 128 and m.compute_shape().experts_per_token == 6
    names = {"M": "mamba", "E": "moe", "*": "attention", "-": "mlp"}
    listed = dict(NEMOTRON_3_NANO, layers_block_type=[names[c] for c in NEMOTRON_3_NANO_PATTERN])
    del listed["hybrid_override_pattern"]
    assert ModelSpec.from_hf_config(listed) == m


def test_attn_layer_period_and_offset_jamba():
    """ai21labs/Jamba-v0.1: attention at i % 8 == 4, MoE at i % 2 == 1; 52B total, 12B active."""
    assert kinds_of(JAMBA_V01) == {"mamba": 28, "full": 4}
    m = ModelSpec.from_hf_config(JAMBA_V01)
    assert m.kv_bytes_per_token() == 4 * 2 * 8 * 128 * 2 == 16_384
    # Mamba1: conv (4 - 1) x 8192 + SSM 8192 x 16, bf16
    assert m.state_bytes_per_request == 28 * (3 * 8192 + 8192 * 16) * 2 == 8_716_288
    assert m.num_params == pytest.approx(52e9, rel=0.03)
    assert m.active_params == pytest.approx(12e9, rel=0.03)
    # transformers' JambaConfig.layers_block_type spells the same stack
    listed = dict(JAMBA_V01, layers_block_type=["attention" if i % 8 == 4 else "mamba"
                                                for i in range(32)])
    del listed["attn_layer_period"], listed["attn_layer_offset"]
    assert ModelSpec.from_hf_config(listed) == m


def test_attn_layer_indices_bamba():
    """ibm-fms/Bamba-9B: attention at layers 9, 18, 27, Mamba2 elsewhere; 9.78B (model card)."""
    assert kinds_of(BAMBA_9B) == {"mamba": 29, "full": 3}
    m = ModelSpec.from_hf_config(BAMBA_9B)
    assert m.kv_bytes_per_token() == 3 * 2 * 8 * 128 * 2 == 12_288
    assert m.state_bytes_per_request == 29 * (3 * (8192 + 2 * 128) + 128 * 64 * 128) * 2
    assert m.num_params == pytest.approx(9.78e9, rel=0.03)


def test_falcon_h1_every_layer_attends_beside_mamba2():
    """tiiuae/Falcon-H1-7B-Base: parallel hybrid, attention AND a Mamba2 mixer in each of 44 layers."""
    assert kinds_of(FALCON_H1_7B) == {"hybrid": 44}
    m = ModelSpec.from_hf_config(FALCON_H1_7B)
    assert m.kv_layers == 44
    assert m.kv_bytes_per_token() == 44 * 2 * 2 * 128 * 2 == 45_056
    assert m.state_bytes_per_request == 44 * (3 * (3072 + 2 * 256) + 24 * 128 * 256) * 2
    assert 7.0e9 < m.num_params < 8.0e9          # "7B"; the exact published count was not verified


def test_attn_type_list_minimax():
    """MiniMaxAI/MiniMax-M1 (MiniMax-Text-01's architecture): 1 softmax, 0 lightning; 456B / 45.9B."""
    assert kinds_of(MINIMAX_M1) == {"linear": 70, "full": 10}
    m = ModelSpec.from_hf_config(MINIMAX_M1)
    assert m.kv_bytes_per_token() == 10 * 2 * 8 * 128 * 2 == 40_960
    # lightning attention keeps heads x head_dim x head_dim per layer
    assert m.state_bytes_per_request == 70 * 64 * 128 * 128 * 2 == 146_800_640
    est = estimate_params(MINIMAX_M1)
    assert est.total == pytest.approx(456e9, rel=0.03)
    assert est.active - est.embedding == pytest.approx(45.9e9, rel=0.03)   # the card's 45.9B


def test_layer_types_sliding_and_moe_gpt_oss_20b():
    """openai/gpt-oss-20b: alternating 128-token sliding and full layers; 21B total, 3.6B active."""
    assert kinds_of(GPT_OSS_20B) == {"sliding": 12, "full": 12}
    m = ModelSpec.from_hf_config(GPT_OSS_20B)
    assert (m.sliding_window, m.sliding_window_layers) == (128, 12)
    assert m.kv_bytes_per_token() == 24 * 2 * 8 * 64 * 2 == 49_152
    assert m.state_bytes_per_request == 0
    assert m.max_model_len == 131_072                # yarn: 4096 x 32, as vLLM derives it
    assert m.num_params == pytest.approx(21e9, rel=0.03)
    # OpenAI's 3.6B active counts the output head but not the input embedding
    assert m.active_params - 201_088 * 2880 == pytest.approx(3.6e9, rel=0.03)


def test_full_attn_idxs_and_layer_types_lfm2():
    """LiquidAI/LFM2-1.2B: short-conv layers and 6 attention layers; 1,170,340,608 parameters."""
    assert kinds_of(LFM2_1_2B) == {"conv": 10, "full": 6}
    m = ModelSpec.from_hf_config(LFM2_1_2B)
    assert m.kv_bytes_per_token() == 6 * 2 * 8 * 64 * 2 == 12_288
    assert m.state_bytes_per_request == 10 * 2048 * (3 - 1) * 2 == 81_920
    assert m.num_params == 1_170_340_608             # block_ff_dim 12288 -> 8192 (auto-adjusted)
    listed = dict(LFM2_1_2B, layer_types=["full_attention" if i in (2, 5, 8, 10, 12, 14) else "conv"
                                          for i in range(16)])
    del listed["full_attn_idxs"]
    assert ModelSpec.from_hf_config(listed) == m


def test_block_types_recurrentgemma():
    """google/recurrentgemma-2b: (recurrent, recurrent, attention) repeated, local attention; 2.7B."""
    assert kinds_of(RECURRENTGEMMA_2B) == {"recurrent": 18, "sliding": 8}
    m = ModelSpec.from_hf_config(RECURRENTGEMMA_2B)
    assert (m.sliding_window, m.sliding_window_layers, m.kv_layers) == (2048, 8, 8)
    assert m.kv_bytes_per_token() == 8 * 2 * 1 * 256 * 2 == 8192
    assert m.state_bytes_per_request == 18 * (3 * 2560 + 2560) * 2 == 368_640
    est = estimate_params(RECURRENTGEMMA_2B)
    assert est.total == pytest.approx(2.7e9, rel=0.03)
    assert est.total - est.embedding == pytest.approx(2.0e9, rel=0.03)     # 2.0B non-embedding


def test_no_rope_layers_chunked_attention_llama4_scout():
    """meta-llama/Llama-4-Scout-17B-16E: RoPE layers attend in 8192-token chunks, every 4th is global."""
    assert kinds_of(LLAMA4_SCOUT) == {"chunked": 36, "full": 12}
    m = ModelSpec.from_hf_config(LLAMA4_SCOUT)
    assert (m.sliding_window, m.sliding_window_layers) == (8192, 36)
    assert m.kv_bytes_per_token() == 48 * 2 * 8 * 128 * 2 == 196_608
    assert m.kv_bytes_for_sequence(20_000) == 2 * 8 * 128 * 2 * (12 * 20_000 + 36 * 8192)
    assert m.max_model_len == 10_485_760             # llama3 rope scaling is not applied again
    assert m.num_params == pytest.approx(109e9, rel=0.03)
    assert m.active_params == pytest.approx(17e9, rel=0.03)
    explicit = json.loads(json.dumps(LLAMA4_SCOUT))
    explicit["text_config"]["no_rope_layers"] = [int((i + 1) % 4 != 0) for i in range(48)]
    assert ModelSpec.from_hf_config(explicit) == m


def test_layer_types_mamba_granite_4_h_tiny():
    """ibm-granite/granite-4.0-h-tiny: layer_types mamba/attention, MoE + shared MLP each layer; 7B."""
    assert kinds_of(GRANITE_4_H_TINY) == {"mamba": 36, "full": 4}
    m = ModelSpec.from_hf_config(GRANITE_4_H_TINY)
    assert m.kv_bytes_per_token() == 4 * 2 * 4 * 128 * 2 == 8192
    assert m.state_bytes_per_request == 36 * (3 * (3072 + 256) + 48 * 64 * 128) * 2
    assert m.num_params == pytest.approx(7e9, rel=0.03)
    assert m.active_params < m.num_params / 4


def test_layers_block_type_hybrid_zamba2():
    """Zyphra/Zamba2-7B: 13 hybrid layers run a shared attention block (2 x hidden) beside Mamba2."""
    assert kinds_of(ZAMBA2_7B) == {"mamba": 68, "hybrid": 13}
    m = ModelSpec.from_hf_config(ZAMBA2_7B)
    assert (m.kv_layers, m.head_dim) == (13, 224)    # attention_head_dim = 2 x 3584 / 32
    assert m.kv_bytes_per_token() == 13 * 2 * 32 * 224 * 2 == 372_736
    assert m.state_bytes_per_request == 81 * (3 * (7168 + 2 * 2 * 64) + 112 * 64 * 64) * 2
    assert 7.0e9 < m.num_params < 7.8e9             # "7B"; the exact published count was not verified


def test_layer_types_linear_attention_qwen3_5():
    """Qwen/Qwen3.5-397B-A17B: gated delta net + gated full attention, 1 in 4; 397B total, 17B active."""
    assert kinds_of(QWEN3_5_397B) == {"linear": 45, "full": 15}
    m = ModelSpec.from_hf_config(QWEN3_5_397B)
    assert m.kv_bytes_per_token() == 15 * 2 * 2 * 256 * 2 == 30_720
    assert m.state_bytes_per_request == 45 * (64 * 128 * 128 + (2 * 16 * 128 + 64 * 128) * 3) * 2
    assert m.num_params == pytest.approx(397e9, rel=0.03)
    assert m.active_params == pytest.approx(17e9, rel=0.03)


@pytest.mark.parametrize("cfg, published, state", [
    (MAMBA_2_8B, 2.8e9, 64 * (3 * 5120 + 5120 * 16) * 2),
    (MAMBA_CODESTRAL, 7_285_403_648, 64 * (3 * (8192 + 2 * 8 * 128) + 128 * 64 * 128) * 2),
    (FALCON_MAMBA_7B, 7.27e9, 64 * (3 * 8192 + 8192 * 16) * 2),
], ids=["state-spaces/mamba-2.8b-hf", "mistralai/Mamba-Codestral-7B-v0.1", "tiiuae/falcon-mamba-7b"])
def test_pure_mamba_keeps_no_kv_cache(cfg, published, state):
    """No attention layer: a paged KV simulation does not apply; the error gives the fixed state."""
    assert set(kinds_of(cfg)) == {"mamba"}
    with pytest.raises(KvsimError, match=rf"no attention layer holding a KV cache \(64 mamba "
                                         rf"layers\).*state of {state:,} bytes") as exc:
        ModelSpec.from_hf_config(cfg)
    assert "\n" not in str(exc.value)
    assert estimate_params(cfg).total == pytest.approx(published, rel=0.03)


def test_codestral_mamba_estimate_is_exact():
    """mistralai/Mamba-Codestral-7B-v0.1's model card: 7,285,403,648 parameters."""
    assert estimate_params(MAMBA_CODESTRAL).total == 7_285_403_648


@pytest.mark.parametrize("cfg, expected", [
    (dict(model_type="cohere2", num_hidden_layers=32, sliding_window=4096, sliding_window_pattern=4),
     {"sliding": 24, "full": 8}),                  # CohereForAI/c4ai-command-r7b-12-2024
    (dict(model_type="gemma3_text", num_hidden_layers=62, sliding_window=1024,
          sliding_window_pattern=6), {"sliding": 52, "full": 10}),     # google/gemma-3-27b-it
    (dict(model_type="qwen2", num_hidden_layers=28, sliding_window=131072, max_window_layers=28,
          use_sliding_window=False), {"full": 28}),                      # Qwen/Qwen2.5-7B
    (dict(model_type="qwen2", num_hidden_layers=28, sliding_window=4096, max_window_layers=20,
          use_sliding_window=True), {"full": 20, "sliding": 8}),
    (dict(model_type="mistral", num_hidden_layers=32, sliding_window=4096), {"sliding": 32}),
    (dict(model_type="gemma2", num_hidden_layers=42, sliding_window=4096), {"sliding": 21, "full": 21}),
])
def test_sliding_window_families(cfg, expected):
    assert kinds_of(cfg) == expected


def test_every_kind_has_a_legend():
    seen = set()
    for cfg in (NEMOTRON_H_8B, JAMBA_V01, FALCON_H1_7B, MINIMAX_M1, GPT_OSS_20B, LFM2_1_2B,
                RECURRENTGEMMA_2B, LLAMA4_SCOUT):
        seen |= set(kinds_of(cfg))
    assert seen == set(LAYER_KINDS)


# ----------------------------------------------------------------------------- inconsistent configs


def _with(cfg: dict, **changes) -> dict:
    out = dict(cfg)
    out.update(changes)
    return out


@pytest.mark.parametrize("cfg, pattern", [
    (_with(NEMOTRON_H_8B, hybrid_override_pattern="M-M*"),
     r"hybrid_override_pattern has 4 letters: expected a string of num_hidden_layers=52 letters"),
    (_with(NEMOTRON_H_8B, hybrid_override_pattern="X" * 52),
     r"hybrid_override_pattern letter 'X' at layer 0 is not known: expected one of M \(Mamba2\)"),
    (_with(NEMOTRON_H_8B, hybrid_override_pattern="E" * 52), r"n_routed_experts is missing"),
    (_with(ZAMBA2_7B, layers_block_type=["mamba"] * 80),
     r"layers_block_type has 80 entries: expected a list of num_hidden_layers=81"),
    (_with(ZAMBA2_7B, layers_block_type=["transformer"] * 81),
     r"layers_block_type entry 'transformer' is not known: expected one of attention, mamba"),
    (_with(MINIMAX_M1, attn_type_list=[0, 1]), r"attn_type_list has 2 entries.*num_hidden_layers=80"),
    (_with(MINIMAX_M1, attn_type_list=[2] * 80), r"attn_type_list entry 2 is not known: expected 0"),
    (_with(RECURRENTGEMMA_2B, block_types=["recurrent", "local"]),
     r"block_types entry 'local' is not known: expected 'recurrent' or 'attention'"),
    (_with(RECURRENTGEMMA_2B, block_types=[]), r"block_types=\[\] is not valid"),
    (_with(BAMBA_9B, attn_layer_indices=[9, 32]), r"attn_layer_indices entry=32 is out of range: "
                                                  r"expected an integer \[0, 31\]"),
    (_with(JAMBA_V01, attn_layer_offset=8), r"attn_layer_offset=8 is out of range.*\[0, 7\]"),
    (_with(LFM2_1_2B, full_attn_idxs="2,5"), r"full_attn_idxs='2,5' is not valid: expected a list"),
    # a string there was once multiplied into a string (a ValueError traceback), a list too
    (_with(LFM2_1_2B, block_ffn_dim_multiplier="1.5"),
     r"block_ffn_dim_multiplier='1.5' is not valid: expected a number in \(0, 64\] or null"),
    (_with(LFM2_1_2B, block_ffn_dim_multiplier=[1]), r"block_ffn_dim_multiplier=\[1\] is not valid"),
    (_with(LFM2_1_2B, block_ffn_dim_multiplier=0), r"block_ffn_dim_multiplier=0 is not valid"),
    (_with(GPT_OSS_20B, layer_types=["sliding_attention", "global"] * 12),
     r"layer_types entry 'global' is not known"),
    (_with(FALCON_H1_7B, mamba_n_heads=20), r"Mamba2 heads=20 x head_dim=128 does not match its "
                                            r"inner width 3072"),
    (_with(NEMOTRON_H_8B, mamba_ssm_cache_dtype="int8"), r"mamba_ssm_cache_dtype='int8' is not known"),
    (_with(GPT_OSS_20B, layer_types=["sliding_attention", "chunked_attention"] * 12,
           attention_chunk_size=8192), r"two windows \(sliding_window=128, attention_chunk_size=8192\)"),
    (_with(GPT_OSS_20B, rope_scaling=dict(rope_type="dynamic", factor="x")),
     r"rope_scaling factor='x' is not valid"),
])
def test_inconsistent_configs_raise_one_line(cfg, pattern):
    with pytest.raises(KvsimError, match=pattern) as exc:
        ModelSpec.from_hf_config(cfg)
    assert "\n" not in str(exc.value)


def test_llama4_no_rope_layers_of_the_wrong_length():
    cfg = json.loads(json.dumps(LLAMA4_SCOUT))
    cfg["text_config"]["no_rope_layers"] = [1, 0]
    with pytest.raises(KvsimError, match=r"no_rope_layers has 2 entries.*num_hidden_layers=48"):
        ModelSpec.from_hf_config(cfg)


def _qwen3_5_with_mlp_only(value: object) -> dict:
    cfg = json.loads(json.dumps(QWEN3_5_397B))
    cfg["text_config"]["mlp_only_layers"] = value
    return cfg


def test_mlp_only_layers_keeps_those_layers_dense():
    cfg = text_config(_qwen3_5_with_mlp_only([0, 1]))
    ffns = layer_ffns(cfg, layer_kinds(cfg, 60), None)
    assert ffns[:3] == ["dense", "dense", "moe"] and ffns.count("moe") == 58


@pytest.mark.parametrize("value, pattern", [
    (3, r"mlp_only_layers=3 is not valid: expected a list of layer indices >= 0"),
    ("0,1", r"mlp_only_layers='0,1' is not valid: expected a list of layer indices >= 0"),
    ([0, -1], r"mlp_only_layers entry=-1 is out of range"),
    ([0, "1"], r"mlp_only_layers entry='1' has the wrong type"),
])
def test_mlp_only_layers_that_are_not_a_list_of_indices_raise_one_line(value, pattern):
    """A number there once escaped as a TypeError traceback, and a string was read letter by
    letter."""
    with pytest.raises(KvsimError, match=pattern) as exc:
        ModelSpec.from_hf_config(_qwen3_5_with_mlp_only(value))
    assert "\n" not in str(exc.value)


# ----------------------------------------------------------------------------- shared configs


@pytest.mark.parametrize("stem, published", [
    ("Meta-Llama-3.1-8B", 8.03e9), ("Meta-Llama-3.1-70B", 70.6e9), ("Mixtral-8x7B-v0.1", 46.7e9),
    ("DeepSeek-V3", 671e9), ("Qwen3-Next-80B-A3B-Thinking", 80e9), ("gemma-2-9b-it", 9.24e9),
])
def test_shared_config_weight_bytes_match_published_count(hf_configs, stem, published):
    """Weights = parameters x bytes of the weight dtype (FP8 for DeepSeek-V3), within 3 %."""
    m = ModelSpec.from_hf_config(hf_configs[stem])
    per_param = DTYPE_BYTES[m.weight_dtype or m.dtype]
    assert m.checkpoint_bytes is None
    assert m.weight_bytes == m.num_params * per_param
    assert m.weight_bytes == pytest.approx(published * per_param, rel=0.03)


# ----------------------------------------------------------------------------- checkpoint weights


def _model_folder(tmp_path, cfg: dict):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def test_weights_from_the_safetensors_index(tmp_path):
    """A folder with model.safetensors.index.json: metadata.total_size is the weight memory."""
    folder = _model_folder(tmp_path, GPT_OSS_20B)
    index = {"metadata": {"total_size": 13_761_264_768},
             "weight_map": {"model.embed_tokens.weight": "model-00000-of-00002.safetensors"}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    for where in (folder, folder / "config.json", str(folder)):
        m = ModelSpec.from_hf_config(where)
        assert m.checkpoint_bytes == m.weight_bytes == 13_761_264_768
        assert "model.safetensors.index.json (metadata.total_size)" in m.source
        assert m.num_params == estimate_params(GPT_OSS_20B).total       # the estimate is kept
    assert get_model(str(folder)).weight_bytes == 13_761_264_768
    # a dict has no folder: weights are the estimate
    assert ModelSpec.from_hf_config(GPT_OSS_20B).checkpoint_bytes is None


@pytest.mark.parametrize("text, pattern", [
    ("{not json", r"is not valid JSON"),
    ('{"weight_map": {}}', r"has metadata.total_size=None"),
    ('{"metadata": {"total_size": "13GB"}}', r"has metadata.total_size='13GB'"),
    ('{"metadata": {"total_size": 0}}', r"has metadata.total_size=0"),
    ("[1]", r"has metadata.total_size=None"),
])
def test_bad_index_names_the_file(tmp_path, text, pattern):
    folder = _model_folder(tmp_path, preset_config("llama-3.1-8b"))
    (folder / "model.safetensors.index.json").write_text(text)
    with pytest.raises(KvsimError, match=r"checkpoint index '.*model.safetensors.index.json' "
                                         + pattern) as exc:
        ModelSpec.from_hf_config(folder)
    assert "\n" not in str(exc.value)
    assert "expected a JSON object whose metadata.total_size is an integer >= 1" in str(exc.value)


def _write_safetensors(path, tensors: dict[str, tuple[str, list[int], int]]) -> int:
    """A minimal safetensors file; ``tensors`` maps name -> (dtype, shape, bytes per element)."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, (dtype, shape, size) in tensors.items():
        nbytes = size
        for d in shape:
            nbytes *= d
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * offset)
    return offset


def test_weights_from_a_single_safetensors_header(tmp_path):
    folder = _model_folder(tmp_path, preset_config("llama-3.1-8b"))
    data = _write_safetensors(folder / "model.safetensors", {
        "model.embed_tokens.weight": ("BF16", [128, 64], 2),
        "model.norm.weight": ("F32", [64], 4),
        "lm_head.weight": ("F8_E4M3", [128, 64], 1)})
    m = ModelSpec.from_hf_config(folder)
    assert m.checkpoint_bytes == m.weight_bytes == data == 128 * 64 * 2 + 64 * 4 + 128 * 64
    assert "model.safetensors (header)" in m.source


@pytest.mark.parametrize("raw, pattern", [
    (b"\x05", r"has a header length of 5 bytes in a file of 1"),
    (struct.pack("<Q", 10 ** 9) + b"{}", r"has a header length of 1000000000 bytes"),
    (struct.pack("<Q", 4) + b"nope", r"has a header that is not JSON"),
    (struct.pack("<Q", 2) + b"{}", r"lists 0 tensor bytes"),
    (struct.pack("<Q", 31) + b'{"w": {"data_offsets": [8, 4]}}', r"tensor 'w' has data_offsets"),
])
def test_bad_safetensors_header_names_the_file(tmp_path, raw, pattern):
    folder = _model_folder(tmp_path, preset_config("llama-3.1-8b"))
    (folder / "model.safetensors").write_bytes(raw)
    with pytest.raises(KvsimError, match=r"checkpoint '.*model.safetensors' " + pattern) as exc:
        ModelSpec.from_hf_config(folder)
    assert "\n" not in str(exc.value)


def test_checkpoint_bytes_is_validated():
    m = get_model("llama-2-7b")
    assert m.checkpoint_bytes is None and m.weight_bytes == m.num_params * 2
    with pytest.raises(KvsimError, match=r"checkpoint_bytes=0 is out of range"):
        ModelSpec(**{**m.__dict__, "checkpoint_bytes": 0})


# ----------------------------------------------------------------------------- max_model_len


def test_check_seq_len_names_the_value_and_the_model():
    m = get_model("llama-2-7b")
    assert m.check_seq_len(4096) == 4096 and m.check_seq_len(1) == 1
    with pytest.raises(KvsimError) as exc:
        m.check_seq_len(8000)
    assert str(exc.value) == ("seq_len=8000 is out of range: expected an integer in [1, 4096], "
                              "the max_model_len of llama-2-7b")
    with pytest.raises(KvsimError, match=r"^prompt_len=0 is out of range: expected an integer in "
                                         r"\[1, 4096\]"):
        m.check_seq_len(0, what="prompt_len")
    for bad in ("lots", 12.5, True, None):
        with pytest.raises(KvsimError, match=r"is not a whole number: expected an integer "
                                             r"in \[1, 4096\]"):
            m.check_seq_len(bad)
    assert m.check_seq_len("2048") == 2048


@pytest.mark.parametrize("changes, expected", [
    ({}, 131072),                                                     # llama3 scaling: not applied
    (dict(rope_scaling=dict(rope_type="yarn", factor=4.0, original_max_position_embeddings=32768)),
     131072),                                                         # yarn: original x factor
    (dict(rope_scaling=dict(type="dynamic", factor=2.0)), 262144),    # old "type" key, x factor
    (dict(rope_scaling=dict(rope_type="longrope", factor=32.0)), 131072),
    (dict(rope_scaling=None, rope_parameters=dict(rope_type="linear", factor=2.0)), 262144),
    (dict(model_max_length=32768), 32768),                            # Command-R's override wins
    (dict(rope_scaling=None, seq_length=65536), 65536),               # the smallest length field
    (dict(rope_scaling=None, max_position_embeddings=None), 2048),    # vLLM's fallback
])
def test_max_model_len_follows_vllm(changes, expected):
    cfg = preset_config("llama-3.1-8b")
    cfg["rope_scaling"] = dict(rope_type="llama3", factor=8.0, original_max_position_embeddings=8192)
    cfg.update(changes)
    assert ModelSpec.from_hf_config(cfg).max_model_len == expected


def test_gemma3_length_is_not_scaled_again():
    cfg = dict(preset_config("gemma-2-9b"), model_type="gemma3_text", max_position_embeddings=131072,
               sliding_window=1024, rope_scaling=dict(rope_type="linear", factor=8.0))
    assert ModelSpec.from_hf_config(cfg).max_model_len == 131072
