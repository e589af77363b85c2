"""Reading a Hugging Face ``config.json``: the file, its language-model part and its fields.

Explained in chapter 1, *Bytes per token and capacity*.

:func:`load_config` reads a path, a folder holding a ``config.json``, or a
dict; :func:`text_config` finds the language model inside a multimodal
config; the field readers (:func:`required_int`, :func:`optional_int`,
:func:`optional_bool`, :func:`first_set`, :func:`first_int`) take JSON values
strictly and raise a one-line :class:`KvsimError` naming the field. What the
fields mean is read by :mod:`~kvsim.model.layer_kinds`,
:mod:`~kvsim.model.layer_state`, :mod:`~kvsim.model.architecture` and
:mod:`~kvsim.model.parameters`.
"""
from __future__ import annotations

import builtins
from collections.abc import Mapping
from pathlib import Path
from typing import TypeAlias, overload

from kvsim.errors import KvsimError, check_int
from kvsim.files import MAX_JSON_BYTES, HugeInt, parse_json, read_user_bytes

__all__ = ["load_config", "text_config", "strict_int", "required_int", "optional_int",
           "optional_bool", "first_set", "first_int", "CONFIG_BOUNDS", "FIELD_MAX",
           "QUANTIZATION_METHODS", "nested_config", "HfConfig"]

#: A parsed ``config.json`` (or its language-model part): field names to JSON values, whose
#: types the field readers below check.
HfConfig: TypeAlias = dict[str, object]

#: The largest value kvsim accepts for each ``config.json`` field it reads, far above any
#: real checkpoint (which has at most a few hundred layers, a hidden size of 16,384 (Llama
#: 3.1 405B) to 18,432, head sizes up to 256, vocabularies up to 262,144 (Gemma 3), contexts
#: up to 10,485,760 tokens (Llama 4 Scout)). A larger value is a typo or a hostile file, and
#: the arithmetic built on it (bytes per token, the KV pool) would be nonsense.
CONFIG_BOUNDS: dict[str, int] = {
    "num_hidden_layers": 4096,
    "hidden_size": 2**17, "d_model": 2**17, "lru_width": 2**17,
    "num_attention_heads": 4096, "num_key_value_heads": 4096,
    "head_dim": 4096, "attention_head_dim": 4096, "qk_nope_head_dim": 4096,
    "qk_rope_head_dim": 4096, "v_head_dim": 4096, "linear_key_head_dim": 4096,
    "linear_value_head_dim": 4096, "mamba_head_dim": 4096, "mamba_d_head": 4096,
    "kv_lora_rank": 65_536, "q_lora_rank": 65_536,
    "vocab_size": 2**22,
    "intermediate_size": 2**20, "ffn_dim": 2**20, "moe_intermediate_size": 2**20,
    "shared_expert_intermediate_size": 2**20, "moe_shared_expert_intermediate_size": 2**20,
    "shared_intermediate_size": 2**20, "intermediate_size_mlp": 2**20, "block_ff_dim": 2**20,
    "num_experts": 2**16, "num_local_experts": 2**16, "n_routed_experts": 2**16,
    "num_experts_per_tok": 2**16, "n_shared_experts": 2**16,
    "max_position_embeddings": 2**30, "n_positions": 2**30, "max_seq_len": 2**30,
    "seq_length": 2**30, "model_max_length": 2**30, "max_target_positions": 2**30,
    "max_sequence_length": 2**30, "max_seq_length": 2**30, "seq_len": 2**30,
    "original_max_position_embeddings": 2**30, "sliding_window": 2**30,
    "attention_window_size": 2**30, "attention_chunk_size": 2**30,
}
#: The bound of every other integer field kvsim reads (a count or a width): 2**31 - 1, the
#: largest tensor dimension a real checkpoint's int32 shapes hold.
FIELD_MAX = 2**31 - 1

#: The quantisation methods vLLM knows (``QUANTIZATION_METHODS`` in
#: vllm/model_executor/layers/quantization/__init__.py, with the later mxfp4, rtn, inc,
#: petit_nvfp4 and fp_quant); vLLM refuses to load a checkpoint whose
#: ``quantization_config.quant_method`` is another (``Invalid quantization method``).
#: kvsim reads ``fp8`` as FP8 weights; the others keep the dtype's weight estimate (a
#: checkpoint folder's safetensors give the real bytes).
QUANTIZATION_METHODS = (
    "aqlm", "awq", "deepspeedfp", "tpu_int8", "fp8", "ptpc_fp8", "fbgemm_fp8", "deepgemm_fp8",
    "modelopt", "modelopt_fp4", "marlin", "bitblas", "gguf", "gptq_marlin_24", "gptq_marlin",
    "gptq_bitblas", "awq_marlin", "gptq", "compressed-tensors", "bitsandbytes", "qqq", "hqq",
    "experts_int8", "neuron_quant", "ipex", "quark", "moe_wna16", "torchao", "auto-round",
    "mxfp4", "rtn", "inc", "petit_nvfp4", "fp_quant")

#: The largest config.json kvsim reads: 4 MiB (a real one is a few kilobytes).
MAX_CONFIG_BYTES = 4 * 2**20


def _bound(name: str) -> int:
    return CONFIG_BOUNDS.get(name.split(" ")[0], FIELD_MAX)


def strict_int(name: str, value: object, *, min: int | None = None, max: int | None = None) -> int:
    """Like ``check_int`` but refuses strings and floats: config fields must be JSON integers,
    at most :data:`CONFIG_BOUNDS` (or :data:`FIELD_MAX`) and ``max``."""
    cap = _bound(name)
    max = cap if max is None else builtins.min(max, cap)
    why = "beyond any real checkpoint" if max == cap else None
    if isinstance(value, HugeInt):
        rng = f"in [{min}, {max}]"
        raise KvsimError(f"{name}={value!r} is out of range: expected an integer {rng}"
                         + (f" ({why})" if why else ""))
    if isinstance(value, bool) or not isinstance(value, int):
        rng = f"in [{min}, {max}]"
        raise KvsimError(f"{name}={_show(value)} has the wrong type: expected an integer {rng}")
    return check_int(name, value, min=min, max=max, why=why)



def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def nested_config(cfg: HfConfig, key: str, what: str) -> HfConfig | None:
    """The object field ``key`` (``None`` when absent or null); anything else is a one-line
    error naming it (``what`` says what the object holds)."""
    value = cfg.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise KvsimError(f"{key}={_show(value)} has the wrong type ({type(value).__name__}): "
                         f"expected an object ({what}) or null")
    return value


def load_config(path_or_dict: object) -> tuple[HfConfig, str, str]:
    """A config as ``(dict, source, default name)`` from a dict, a ``config.json`` path or its folder."""
    if isinstance(path_or_dict, Mapping):
        cfg = dict(path_or_dict)
        name = cfg.get("_name_or_path") or cfg.get("model_type") or "hf-config"
        if not isinstance(name, str):
            name = "hf-config"
        return cfg, "hf-config:dict", Path(name).name or "hf-config"
    if not isinstance(path_or_dict, (str, Path)):
        raise KvsimError(f"config={path_or_dict!r} is not valid: expected a path to a "
                         f"config.json, a folder holding one, or a dict")
    path = Path(path_or_dict)
    if path.is_dir():
        path = path / "config.json"
    where = f"config path {str(path)!r}"
    data = read_user_bytes(path, what="config path", expected="a readable config.json",
                           max_bytes=builtins.min(MAX_CONFIG_BYTES, MAX_JSON_BYTES))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise KvsimError(f"{where} is not UTF-8 text (byte {exc.start}): expected a "
                         f"readable config.json") from None
    doc = parse_json(text, where=where, expected="a config.json object")
    if not isinstance(doc, dict):
        raise KvsimError(f"config path {str(path)!r} holds a JSON {type(doc).__name__}: "
                         f"expected a JSON object")
    cfg = doc
    stem = path.parent.name if path.stem == "config" and path.parent.name else path.stem
    return cfg, f"hf-config:{path}", stem or "hf-config"


def text_config(cfg: HfConfig) -> HfConfig:
    """Multimodal configs nest the language model under ``text_config`` (an object; anything
    else there is a one-line error)."""
    nested = nested_config(cfg, "text_config", "the language model's config")
    if "num_hidden_layers" not in cfg and nested is not None:
        merged = dict(nested)
        for key in ("torch_dtype", "dtype", "quantization_config", "_name_or_path",
                    "tie_word_embeddings"):
            if key in cfg and key not in merged:
                merged[key] = cfg[key]
        return merged
    return cfg


def required_int(cfg: HfConfig, key: str, *, min: int = 1, max: int | None = None) -> int:
    """The integer field ``key``, which must be set (a one-line error names it otherwise)."""
    if key not in cfg or cfg[key] is None:
        raise KvsimError(f"config.json is missing field {key!r}: expected an integer >= {min}")
    return strict_int(key, cfg[key], min=min, max=max)


@overload
def optional_int(cfg: HfConfig, key: str, default: int, *, min: int = 0,
                 max: int | None = None) -> int: ...
@overload
def optional_int(cfg: HfConfig, key: str, default: None, *, min: int = 0,
                 max: int | None = None) -> int | None: ...
def optional_int(cfg: HfConfig, key: str, default: int | None, *, min: int = 0,
                 max: int | None = None) -> int | None:
    """The integer field ``key``, or ``default`` when it is absent or null."""
    if cfg.get(key) is None:
        return default
    return strict_int(key, cfg[key], min=min, max=max)


def optional_bool(cfg: HfConfig, key: str, default: bool) -> bool:
    """The true/false field ``key``, or ``default`` when it is absent or null."""
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise KvsimError(f"{key}={value!r} has the wrong type: expected true or false")
    return value


def first_set(cfg: HfConfig, keys: tuple[str, ...]) -> tuple[str | None, object]:
    """The first of ``keys`` the config sets (not null), as ``(key, value)``, or ``(None, None)``."""
    for key in keys:
        if cfg.get(key) is not None:
            return key, cfg[key]
    return None, None


def first_int(cfg: HfConfig, keys: tuple[str, ...], default: int | None = None, *,
              min: int = 1) -> int:
    """The first of ``keys`` the config sets, as an integer; ``default`` (if given) when none is."""
    key, value = first_set(cfg, keys)
    if key is None:
        if default is None:
            raise KvsimError(f"config.json is missing field {keys[0]!r} (or {', '.join(keys[1:])}): "
                             f"expected an integer >= {min}")
        return default
    return strict_int(key, value, min=min)
