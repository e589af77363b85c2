"""The named models: presets built from published configs, and lookup by name.

Explained in chapter 1, *Bytes per token and capacity*.

Each preset is a published ``config.json``'s architecture figures, read by the
same parser as any config (:meth:`ModelSpec.from_hf_config
<kvsim.model.spec.ModelSpec.from_hf_config>`), so the parser is exercised by
every preset, and then given the published parameter counts
(:data:`PUBLISHED_PARAMS`). :func:`get_model` takes a preset name, a spec, a
config dict or a path to a ``config.json``.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeAlias

from kvsim.errors import KvsimError

from .config_json import HfConfig
from .spec import ModelSpec

__all__ = ["PUBLISHED_PARAMS", "preset_config", "list_models", "get_model"]


#: Published parameter counts (total, active) the presets carry. The config
#: estimate is checked against these in the tests.
PUBLISHED_PARAMS: dict[str, tuple[int, int]] = {}

# Each preset is the published config.json's architecture figures (keys as in
# Hugging Face), the published parameter counts and the model card it comes from.
_PRESETS: dict[str, dict[str, Any]] = {
    "llama-2-7b": dict(
        source="meta-llama/Llama-2-7b-hf config.json; 6.74B parameters (model card)",
        params=(6_738_415_616, 6_738_415_616),
        config=dict(model_type="llama", num_hidden_layers=32, hidden_size=4096,
                    num_attention_heads=32, num_key_value_heads=32, intermediate_size=11008,
                    vocab_size=32000, max_position_embeddings=4096, torch_dtype="float16",
                    tie_word_embeddings=False)),
    "llama-3.1-8b": dict(
        source="meta-llama/Llama-3.1-8B config.json; 8.03B parameters (model card)",
        params=(8_030_261_248, 8_030_261_248),
        config=dict(model_type="llama", num_hidden_layers=32, hidden_size=4096,
                    num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                    intermediate_size=14336, vocab_size=128256, max_position_embeddings=131072,
                    torch_dtype="bfloat16", tie_word_embeddings=False)),
    "llama-3.1-70b": dict(
        source="meta-llama/Llama-3.1-70B config.json; 70.6B parameters (model card)",
        params=(70_553_706_496, 70_553_706_496),
        config=dict(model_type="llama", num_hidden_layers=80, hidden_size=8192,
                    num_attention_heads=64, num_key_value_heads=8, head_dim=128,
                    intermediate_size=28672, vocab_size=128256, max_position_embeddings=131072,
                    torch_dtype="bfloat16", tie_word_embeddings=False)),
    "mistral-7b": dict(
        source="mistralai/Mistral-7B-v0.1 config.json (sliding window 4096 on every layer); "
               "7.24B parameters (model card)",
        params=(7_241_732_096, 7_241_732_096),
        config=dict(model_type="mistral", num_hidden_layers=32, hidden_size=4096,
                    num_attention_heads=32, num_key_value_heads=8, intermediate_size=14336,
                    vocab_size=32000, max_position_embeddings=32768, sliding_window=4096,
                    torch_dtype="bfloat16", tie_word_embeddings=False)),
    "qwen2.5-7b": dict(
        source="Qwen/Qwen2.5-7B config.json; 7.61B parameters (model card)",
        params=(7_615_616_512, 7_615_616_512),
        config=dict(model_type="qwen2", num_hidden_layers=28, hidden_size=3584,
                    num_attention_heads=28, num_key_value_heads=4, intermediate_size=18944,
                    vocab_size=152064, max_position_embeddings=131072, sliding_window=131072,
                    use_sliding_window=False, torch_dtype="bfloat16", tie_word_embeddings=False)),
    "deepseek-v3": dict(
        source="deepseek-ai/DeepSeek-V3 config.json (MLA; FP8 weights, bf16 KV); 671B total, "
               "37B activated (model card; the 14B multi-token-prediction module excluded)",
        params=(671_000_000_000, 37_000_000_000),
        config=dict(model_type="deepseek_v3", num_hidden_layers=61, hidden_size=7168,
                    num_attention_heads=128, num_key_value_heads=128, intermediate_size=18432,
                    moe_intermediate_size=2048, n_routed_experts=256, n_shared_experts=1,
                    num_experts_per_tok=8, first_k_dense_replace=3, moe_layer_freq=1,
                    kv_lora_rank=512, q_lora_rank=1536, qk_nope_head_dim=128,
                    qk_rope_head_dim=64, v_head_dim=128, topk_method="noaux_tc",
                    vocab_size=129280, max_position_embeddings=163840, torch_dtype="bfloat16",
                    quantization_config={"quant_method": "fp8"}, tie_word_embeddings=False)),
    "gemma-2-9b": dict(
        source="google/gemma-2-9b config.json (sliding window 4096 on half the layers); "
               "9.24B parameters (model card)",
        params=(9_241_705_984, 9_241_705_984),
        config=dict(model_type="gemma2", num_hidden_layers=42, hidden_size=3584,
                    num_attention_heads=16, num_key_value_heads=8, head_dim=256,
                    intermediate_size=14336, vocab_size=256000, max_position_embeddings=8192,
                    sliding_window=4096, torch_dtype="bfloat16")),
    "opt-13b": dict(
        source="facebook/opt-13b config.json (MHA, learned positions); 12.85B parameters "
               "(the '13B' of the OPT paper)",
        params=(12_853_473_280, 12_853_473_280),
        config=dict(model_type="opt", num_hidden_layers=40, hidden_size=5120,
                    num_attention_heads=40, ffn_dim=20480, vocab_size=50272,
                    max_position_embeddings=2048, torch_dtype="float16",
                    word_embed_proj_dim=5120)),
}

_CACHE: dict[str, ModelSpec] = {}


def _build_preset(name: str) -> ModelSpec:
    if name not in _CACHE:
        entry = _PRESETS[name]
        spec = ModelSpec.from_hf_config(entry["config"], name=name)
        total, active = entry["params"]
        _CACHE[name] = replace(spec, num_params=total, active_params=active, source=entry["source"])
    return _CACHE[name]


PUBLISHED_PARAMS.update({k: v["params"] for k, v in _PRESETS.items()})


def preset_config(name: str) -> HfConfig:
    """The config.json figures a preset is built from (a copy)."""
    if name not in _PRESETS:
        get_model(name)                     # raises the listing error
    copy: HfConfig = json.loads(json.dumps(_PRESETS[name]["config"]))    # tuples become lists
    return copy


def list_models() -> list[str]:
    """Names of the model presets (explained in chapter 1)."""
    return list(_PRESETS)


#: What names a model: a preset name, a spec, or a ``config.json`` (a path, its folder, or the
#: parsed dict).
ModelSource: TypeAlias = "ModelSpec | str | Path | Mapping[str, object]"


def get_model(name_or_spec: ModelSource) -> ModelSpec:
    """A :class:`~kvsim.model.spec.ModelSpec` from a preset name, a spec, or a path to a ``config.json``.

    Unknown names raise :class:`KvsimError` listing the valid ones.
    Explained in chapter 1, *Bytes per token and capacity*.
    """
    if isinstance(name_or_spec, ModelSpec):
        return name_or_spec
    if isinstance(name_or_spec, Mapping):
        return ModelSpec.from_hf_config(name_or_spec)
    if isinstance(name_or_spec, Path):
        return ModelSpec.from_hf_config(name_or_spec)
    if not isinstance(name_or_spec, str):
        raise KvsimError(f"model={name_or_spec!r} is not valid: expected a preset name "
                         f"({', '.join(list_models())}), a ModelSpec or a path to a config.json")
    key = name_or_spec.strip().lower()
    if key in _PRESETS:
        return _build_preset(key)
    if key and (name_or_spec.endswith(".json") or Path(name_or_spec).exists()):
        # a path (a FIFO or a device too: the reader refuses it in one line, unread)
        return ModelSpec.from_hf_config(name_or_spec)
    raise KvsimError(f"model={name_or_spec!r} is not known: expected one of "
                     f"{', '.join(list_models())} or a path to a config.json")
