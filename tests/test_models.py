"""Model specs, presets and config.json parsing (chapter 1, *Bytes per token and capacity*)."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

import kvsim
from kvsim.errors import KvsimError
from kvsim.model.dtypes import DTYPE_BYTES
from kvsim.model.parameters import estimate_params
from kvsim.model.presets import PUBLISHED_PARAMS, get_model, list_models, preset_config
from kvsim.model.spec import ModelSpec
from kvsim.units import KiB, MiB

EXPECTED_PRESETS = ["llama-2-7b", "llama-3.1-8b", "llama-3.1-70b", "mistral-7b", "qwen2.5-7b",
                    "deepseek-v3", "gemma-2-9b", "opt-13b"]


def hand_formula(cfg: dict, kv_dtype_bytes: int = 2) -> int:
    """Bytes per token computed independently from a raw config dict."""
    n = cfg["num_hidden_layers"]
    if cfg.get("kv_lora_rank"):
        return n * (cfg["kv_lora_rank"] + cfg["qk_rope_head_dim"]) * kv_dtype_bytes
    if "full_attention_interval" in cfg:
        n = n // cfg["full_attention_interval"]
    kv_heads = cfg.get("num_key_value_heads", cfg["num_attention_heads"])
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    return 2 * n * kv_heads * head_dim * kv_dtype_bytes


# ----------------------------------------------------------------------------- seed figures


def test_seed000_7b_mha_fp16_is_half_a_mib_per_token():
    """Seed 000 ("KV Cache Preemption in vLLM"): 2 x 32 x 4096 x 2 B = 524,288 B = 0.5 MiB."""
    m = get_model("llama-2-7b")
    assert m.attention_kind == "mha"
    assert m.kv_bytes_per_token() == 524_288 == MiB // 2
    assert m.dtype == "fp16"


def test_seed000_7b_fp8_kv_is_a_quarter_mib():
    """Seed 000 ("KV Cache Preemption in vLLM"): the same model with an FP8 KV cache, 0.25 MiB."""
    assert get_model("llama-2-7b").kv_bytes_per_token("fp8") == 262_144 == MiB // 4


def test_seed000_and_003_gqa_8_heads_of_128_is_128_kib():
    """Seeds 000 and 003: 8 KV heads x 128 dims, 32 layers (Llama-3.1-8B) = 131,072 B = 128 KiB."""
    m = get_model("llama-3.1-8b")
    assert (m.num_kv_heads, m.head_dim, m.kv_layers) == (8, 128, 32)
    assert m.attention_kind == "gqa"
    assert m.kv_bytes_per_token() == 131_072 == 128 * KiB


def test_seed003_llama_70b_is_320_kib_and_2_5x_the_8b():
    """Seed 003 ("Throughput collapse under load"): 80 x 8 x 128 -> 320 KiB, 2.5x the 8B."""
    big, small = get_model("llama-3.1-70b"), get_model("llama-3.1-8b")
    assert big.kv_bytes_per_token() == 327_680 == 320 * KiB
    assert big.kv_bytes_per_token() / small.kv_bytes_per_token() == 2.5


def test_seed003_full_mha_at_70b_size_would_be_8x_worse():
    """Seed 003: "a model with full multi-head attention at the same size would be 8x worse"."""
    big = get_model("llama-3.1-70b")
    mha = replace(big, num_kv_heads=big.num_attention_heads)
    assert mha.attention_kind == "mha"
    assert mha.kv_bytes_per_token() == 8 * big.kv_bytes_per_token()


def test_deepseek_v3_mla_is_61_x_576_x_2_bytes():
    """MLA stores one latent of kv_lora_rank + rope dim per layer, no factor 2 for K and V."""
    m = get_model("deepseek-v3")
    assert m.attention_kind == "mla"
    assert (m.mla_kv_lora_rank, m.mla_rope_head_dim, m.kv_layers) == (512, 64, 61)
    assert m.kv_bytes_per_token() == 61 * 576 * 2 == 70_272
    assert m.kv_bytes_per_token("fp8") == 35_136
    # FP8 checkpoint: weights take one byte per parameter while the KV stays bf16
    assert m.weight_bytes == m.num_params
    assert m.num_params == 671_000_000_000 and m.active_params == 37_000_000_000


# ----------------------------------------------------------------------------- presets


def test_presets_are_listed_and_have_real_param_counts():
    assert list_models() == EXPECTED_PRESETS
    published = {"llama-2-7b": 6.74e9, "llama-3.1-8b": 8.03e9, "llama-3.1-70b": 70.6e9,
                 "mistral-7b": 7.24e9, "qwen2.5-7b": 7.61e9, "deepseek-v3": 671e9,
                 "gemma-2-9b": 9.24e9, "opt-13b": 12.85e9}
    for name in EXPECTED_PRESETS:
        m = get_model(name)
        assert m.name == name
        assert m.num_params == pytest.approx(published[name], rel=0.005), name
        assert isinstance(m.num_params, int) and isinstance(m.weight_bytes, int)
        assert m.source


@pytest.mark.parametrize("name", EXPECTED_PRESETS)
def test_preset_config_estimate_matches_published_params(name):
    """The config-based estimate agrees with the published counts the presets carry."""
    est = estimate_params(preset_config(name))
    total, active = PUBLISHED_PARAMS[name]
    assert est.total == pytest.approx(total, rel=0.01)
    assert est.active == pytest.approx(active, rel=0.02)


def test_dense_llama_estimate_is_exact():
    assert estimate_params(preset_config("llama-2-7b")).total == 6_738_415_616
    assert estimate_params(preset_config("llama-3.1-70b")).total == 70_553_706_496


@pytest.mark.parametrize("name, layers, kv_heads, head_dim, expected", [
    ("qwen2.5-7b", 28, 4, 128, 57_344),
    ("mistral-7b", 32, 8, 128, 131_072),
    ("gemma-2-9b", 42, 8, 256, 344_064),
    ("opt-13b", 40, 40, 128, 819_200),
])
def test_preset_architectures(name, layers, kv_heads, head_dim, expected):
    m = get_model(name)
    assert (m.kv_layers, m.num_kv_heads, m.head_dim) == (layers, kv_heads, head_dim)
    assert m.kv_bytes_per_token() == expected == 2 * layers * kv_heads * head_dim * 2


def test_weight_bytes_follow_dtype():
    assert get_model("llama-2-7b").weight_bytes == 6_738_415_616 * 2
    assert get_model("opt-13b").dtype == "fp16"
    assert get_model("llama-3.1-8b").dtype == "bf16"


def test_gemma2_sliding_window_on_half_the_layers():
    m = get_model("gemma-2-9b")
    assert (m.sliding_window, m.sliding_window_layers) == (4096, 21)
    per_layer = 2 * 8 * 256 * 2
    # up to the window nothing is saved
    assert m.kv_bytes_for_sequence(4096) == 4096 * m.kv_bytes_per_token()
    # past it, the 21 sliding layers stay at 4096 tokens
    n = 8192
    assert m.kv_bytes_for_sequence(n) == per_layer * (21 * n + 21 * 4096)
    assert m.kv_bytes_for_sequence(n) < n * m.kv_bytes_per_token()
    assert m.kv_bytes_for_sequence(0) == 0


def test_mistral_sliding_window_on_every_layer():
    m = get_model("mistral-7b")
    assert (m.sliding_window, m.sliding_window_layers) == (4096, 32)
    assert m.kv_bytes_for_sequence(10_000) == 4096 * m.kv_bytes_per_token()


def test_models_without_windows_charge_the_full_sequence():
    m = get_model("llama-3.1-8b")
    assert m.kv_bytes_for_sequence(12_345) == 12_345 * 131_072
    assert m.kv_bytes_for_sequence(1000, "fp8") == 1000 * 65_536


def test_get_model_accepts_spec_and_is_case_insensitive():
    m = get_model("llama-2-7b")
    assert get_model(m) is m
    assert get_model(" LLaMA-2-7B ") == m
    assert kvsim.get_model is get_model


def test_unknown_model_lists_valid_names():
    with pytest.raises(KvsimError) as exc:
        get_model("llama-9")
    msg = str(exc.value)
    assert "llama-9" in msg and "\n" not in msg
    for name in EXPECTED_PRESETS:
        assert name in msg
    with pytest.raises(KvsimError, match="model=42"):
        get_model(42)


def test_spec_validation_names_field_and_range():
    base = get_model("llama-3.1-8b")
    with pytest.raises(KvsimError, match=r"num_layers=0 .*>= 1"):
        replace(base, num_layers=0)
    with pytest.raises(KvsimError, match=r"active_params=.*\[1, 8030261248\]"):
        replace(base, active_params=base.num_params + 1)
    with pytest.raises(KvsimError, match=r"num_kv_heads=64"):
        replace(base, num_kv_heads=64)
    with pytest.raises(KvsimError, match=r"dtype='int4'.*fp32, fp16, bf16, fp8"):
        replace(base, dtype="int4")
    with pytest.raises(KvsimError, match="sliding_window_layers=3 without a sliding_window"):
        replace(base, sliding_window_layers=3)
    with pytest.raises(KvsimError, match=r"sliding_window_layers=33 .*\[0, 32\]"):
        replace(base, sliding_window=4096, sliding_window_layers=33)
    with pytest.raises(KvsimError, match=r"kv_dtype='int8'"):
        base.kv_bytes_per_token("int8")
    with pytest.raises(KvsimError, match=r"num_tokens=-1"):
        base.kv_bytes_for_sequence(-1)


def test_dtype_bytes():
    assert DTYPE_BYTES == {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


# ----------------------------------------------------------------------------- real configs


def test_every_shared_config_loads_with_hand_formula(hf_configs):
    """Every shared config.json loads and its bytes/token equal the hand formula."""
    assert len(hf_configs) >= 6
    for stem, path in hf_configs.items():
        cfg = json.loads(path.read_text())
        m = ModelSpec.from_hf_config(path)
        assert m.name == stem
        assert m.kv_bytes_per_token() == hand_formula(cfg), stem
        assert m.kv_bytes_per_token("fp8") * 2 == m.kv_bytes_per_token(), stem
        assert m.source.endswith(path.name)
        assert get_model(str(path)) == m
        assert get_model(path) == m


@pytest.mark.parametrize("stem, total, active, tol", [
    ("Meta-Llama-3.1-8B", 8.03e9, 8.03e9, 0.01),
    ("Meta-Llama-3.1-70B", 70.6e9, 70.6e9, 0.01),
    ("Mixtral-8x7B-v0.1", 46.7e9, 12.9e9, 0.01),
    ("DeepSeek-V3", 671e9, 37e9, 0.02),
    ("Qwen3-Next-80B-A3B-Thinking", 80e9, None, 0.01),
    ("gemma-2-9b-it", 9.24e9, 9.24e9, 0.01),
])
def test_config_param_estimate_matches_published_totals(hf_configs, stem, total, active, tol):
    m = ModelSpec.from_hf_config(hf_configs[stem])
    assert m.num_params == pytest.approx(total, rel=tol)
    if active is not None:
        assert m.active_params == pytest.approx(active, rel=tol)


def test_qwen3_next_hybrid_only_full_attention_layers_hold_kv(hf_configs):
    """Qwen3-Next: 1 full-attention layer in 4; the 36 linear layers keep a fixed state."""
    path = hf_configs["Qwen3-Next-80B-A3B-Thinking"]
    m = ModelSpec.from_hf_config(path)
    assert (m.num_layers, m.kv_layers, m.num_kv_heads, m.head_dim) == (48, 12, 2, 256)
    assert m.kv_bytes_per_token() == 2 * 12 * 2 * 256 * 2 == 24_576
    # per linear layer: 32 value heads x 128 x 128 recurrent state + conv state (8192 x 3), bf16
    assert m.state_bytes_per_request == 36 * (32 * 128 * 128 + 8192 * 3) * 2 == 39_518_208
    # MoE: far fewer active than total parameters. The card's "3B activated" leaves
    # out the embedding and output head; kvsim's active count includes them.
    est = estimate_params(path)
    assert m.active_params < m.num_params / 15
    assert est.active - est.embedding == pytest.approx(3e9, rel=0.10)
    # the same hybrid described with layer_types gives the same spec
    cfg = json.loads(path.read_text())
    del cfg["full_attention_interval"]
    cfg["layer_types"] = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention"
                          for i in range(48)]
    assert ModelSpec.from_hf_config(cfg).kv_bytes_per_token() == 24_576


def test_gemma2_config_sliding_window_and_explicit_head_dim(hf_configs):
    m = ModelSpec.from_hf_config(hf_configs["gemma-2-9b-it"])
    # head_dim 256 is explicit: hidden 3584 / 16 heads would give 224
    assert m.head_dim == 256
    assert (m.sliding_window, m.sliding_window_layers, m.kv_layers) == (4096, 21, 42)
    assert m.kv_bytes_per_token() == 344_064
    assert m.kv_bytes_per_token() == get_model("gemma-2-9b").kv_bytes_per_token()


def test_mixtral_and_deepseek_configs(hf_configs):
    mix = ModelSpec.from_hf_config(hf_configs["Mixtral-8x7B-v0.1"])
    assert mix.sliding_window is None and mix.kv_bytes_per_token() == 131_072
    assert mix.active_params < mix.num_params / 3
    ds = ModelSpec.from_hf_config(hf_configs["DeepSeek-V3"])
    assert ds.attention_kind == "mla" and ds.kv_bytes_per_token() == 70_272
    assert ds.weight_dtype == "fp8" and ds.dtype == "bf16"
    assert ds.kv_bytes_per_token() == get_model("deepseek-v3").kv_bytes_per_token()


def test_config_folder_and_dict_inputs(tmp_path):
    cfg = preset_config("llama-3.1-8b")
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg))
    m = ModelSpec.from_hf_config(folder)
    assert m.name == "my-model" and m.kv_bytes_per_token() == 131_072
    assert ModelSpec.from_hf_config(cfg).kv_bytes_per_token() == 131_072
    assert ModelSpec.from_hf_config(cfg, name="mine").name == "mine"
    # a multimodal config nests the language model under text_config
    nested = {"model_type": "llava", "torch_dtype": "float16", "text_config": cfg}
    assert ModelSpec.from_hf_config(nested).kv_bytes_per_token() == 131_072


# ----------------------------------------------------------------------------- malformed configs


def _cfg(**changes):
    cfg = preset_config("llama-3.1-8b")
    for k, v in changes.items():
        if v is _DELETE:
            del cfg[k]
        else:
            cfg[k] = v
    return cfg


_DELETE = object()


@pytest.mark.parametrize("changes, pattern", [
    (dict(num_hidden_layers=_DELETE), r"missing field 'num_hidden_layers'.*>= 1"),
    (dict(hidden_size=_DELETE), r"missing field 'hidden_size'"),
    (dict(vocab_size=_DELETE), r"missing field 'vocab_size'"),
    (dict(intermediate_size=_DELETE), r"missing field 'intermediate_size'"),
    (dict(num_hidden_layers="32"), r"num_hidden_layers='32' has the wrong type: expected an integer"),
    (dict(hidden_size=4096.0), r"hidden_size=4096.0 has the wrong type"),
    (dict(num_attention_heads=True), r"num_attention_heads=True has the wrong type"),
    (dict(num_key_value_heads=-8), r"num_key_value_heads=-8 is out of range: expected an integer "
                                   r"\[1, 4096\]"),
    (dict(num_hidden_layers=0), r"num_hidden_layers=0 is out of range"),
    (dict(num_key_value_heads=5), r"num_key_value_heads=5 does not divide"),
    (dict(head_dim=_DELETE, hidden_size=4001), r"hidden_size=4001 is not a multiple"),
    (dict(torch_dtype="int4"), r"torch_dtype='int4' is not known"),
    (dict(layer_types=["full_attention"] * 3), r"layer_types has 3 entries.*32"),
    (dict(layer_types=["rwkv"] * 32), r"layer_types entry 'rwkv' is not known"),
    (dict(layer_types=["mamba"] * 32), r"no attention layer holding a KV cache \(32 mamba layers\)"),
    (dict(layer_types=["linear_attention"] * 32), r"no attention layer"),
    (dict(tie_word_embeddings="no"), r"tie_word_embeddings='no' has the wrong type"),
])
def test_malformed_config_names_the_field(changes, pattern):
    with pytest.raises(KvsimError, match=pattern) as exc:
        ModelSpec.from_hf_config(_cfg(**changes))
    assert "\n" not in str(exc.value)


def test_unreadable_and_non_json_paths(tmp_path):
    with pytest.raises(KvsimError, match=r"nope.json' does not exist: expected a readable "
                                          r"config.json$"):
        ModelSpec.from_hf_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(KvsimError, match=r"bad.json' is not valid JSON \(.*line 1"):
        ModelSpec.from_hf_config(bad)
    arr = tmp_path / "list.json"
    arr.write_text("[1, 2]")
    with pytest.raises(KvsimError, match=r"holds a JSON list: expected a JSON object"):
        ModelSpec.from_hf_config(arr)
    with pytest.raises(KvsimError, match=r"config=3"):
        ModelSpec.from_hf_config(3)
    with pytest.raises(KvsimError, match="missing.json' does not exist"):
        get_model(str(tmp_path / "missing.json"))


def test_float32_checkpoint_is_served_in_16_bit():
    m = ModelSpec.from_hf_config(_cfg(torch_dtype="float32"))
    assert m.dtype == "bf16"
    assert ModelSpec.from_hf_config(_cfg(torch_dtype=_DELETE, dtype="float16")).dtype == "fp16"


def test_custom_spec_accepts_whole_floats_and_refuses_strings():
    m = ModelSpec(name="tiny", num_layers=4, hidden_size=256, num_attention_heads=4,
                  num_kv_heads=2, head_dim=64, num_params=2.5e7, active_params=2.5e7,
                  kv_layers=4)
    assert m.num_params == 25_000_000 and type(m.num_params) is int
    assert m.kv_bytes_per_token() == 2 * 4 * 2 * 64 * 2
    with pytest.raises(KvsimError, match=r"num_layers='4' has the wrong type"):
        replace(m, num_layers="4")
    with pytest.raises(KvsimError, match=r"head_dim=64.5 is not a whole number"):
        replace(m, head_dim=64.5)
