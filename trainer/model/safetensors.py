"""Hugging Face weight folders: ``model.safetensors``, or shards named by ``model.safetensors.index.json``.

The bytes of each file are read and written by the ``safetensors`` package, which checks a file's
header against its size (offsets, dtypes, shapes, a 100 MB header cap) before any tensor is touched.
This module adds what the package leaves to its callers: the sharded index whose ``weight_map`` names
the file of every tensor (what transformers' ``save_pretrained`` writes, and so what EnvACE's
``scripts/model_merger.py`` leaves), bounds on that index, atomic writes, and coded errors: a damaged
file is a ``WEIGHTS_INVALID`` error naming the file, never a crash deep inside the reader.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ..errors import TrainerError

SINGLE_FILE = "model.safetensors"
INDEX_FILE = "model.safetensors.index.json"
MAX_TENSORS = 100_000
MAX_SHARDS = 10_000
MAX_INDEX_BYTES = 64 * 2 ** 20
#: transformers' default shard size for ``save_pretrained``.
DEFAULT_SHARD_BYTES = 5 * 10 ** 9
#: ``progress(done, total, file)``, called after each weights file is read.
Progress = Callable[[int, int, str], None]


def _broken(path, what):
    return TrainerError("WEIGHTS_INVALID", f"{path} is not a valid safetensors file: {what}. "
                        "Copy it again from where it was made (or re-run the merge that wrote it).")


def read_file(path: str) -> dict[str, torch.Tensor]:
    """``{name: tensor}`` of a safetensors file, in its stored dtypes (on the CPU).

    The tensors are memory-mapped copy-on-write, as transformers loads them: changing one in place
    leaves the file alone, and every writer here replaces files rather than rewriting them."""
    try:
        return load_file(path)
    except SafetensorError as e:
        raise _broken(path, str(e)) from e
    except OSError as e:
        raise TrainerError("MODEL_MISSING", f"Cannot read {path}: {e.strerror or e}.") from e


def _own_storage(tensors):
    """Contiguous CPU tensors, each with its own storage: safetensors refuses tensors that share memory
    (a tied lm_head), so a tensor whose storage an earlier one already holds is written as a copy."""
    seen, owned = set(), {}
    for name in sorted(tensors):
        t = tensors[name].detach().to("cpu").contiguous()
        ptr = t.untyped_storage().data_ptr()
        owned[name] = t.clone() if ptr in seen and t.numel() else t
        seen.add(ptr)
    return owned


def write_file(path: str, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> None:
    """Writes ``{name: tensor}`` as one safetensors file (atomically: a temporary file, then renamed)."""
    meta = {str(k): str(v) for k, v in metadata.items()} if metadata else None
    try:
        save_file(_own_storage(tensors), path + ".tmp", meta)
    except (SafetensorError, ValueError, TypeError, KeyError) as e:
        raise TrainerError("EXPORT_FAILED", f"Cannot write {path} as safetensors ({type(e).__name__}: {e}).") from e
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
        raise TrainerError("WEIGHTS_INVALID",
                           f"{path} is not a JSON object with a weight_map ({e}); copy the folder again.") from e
    if not isinstance(weight_map, dict) or not weight_map:
        raise TrainerError("WEIGHTS_INVALID", f"{path} has no weight_map of tensor names to shard files; copy the folder again.")
    shards: dict[str, set[str]] = {}
    for name, file in weight_map.items():
        if not isinstance(file, str) or os.path.basename(file) != file or not file.endswith(".safetensors"):
            raise TrainerError("WEIGHTS_INVALID",
                               f"{path} maps {name!r} to {file!r}; shards must be .safetensors files beside the index.")
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
                           f"{INDEX_FILE} names ({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}); "
                           "copy them beside it.")
    tensors = {}
    for i, file in enumerate(sorted(shards), 1):
        got = read_file(os.path.join(folder, file))
        absent = sorted(shards[file] - set(got))
        if absent:
            raise TrainerError("WEIGHTS_INVALID", f"{file} lacks {absent[0]} (and {len(absent) - 1} more), "
                               f"which {INDEX_FILE} places there; copy the folder again.")
        tensors.update({k: v for k, v in got.items() if k in shards[file]})
        if progress:
            progress(i, len(shards), file)
    return tensors


def write_folder(folder: str, tensors: dict[str, torch.Tensor], max_shard_bytes: int = DEFAULT_SHARD_BYTES,
                 metadata: dict[str, str] | None = None) -> list[str]:
    """Writes ``model.safetensors``, or shards ``model-0000i-of-0000n.safetensors`` and their index when the
    tensors pass ``max_shard_bytes``; returns the file names written. Stale weight files are removed."""
    groups: list[list[str]] = [[]]
    size = 0
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
