"""torch.onnx export of :class:`LlamaForCausalLM` with the KV cache as inputs and outputs.

Names and dynamic axes follow Optimum's Llama export, which transformers.js reads: inputs
``input_ids, attention_mask, position_ids, past_key_values.{i}.key/value``, outputs ``logits,
present.{i}.key/value``; the batch axis is ``batch_size`` and the cache's head and head_dim axes are
fixed numbers (transformers.js builds the empty first cache from them). Opset 14.

Beside it, ``model_cascade.onnx`` (:meth:`LlamaForCausalLM.forward_cascade`) decodes n samples of one
prompt: it takes the prompt's cache once, as ``prefix_key_values.{i}.key/value`` with batch 1, and the
samples' own cache as ``past_key_values.{i}.*``; it returns ``present.{i}.*`` of the samples' own
tokens only. Only the studio's policy host reads it; transformers.js never sees it.
"""
from __future__ import annotations

import inspect
import os
import shutil
import time
from typing import TYPE_CHECKING, Any

import onnx
import torch

from ..config_types import ExportSection
from ..errors import EXIT_RUNTIME, TrainerError
from ..model.folder import write_metadata
from .external_data import consolidate, externalize_small, share_weights
from .slots_graph import SLOTS_FILE, build_slots_graph, slots_supported

if TYPE_CHECKING:
    from ..model.llama import LlamaForCausalLM
    from ..tokenizer.tokenizer import Tokenizer

_TWO_GB = 2 ** 31
CASCADE_FILE = "model_cascade.onnx"
DEFAULT_SETTINGS = ExportSection()


def io_names(num_layers: int, cascade: bool = False) -> tuple[list[str], list[str], dict[str, dict[int, str]]]:
    """Input and output names and dynamic axes of the graph (``cascade``: of model_cascade.onnx)."""
    inputs = ["input_ids", "position_ids"] if cascade else ["input_ids", "attention_mask", "position_ids"]
    outputs = ["logits"]
    dynamic = {
        "input_ids": {0: "batch_size", 1: "sequence_length"},
        "position_ids": {0: "batch_size", 1: "sequence_length"},
        "logits": {0: "batch_size", 1: "sequence_length"},
    }
    if not cascade:
        dynamic["attention_mask"] = {0: "batch_size", 1: "past_sequence_length + sequence_length"}
    cache = [(i, kind) for i in range(num_layers) for kind in ("key", "value")]
    if cascade:
        for i, kind in cache:
            inputs.append(f"prefix_key_values.{i}.{kind}")
            dynamic[inputs[-1]] = {2: "prefix_sequence_length"}  # batch 1: one prompt for every sample
    for i, kind in cache:
        name_in, name_out = f"past_key_values.{i}.{kind}", f"present.{i}.{kind}"
        inputs.append(name_in)
        outputs.append(name_out)
        dynamic[name_in] = {0: "batch_size", 2: "past_sequence_length"}
        dynamic[name_out] = {0: "batch_size", 2: "past_sequence_length + sequence_length"}
    return inputs, outputs, dynamic


def _example_inputs(config, cascade=False):
    # Shapes differ on every dynamic axis (and from the fixed ones), so none gets folded into a constant:
    # a past of 4 and 3 new tokens for 2 rows; the cascade: a prefix of 5, a past of 4, 2 new tokens, 3 rows.
    g = torch.Generator().manual_seed(0)
    b, s, p = (3, 2, 4) if cascade else (2, 3, 4)
    prefix = 5 if cascade else 0
    ids = torch.randint(0, config.vocab_size, (b, s), generator=g)
    pos = torch.arange(prefix + p, prefix + p + s)[None].expand(b, s).contiguous()

    def cache(rows: int, length: int) -> list[torch.Tensor]:
        return [torch.randn(rows, config.num_key_value_heads, length, config.head_dim, generator=g)
                for _ in range(2 * config.num_hidden_layers)]
    if cascade:
        return (ids, pos, *cache(1, prefix), *cache(b, p))
    return (ids, torch.ones(b, p + s, dtype=torch.int64), pos, *cache(b, p))


class _CascadeGraph(torch.nn.Module):
    """:meth:`LlamaForCausalLM.forward_cascade` as a module's forward, for torch.onnx.export."""

    def __init__(self, model: LlamaForCausalLM) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.model.forward_cascade(*args)


def _trace(module, cascade, path, opset):
    inputs, outputs, dynamic = io_names(module.config.num_hidden_layers, cascade)
    # torch >= 2.5 also has a dynamo-based exporter (the default in recent versions); this export is
    # written for, and tested with, the TorchScript one.
    extra = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with torch.no_grad():
            torch.onnx.export(_CascadeGraph(module) if cascade else module, _example_inputs(module.config, cascade),
                              path, input_names=inputs, output_names=outputs, dynamic_axes=dynamic,
                              opset_version=opset, do_constant_folding=True, **extra)
    except Exception as e:  # torch's exporter raises many types; the message is what helps
        raise TrainerError("EXPORT_FAILED", f"torch.onnx.export failed: {e}", EXIT_RUNTIME) from e


def export_onnx(model: LlamaForCausalLM, onnx_dir: str, opset: int = 14, external_data: str = "auto",
                cascade: bool = True, slots: bool = False) -> tuple[int, bool, int, int]:
    """Writes ``onnx_dir/model.onnx`` (+ ``model.onnx_data``), with ``cascade`` ``model_cascade.onnx``
    (its weights in the same ``model.onnx_data`` when there is one), and with ``slots``
    ``model_slots.onnx`` (:mod:`.slots_graph`, the main graph's weights referenced) where the model
    allows it; returns ``(bytes, external, cascade_bytes, slots_bytes)``."""
    was_training = model.training
    model.eval()
    attention = model.attention
    model.attention = "eager"  # the exported graph is plain matmul/softmax attention
    tmp = onnx_dir.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    # Each graph in its own folder: past 2 GB torch writes one file per tensor beside it.
    try:
        _trace(model, False, os.path.join(tmp, "main", "model.onnx"), opset)
        if cascade:
            _trace(model, True, os.path.join(tmp, "cascade", CASCADE_FILE), opset)
    finally:
        model.attention = attention
        model.train(was_training)
    shutil.rmtree(onnx_dir, ignore_errors=True)
    os.makedirs(onnx_dir)
    target = os.path.join(onnx_dir, "model.onnx")
    source = os.path.join(tmp, "main", "model.onnx")
    split = len(os.listdir(os.path.dirname(source))) > 1  # torch wrote one file per tensor: the model passed 2 GB
    if split and external_data == "never":
        raise TrainerError("EXPORT_FAILED", "The model passes 2 GB: set export.external_data to auto.", EXIT_RUNTIME)
    if split:
        data_bytes = consolidate(source, target)
    elif external_data == "always":
        data_bytes = externalize_small(source, target)
    else:
        os.replace(source, target)
        data_bytes = 0
    onnx.checker.check_model(target)
    external = data_bytes > 0
    cascade_bytes = 0
    if cascade:
        cascade_target = os.path.join(onnx_dir, CASCADE_FILE)
        if external:
            share_weights(os.path.join(tmp, "cascade", CASCADE_FILE), cascade_target, target)
        else:
            os.replace(os.path.join(tmp, "cascade", CASCADE_FILE), cascade_target)
        onnx.checker.check_model(cascade_target)
        cascade_bytes = os.path.getsize(cascade_target)
    shutil.rmtree(tmp, ignore_errors=True)
    slots_bytes = 0
    if slots and slots_supported(model) is None:
        slots_bytes = build_slots_graph(model, target, os.path.join(onnx_dir, SLOTS_FILE))
    return os.path.getsize(target) + data_bytes, external, cascade_bytes, slots_bytes


def export_model_folder(model: LlamaForCausalLM, tokenizer: Tokenizer, tokenizer_dir: str, folder: str,
                        settings: ExportSection | None = None) -> dict[str, Any]:
    """A complete folder the policy host loads; returns a summary for the ``export`` event.

    ``settings``: the config's ``export`` object (opset, external_data, max_new_tokens, cascade);
    None takes the defaults."""
    ex = settings or DEFAULT_SETTINGS
    t0 = time.monotonic()
    model_cpu = model if next(model.parameters()).device.type == "cpu" else _cpu_copy(model)
    size, external, cascade_bytes, slots_bytes = export_onnx(model_cpu, os.path.join(folder, "onnx"), ex.opset,
                                                             ex.external_data, ex.cascade, ex.slots)
    extra = {"transformers.js_config": {"use_external_data_format": {"model.onnx": 1}}} if external else None
    write_metadata(folder, model.config, tokenizer, tokenizer_dir, ex.max_new_tokens, extra)
    summary = {"path": os.path.abspath(folder), "onnx_bytes": size, "external_data": external}
    if ex.cascade:
        summary["cascade_bytes"] = cascade_bytes
    if slots_bytes:
        summary["slots_bytes"] = slots_bytes
    summary["seconds"] = round(time.monotonic() - t0, 3)
    return summary


def _cpu_copy(model):
    from ..model.llama import LlamaForCausalLM
    copy = LlamaForCausalLM(model.config)
    copy.load_state_dict({k: v.detach().float().cpu() for k, v in model.state_dict().items()})
    return copy
