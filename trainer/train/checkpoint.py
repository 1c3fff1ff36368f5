"""Checkpoints: ``<out_dir>/checkpoints/step-<n>/`` is a model folder plus ``trainer_state.pt``
(optimizer, step, data position, every RNG state, loop state). Written to a ``.tmp`` folder, flushed
to disk, then renamed, and ``checkpoints/latest`` names the newest: a run killed at any moment leaves
either the previous checkpoint or the new one, never half of one.
"""
from __future__ import annotations

import os
import random
import shutil
from typing import TYPE_CHECKING, Any

import torch

from ..errors import TrainerError
from ..model.folder import write_model_folder

if TYPE_CHECKING:
    from ..tokenizer.tokenizer import Tokenizer
    from .common import Policy

STATE = "trainer_state.pt"


def rng_state() -> dict[str, Any]:
    state = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def _fsync_tree(folder):
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                os.fsync(f.fileno())


def _write_atomic_text(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def save_checkpoint(run_dir: str, step: int, model: Policy, optimizer: torch.optim.Optimizer,
                    loop_state: dict[str, Any], tokenizer: Tokenizer, tokenizer_dir: str, keep: int) -> str:
    """Writes checkpoint ``step`` and prunes all but the newest ``keep``; returns its folder."""
    root = os.path.join(run_dir, "checkpoints")
    name = f"step-{step:08d}"
    final = os.path.join(root, name)
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    write_model_folder(tmp, model, tokenizer, tokenizer_dir)
    state = {"step": step, "optimizer": optimizer.state_dict(), "rng": rng_state(), "loop": loop_state}
    torch.save(state, os.path.join(tmp, STATE))
    _fsync_tree(tmp)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _write_atomic_text(os.path.join(root, "latest"), name + "\n")
    complete = sorted(d for d in os.listdir(root) if d.startswith("step-") and not d.endswith(".tmp"))
    for old in complete[:-keep]:
        shutil.rmtree(os.path.join(root, old), ignore_errors=True)
    return final


def find_latest(run_dir: str) -> str | None:
    """The newest complete checkpoint folder of a run, or None."""
    root = os.path.join(run_dir, "checkpoints")
    if not os.path.isdir(root):
        return None
    try:
        with open(os.path.join(root, "latest"), encoding="utf-8") as f:
            named = os.path.join(root, f.read().strip())
        if os.path.exists(os.path.join(named, STATE)):
            return named
    except FileNotFoundError:
        pass
    complete = sorted(d for d in os.listdir(root)
                      if d.startswith("step-") and not d.endswith(".tmp") and os.path.exists(os.path.join(root, d, STATE)))
    return os.path.join(root, complete[-1]) if complete else None


def load_state(folder: str) -> dict[str, Any]:
    try:
        return torch.load(os.path.join(folder, STATE), map_location="cpu", weights_only=False)  # our own file
    except (OSError, RuntimeError, EOFError) as e:
        raise TrainerError("CHECKPOINT_INVALID", f"Cannot read {folder}/{STATE} ({e}); delete that checkpoint folder to "
                           "resume from the one before it.") from e
