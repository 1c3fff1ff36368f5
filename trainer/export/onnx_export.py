"""torch.onnx export of :class:`LlamaForCausalLM` with the KV cache as inputs and outputs.

Names and dynamic axes follow Optimum's Llama export, which transformers.js reads: inputs
``input_ids, attention_mask, position_ids, past_key_values.{i}.key/value``, outputs ``logits,
present.{i}.key/value``; the batch axis is ``batch_size`` and the cache's head and head_dim axes are
fixed numbers (transformers.js builds the empty first cache from them). Opset 14.
"""
import inspect
import os
import shutil
import time

import onnx
import torch

from ..errors import TrainerError, EXIT_RUNTIME
from ..model.folder import write_metadata
from .external_data import consolidate, externalize_small

_TWO_GB = 2 ** 31


def io_names(num_layers):
    inputs = ["input_ids", "attention_mask", "position_ids"]
    outputs = ["logits"]
    dynamic = {
        "input_ids": {0: "batch_size", 1: "sequence_length"},
        "attention_mask": {0: "batch_size", 1: "past_sequence_length + sequence_length"},
        "position_ids": {0: "batch_size", 1: "sequence_length"},
        "logits": {0: "batch_size", 1: "sequence_length"},
    }
    for i in range(num_layers):
        for kind in ("key", "value"):
            name_in, name_out = f"past_key_values.{i}.{kind}", f"present.{i}.{kind}"
            inputs.append(name_in)
            outputs.append(name_out)
            dynamic[name_in] = {0: "batch_size", 2: "past_sequence_length"}
            dynamic[name_out] = {0: "batch_size", 2: "past_sequence_length + sequence_length"}
    return inputs, outputs, dynamic


def _example_inputs(config):
    # A past of 4 and 3 new tokens: shapes differ on every axis, so none gets folded into a constant.
    g = torch.Generator().manual_seed(0)
    b, s, p = 2, 3, 4
    ids = torch.randint(0, config.vocab_size, (b, s), generator=g)
    mask = torch.ones(b, p + s, dtype=torch.int64)
    pos = torch.arange(p, p + s)[None].expand(b, s).contiguous()
    past = [torch.randn(b, config.num_key_value_heads, p, config.head_dim, generator=g)
            for _ in range(2 * config.num_hidden_layers)]
    return (ids, mask, pos, *past)


def export_onnx(model, onnx_dir, opset=14, external_data="auto"):
    """Writes ``onnx_dir/model.onnx`` (+ ``model.onnx_data``); returns ``(bytes, external)``."""
    config = model.config
    was_training = model.training
    model.eval()
    attention = model.attention
    model.attention = "eager"  # the exported graph is plain matmul/softmax attention
    tmp = onnx_dir.rstrip("/") + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    inputs, outputs, dynamic = io_names(config.num_hidden_layers)
    # torch >= 2.5 also has a dynamo-based exporter (the default in recent versions); this export is
    # written for, and tested with, the TorchScript one.
    extra = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    try:
        with torch.no_grad():
            torch.onnx.export(model, _example_inputs(config), os.path.join(tmp, "model.onnx"),
                              input_names=inputs, output_names=outputs, dynamic_axes=dynamic,
                              opset_version=opset, do_constant_folding=True, **extra)
    except Exception as e:  # torch's exporter raises many types; the message is what helps
        raise TrainerError("EXPORT_FAILED", f"torch.onnx.export failed: {e}", EXIT_RUNTIME)
    finally:
        model.attention = attention
        model.train(was_training)
    shutil.rmtree(onnx_dir, ignore_errors=True)
    os.makedirs(onnx_dir)
    target = os.path.join(onnx_dir, "model.onnx")
    split = len(os.listdir(tmp)) > 1  # torch wrote one file per tensor: the model passed 2 GB
    if split and external_data == "never":
        raise TrainerError("EXPORT_FAILED", "The model passes 2 GB: set export.external_data to auto.", EXIT_RUNTIME)
    if split:
        data_bytes = consolidate(os.path.join(tmp, "model.onnx"), target)
    elif external_data == "always":
        data_bytes = externalize_small(os.path.join(tmp, "model.onnx"), target)
    else:
        os.replace(os.path.join(tmp, "model.onnx"), target)
        data_bytes = 0
    shutil.rmtree(tmp, ignore_errors=True)
    onnx.checker.check_model(target)
    external = data_bytes > 0
    return os.path.getsize(target) + data_bytes, external


def export_model_folder(model, tokenizer, tokenizer_dir, folder, opset=14, external_data="auto", max_new_tokens=512):
    """A complete folder the policy host loads; returns a summary for the ``export`` event."""
    t0 = time.monotonic()
    model_cpu = model if next(model.parameters()).device.type == "cpu" else _cpu_copy(model)
    size, external = export_onnx(model_cpu, os.path.join(folder, "onnx"), opset, external_data)
    extra = {"transformers.js_config": {"use_external_data_format": {"model.onnx": 1}}} if external else None
    write_metadata(folder, model.config, tokenizer, tokenizer_dir, max_new_tokens, extra)
    return {"path": os.path.abspath(folder), "onnx_bytes": size, "external_data": external,
            "seconds": round(time.monotonic() - t0, 3)}


def _cpu_copy(model):
    from ..model.llama import LlamaForCausalLM
    copy = LlamaForCausalLM(model.config)
    copy.load_state_dict({k: v.detach().float().cpu() for k, v in model.state_dict().items()})
    return copy
