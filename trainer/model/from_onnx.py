"""Weights back from an exported policy: a model folder that holds only ``onnx/model.onnx`` (the embedded
default policy, any folder the studio runs) can be trained again without its PyTorch checkpoint.

The export names the embedding and norm weights after their parameters (equal ones share a tensor
through ``Identity`` nodes); each ``Linear`` becomes a
``MatMul`` node named after its module (``/layers.0/self_attn/q_proj/MatMul``) whose second input is the
transposed weight. Reading those back gives the state dict; the caller's strict load is the check that
nothing is missing.
"""
from __future__ import annotations

import os

import torch

from ..errors import TrainerError

ONNX_FILE = os.path.join("onnx", "model.onnx")


def state_dict_from_onnx(folder: str) -> dict[str, torch.Tensor]:
    """The PyTorch state dict of ``folder``'s exported graph (float32 tensors)."""
    path = os.path.join(folder, ONNX_FILE)
    try:
        import onnx
        from onnx import numpy_helper
        graph = onnx.load(path).graph  # external data (model.onnx_data) is read from the same folder
    except Exception as e:  # noqa: BLE001 - onnx raises several types for broken files
        raise TrainerError("MODEL_MISSING", f"{path} cannot be read to recover its weights ({e}); "
                           "point model.path at a folder with pytorch_model.bin, or re-export the model.") from e
    arrays = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    # The exporter keeps one copy of equal initializers (norm weights still at 1.0, say) and names the
    # others as Identity outputs.
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in arrays:
            arrays[node.output[0]] = arrays[node.input[0]]
    sd = {name: torch.from_numpy(a.copy()) for name, a in arrays.items() if name.startswith(("model.", "lm_head."))}
    for node in graph.node:
        if node.op_type != "MatMul" or not node.name.endswith("/MatMul") or len(node.input) != 2:
            continue
        weight = node.input[1]
        if weight not in arrays or weight in sd:
            continue
        module = node.name[1:-len("/MatMul")].replace("/", ".")
        key = (module if module.startswith("lm_head") else "model." + module) + ".weight"
        sd[key] = torch.from_numpy(arrays[weight].T.copy())
    return sd
