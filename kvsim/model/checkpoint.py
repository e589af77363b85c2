"""The weight bytes of the checkpoint beside a ``config.json``, read without the tensors.

Explained in chapter 1, *Bytes per token and capacity*.

A checkpoint folder's ``model.safetensors.index.json`` gives the bytes of
every tensor (``metadata.total_size``); a single ``model.safetensors`` gives
them in its header. :meth:`ModelSpec.from_hf_config
<kvsim.model.spec.ModelSpec.from_hf_config>` makes the figure the spec's
``checkpoint_bytes``, the weight memory.
"""
from __future__ import annotations

import json
from pathlib import Path

from kvsim.errors import KvsimError
from kvsim.files import parse_json, read_user_bytes

__all__ = ["config_folder", "read_checkpoint_bytes", "MAX_INDEX_BYTES", "MAX_CHECKPOINT_BYTES"]

#: The largest ``model.safetensors.index.json`` kvsim reads: 64 MiB (DeepSeek-V3's, with
#: 91,991 tensors, is a few megabytes).
MAX_INDEX_BYTES = 64 * 2**20
#: The largest checkpoint kvsim believes: 2**50 bytes (1 PiB; the largest open checkpoints
#: are about 2 TB).
MAX_CHECKPOINT_BYTES = 2**50


def config_folder(path_or_dict: object) -> Path | None:
    """The folder a config path points into (``None`` for a dict)."""
    if not isinstance(path_or_dict, (str, Path)):
        return None
    path = Path(path_or_dict)
    return path if path.is_dir() else path.parent


def read_checkpoint_bytes(folder: Path | None) -> tuple[int, str] | None:
    """The checkpoint's weight bytes and where they came from, or ``None``.

    ``model.safetensors.index.json``'s ``metadata.total_size`` (the bytes of
    every tensor of a sharded checkpoint), else the tensors listed in a single
    ``model.safetensors`` header (read without the tensors).
    """
    if folder is None:
        return None
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        return _index_total_size(index), f"{index} (metadata.total_size)"
    single = folder / "model.safetensors"
    if single.is_file():
        return _safetensors_data_bytes(single), f"{single} (header)"
    return None


def _index_total_size(path: Path) -> int:
    expected = "expected a JSON object whose metadata.total_size is an integer >= 1"
    data = read_user_bytes(path, what="checkpoint index", expected=expected[9:],
                           max_bytes=MAX_INDEX_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise KvsimError(f"checkpoint index {str(path)!r} is not UTF-8 text: {expected}") from None
    index = parse_json(text, where=f"checkpoint index {str(path)!r}", expected=expected[9:])
    meta = index.get("metadata") if isinstance(index, dict) else None
    total = meta.get("total_size") if isinstance(meta, dict) else None
    if isinstance(total, bool) or not isinstance(total, (int, float)) \
            or not 1 <= total <= MAX_CHECKPOINT_BYTES or total != int(total):
        raise KvsimError(f"checkpoint index {str(path)!r} has metadata.total_size={total!r}: {expected}")
    return int(total)


def _safetensors_data_bytes(path: Path) -> int:
    """Sum of the tensors' byte ranges in a safetensors header.

    The file starts with the header's length (8 bytes, little-endian), then
    the header: JSON mapping each tensor name to its dtype, shape and
    ``data_offsets`` (begin, end) in the data that follows.
    """
    expected = "expected a safetensors file (8-byte little-endian header length, then a JSON header)"
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            length = int.from_bytes(f.read(8), "little")
            if size < 8 or not 2 <= length <= min(size - 8, 100_000_000):
                raise KvsimError(f"checkpoint {str(path)!r} has a header length of {length} bytes "
                                 f"in a file of {size}: {expected}")
            header = json.loads(f.read(length).decode("utf-8"))
    except KvsimError:
        raise
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise KvsimError(f"checkpoint {str(path)!r} cannot be read ({reason}): {expected}") from None
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise KvsimError(f"checkpoint {str(path)!r} has a header that is not JSON: {expected}") from None
    if not isinstance(header, dict):
        raise KvsimError(f"checkpoint {str(path)!r} has a JSON {type(header).__name__} header: "
                         f"{expected}")
    total = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        offsets = info.get("data_offsets") if isinstance(info, dict) else None
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1]):
            raise KvsimError(f"checkpoint {str(path)!r} tensor {name!r:.60} has data_offsets="
                             f"{offsets!r:.40}: expected [begin, end] with 0 <= begin <= end")
        total += offsets[1] - offsets[0]
    if total < 1 or total > size - 8 - length:
        raise KvsimError(f"checkpoint {str(path)!r} lists {total} tensor bytes in a file of {size}: "
                         f"expected between 1 and {size - 8 - length}")
    return total
