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

import json
from pathlib import Path
from typing import Mapping

from kvsim.errors import KvsimError, check_int

__all__ = ["load_config", "text_config", "strict_int", "required_int", "optional_int",
           "optional_bool", "first_set", "first_int"]


def strict_int(name: str, value, *, min: int | None = None, max: int | None = None) -> int:
    """Like ``check_int`` but refuses strings and floats: config fields must be JSON integers."""
    if isinstance(value, bool) or not isinstance(value, int):
        rng = f">= {min}" if max is None else f"in [{min}, {max}]"
        raise KvsimError(f"{name}={value!r} has the wrong type: expected an integer {rng}")
    return check_int(name, value, min=min, max=max)


def load_config(path_or_dict) -> tuple[dict, str, str]:
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
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise KvsimError(f"config path {str(path)!r} cannot be read ({reason}): expected a "
                         f"readable config.json") from None
    try:
        cfg = json.loads(text)
    except json.JSONDecodeError as exc:
        raise KvsimError(f"config path {str(path)!r} is not valid JSON ({exc.msg} at line "
                         f"{exc.lineno} column {exc.colno}): expected a config.json object") from None
    if not isinstance(cfg, dict):
        raise KvsimError(f"config path {str(path)!r} holds a JSON {type(cfg).__name__}: "
                         f"expected a JSON object")
    stem = path.parent.name if path.stem == "config" and path.parent.name else path.stem
    return cfg, f"hf-config:{path}", stem or "hf-config"


def text_config(cfg: dict) -> dict:
    """Multimodal configs nest the language model under ``text_config``."""
    if "num_hidden_layers" not in cfg and isinstance(cfg.get("text_config"), dict):
        merged = dict(cfg["text_config"])
        for key in ("torch_dtype", "dtype", "quantization_config", "_name_or_path",
                    "tie_word_embeddings"):
            if key in cfg and key not in merged:
                merged[key] = cfg[key]
        return merged
    return cfg


def required_int(cfg: dict, key: str, *, min: int = 1, max: int | None = None) -> int:
    """The integer field ``key``, which must be set (a one-line error names it otherwise)."""
    if key not in cfg or cfg[key] is None:
        raise KvsimError(f"config.json is missing field {key!r}: expected an integer >= {min}")
    return strict_int(key, cfg[key], min=min, max=max)


def optional_int(cfg: dict, key: str, default, *, min: int = 0):
    """The integer field ``key``, or ``default`` when it is absent or null."""
    if cfg.get(key) is None:
        return default
    return strict_int(key, cfg[key], min=min)


def optional_bool(cfg: dict, key: str, default: bool) -> bool:
    """The true/false field ``key``, or ``default`` when it is absent or null."""
    value = cfg.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise KvsimError(f"{key}={value!r} has the wrong type: expected true or false")
    return value


def first_set(cfg: dict, keys: tuple[str, ...]):
    """The first of ``keys`` the config sets (not null), as ``(key, value)``, or ``(None, None)``."""
    for key in keys:
        if cfg.get(key) is not None:
            return key, cfg[key]
    return None, None


def first_int(cfg: dict, keys: tuple[str, ...], default=None, *, min: int = 1) -> int:
    """The first of ``keys`` the config sets, as an integer; ``default`` (if given) when none is."""
    key, value = first_set(cfg, keys)
    if key is None:
        if default is None:
            raise KvsimError(f"config.json is missing field {keys[0]!r} (or {', '.join(keys[1:])}): "
                             f"expected an integer >= {min}")
        return default
    return strict_int(key, value, min=min)
