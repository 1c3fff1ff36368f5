"""The ``.safetensors`` format, read and written by the trainer itself (no ``safetensors`` package here).

A file is an 8-byte little-endian header length, a JSON header ``{name: {"dtype", "shape",
"data_offsets": [begin, end]}, "__metadata__": {str: str}}``, then the raw little-endian data of every
tensor, offsets counted from the end of the header. A sharded folder holds several such files and
``model.safetensors.index.json`` whose ``weight_map`` names the file of every tensor (what
transformers' ``save_pretrained`` writes, and so what EnvACE's ``scripts/model_merger.py`` leaves).

Everything read is bounded: the header's size, the number of tensors and shards, and every offset
against the file's real size. A damaged file is a ``WEIGHTS_INVALID`` error naming the file and what is
wrong with it, never a crash deep inside torch.
"""
from __future__ import annotations

import json
import os
import struct
from typing import Any, Callable

import numpy as np
import torch

from ..errors import TrainerError

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
#: The reference implementation refuses headers above 100 MB; so do we.
MAX_HEADER_BYTES = 100_000_000
MAX_TENSORS = 100_000
MAX_SHARDS = 10_000
MAX_INDEX_BYTES = 64 * 2 ** 20
#: transformers' default shard size for ``save_pretrained``.
DEFAULT_SHARD_BYTES = 5 * 10 ** 9
#: ``progress(done, total, file)``, called after each weights file is read.
Progress = Callable[[int, int, str], None]

# dtype name -> (torch dtype, numpy dtype of the same bytes). bfloat16 has no numpy type: its bytes are
# read as int16 and viewed as bfloat16 by torch.
DTYPES = {
    "F64": (torch.float64, "<f8"), "F32": (torch.float32, "<f4"), "F16": (torch.float16, "<f2"),
    "BF16": (torch.bfloat16, "<i2"), "I64": (torch.int64, "<i8"), "I32": (torch.int32, "<i4"),
    "I16": (torch.int16, "<i2"), "I8": (torch.int8, "i1"), "U8": (torch.uint8, "u1"), "BOOL": (torch.bool, "?"),
}
_NAMES = {torch_dtype: name for name, (torch_dtype, _) in DTYPES.items()}


def _broken(path, what):
    return TrainerError("WEIGHTS_INVALID", f"{path} is not a valid safetensors file: {what}. "
                        "Copy it again from where it was made (or re-run the merge that wrote it).")


def read_header(path: str) -> tuple[dict[str, Any], int]:
    """``(header dict, data start)`` of a safetensors file, checked against the file's size."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise _broken(path, f"it has {size} bytes, fewer than the 8 of the header length")
            (n,) = struct.unpack("<Q", head)
            if n > MAX_HEADER_BYTES or n > size - 8:
                raise _broken(path, f"its header says {n} bytes (the file has {size}; at most {MAX_HEADER_BYTES} are read)")
            raw = f.read(n)
    except OSError as e:
        raise TrainerError("MODEL_MISSING", f"Cannot read {path}: {e.strerror or e}.")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise _broken(path, f"its header is not JSON ({e})")
    if not isinstance(header, dict):
        raise _broken(path, "its header is not a JSON object")
    count = len(header) - ("__metadata__" in header)
    if count > MAX_TENSORS:
        raise _broken(path, f"it declares {count} tensors (at most {MAX_TENSORS} are read)")
    _check_entries(path, header, size - 8 - n)
    return header, 8 + n


def _check_entries(path, header, data_bytes):
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise _broken(path, "__metadata__ must map strings to strings")
            continue
        if not isinstance(entry, dict) or entry.get("dtype") not in DTYPES:
            raise _broken(path, f"tensor {name!r} has dtype {entry.get('dtype') if isinstance(entry, dict) else entry!r}; "
                          f"the trainer reads {', '.join(DTYPES)}")
        shape, offsets = entry.get("shape"), entry.get("data_offsets")
        if not isinstance(shape, list) or len(shape) > 8 or not all(isinstance(d, int) and d >= 0 for d in shape):
            raise _broken(path, f"tensor {name!r} has shape {shape!r}")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(o, int) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= data_bytes):
            raise _broken(path, f"tensor {name!r} has data_offsets {offsets!r} (the data part has {data_bytes} bytes)")
        itemsize = np.dtype(DTYPES[entry["dtype"]][1]).itemsize
        if offsets[1] - offsets[0] != int(np.prod(shape, dtype=np.int64)) * itemsize:
            raise _broken(path, f"tensor {name!r} of shape {shape} and dtype {entry['dtype']} cannot fill "
                          f"{offsets[1] - offsets[0]} bytes")


def read_file(path: str) -> dict[str, torch.Tensor]:
    """``{name: tensor}`` of a safetensors file, in its stored dtypes (on the CPU)."""
    header, start = read_header(path)
    tensors = {}
    with open(path, "rb") as f:
        for name, entry in header.items():
            if name == "__metadata__":
                continue
            torch_dtype, np_dtype = DTYPES[entry["dtype"]]
            begin, end = entry["data_offsets"]
            f.seek(start + begin)
            array = np.frombuffer(f.read(end - begin), dtype=np_dtype).reshape(entry["shape"])
            t = torch.from_numpy(array.copy())
            tensors[name] = t.view(torch.bfloat16) if torch_dtype is torch.bfloat16 else t
    return tensors


def _tensor_bytes(t):
    t = t.detach().to("cpu").contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    array = t.numpy()
    return array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def write_file(path: str, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> None:
    """Writes ``{name: tensor}`` as one safetensors file (atomically: a temporary file, then renamed)."""
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in _NAMES:
            raise TrainerError("EXPORT_FAILED", f"tensor {name} has dtype {t.dtype}, which safetensors cannot hold here.")
        data = _tensor_bytes(t)
        header[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # the data starts 8-byte aligned, as the reference writer does
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for data in chunks:
            f.write(data)
    os.replace(path + ".tmp", path)


def has_weights(folder: str) -> bool:
    """Whether ``folder`` holds safetensors weights (one file or a sharded index)."""
    return any(os.path.exists(os.path.join(folder, f)) for f in (SINGLE_FILE, INDEX_FILE))


def read_index(folder: str) -> dict[str, set[str]]:
    """The shard file names of a sharded folder, each with the tensor names it should hold."""
    path = os.path.join(folder, INDEX_FILE)
    if os.path.getsize(path) > MAX_INDEX_BYTES:
        raise _broken(path, f"the index is larger than {MAX_INDEX_BYTES} bytes")
    try:
        with open(path, encoding="utf-8") as f:
            weight_map = json.load(f).get("weight_map")
    except (ValueError, AttributeError) as e:
        raise TrainerError("WEIGHTS_INVALID", f"{path} is not a JSON object with a weight_map ({e}); copy the folder again.")
    if not isinstance(weight_map, dict) or not weight_map:
        raise TrainerError("WEIGHTS_INVALID", f"{path} has no weight_map of tensor names to shard files; copy the folder again.")
    shards = {}
    for name, file in weight_map.items():
        if not isinstance(file, str) or os.path.basename(file) != file or not file.endswith(".safetensors"):
            raise TrainerError("WEIGHTS_INVALID", f"{path} maps {name!r} to {file!r}; shards must be .safetensors files beside the index.")
        shards.setdefault(file, set()).add(name)
    if len(shards) > MAX_SHARDS or len(weight_map) > MAX_TENSORS:
        raise TrainerError("WEIGHTS_INVALID", f"{path} names {len(shards)} shards and {len(weight_map)} tensors "
                           f"(at most {MAX_SHARDS} and {MAX_TENSORS} are read).")
    return shards


def read_folder(folder: str, progress: Progress | None = None) -> dict[str, torch.Tensor]:
    """Every tensor of a Hugging Face folder (``model.safetensors``, or the shards its index names).

    ``progress(done, total, file)`` is called after each file."""
    if not os.path.exists(os.path.join(folder, INDEX_FILE)):
        tensors = read_file(os.path.join(folder, SINGLE_FILE))
        if progress:
            progress(1, 1, SINGLE_FILE)
        return tensors
    shards = read_index(folder)
    missing = [f for f in sorted(shards) if not os.path.exists(os.path.join(folder, f))]
    if missing:
        raise TrainerError("MODEL_MISSING", f"{folder} lacks {len(missing)} of the {len(shards)} shards its "
                           f"{INDEX_FILE} names ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}); copy them beside it.")
    tensors = {}
    for i, file in enumerate(sorted(shards), 1):
        got = read_file(os.path.join(folder, file))
        absent = sorted(shards[file] - set(got))
        if absent:
            raise TrainerError("WEIGHTS_INVALID", f"{file} lacks {absent[0]} (and {len(absent) - 1} more), which {INDEX_FILE} places there; copy the folder again.")
        tensors.update({k: v for k, v in got.items() if k in shards[file]})
        if progress:
            progress(i, len(shards), file)
    return tensors


def write_folder(folder: str, tensors: dict[str, torch.Tensor], max_shard_bytes: int = DEFAULT_SHARD_BYTES,
                 metadata: dict[str, str] | None = None) -> list[str]:
    """Writes ``model.safetensors``, or shards ``model-0000i-of-0000n.safetensors`` and their index when the
    tensors pass ``max_shard_bytes``; returns the file names written. Stale weight files are removed."""
    groups, size = [[]], 0
    for name in sorted(tensors):
        n = tensors[name].numel() * tensors[name].element_size()
        if groups[-1] and size + n > max_shard_bytes:
            groups.append([])
            size = 0
        groups[-1].append(name)
        size += n
    for old in os.listdir(folder):
        if old.endswith(".safetensors") or old == INDEX_FILE:
            os.remove(os.path.join(folder, old))
    meta = {"format": "pt", **(metadata or {})}
    if len(groups) == 1:
        write_file(os.path.join(folder, SINGLE_FILE), tensors, meta)
        return [SINGLE_FILE]
    names, weight_map = [], {}
    for i, group in enumerate(groups, 1):
        file = f"model-{i:05d}-of-{len(groups):05d}.safetensors"
        write_file(os.path.join(folder, file), {k: tensors[k] for k in group}, meta)
        weight_map.update({k: file for k in group})
        names.append(file)
    total = sum(t.numel() * t.element_size() for t in tensors.values())
    with open(os.path.join(folder, INDEX_FILE), "w", encoding="utf-8") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return names + [INDEX_FILE]
