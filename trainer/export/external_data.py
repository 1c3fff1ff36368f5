"""Moving ONNX weights into one ``model.onnx_data`` file beside ``model.onnx``.

torch.onnx writes a model past protobuf's 2 GB limit as one file per tensor; transformers.js loads
``<name>.onnx_data`` only. The tensors are copied one at a time, so memory stays flat whatever the size.
"""
import os

import onnx

_CHUNK = 64 << 20


def _tensors(model):
    for t in model.graph.initializer:
        yield t
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                yield attr.t


def _info(tensor):
    return {e.key: e.value for e in tensor.external_data}


def _set_external(tensor, location, offset, length):
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tensor.data_location = onnx.TensorProto.EXTERNAL


def consolidate(src_path, dst_path, data_name="model.onnx_data"):
    """Writes ``dst_path`` + ``data_name`` (same folder) from ``src_path`` and the tensor files beside it.

    Tensors stored inside the proto (small constants) stay there; returns the bytes of the data file.
    """
    src_dir = os.path.dirname(os.path.abspath(src_path))
    model = onnx.load(src_path, load_external_data=False)
    data_path = os.path.join(os.path.dirname(os.path.abspath(dst_path)), data_name)
    offset = 0
    with open(data_path, "wb") as out:
        for tensor in _tensors(model):
            if tensor.data_location != onnx.TensorProto.EXTERNAL:
                continue
            info = _info(tensor)
            start = int(info.get("offset", 0))
            with open(os.path.join(src_dir, info["location"]), "rb") as f:
                f.seek(start)
                remaining = int(info["length"]) if "length" in info else None
                length = 0
                while remaining is None or remaining > 0:
                    chunk = f.read(_CHUNK if remaining is None else min(_CHUNK, remaining))
                    if not chunk:
                        break
                    out.write(chunk)
                    length += len(chunk)
                    if remaining is not None:
                        remaining -= len(chunk)
            _set_external(tensor, data_name, offset, length)
            offset += length
    onnx.save(model, dst_path)
    return offset


def externalize_small(src_path, dst_path, data_name="model.onnx_data"):
    """A model that fits in one proto, rewritten with its weights in ``data_name`` (export.external_data = always)."""
    model = onnx.load(src_path)
    onnx.save_model(model, dst_path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data_name, size_threshold=1024)
    return os.path.getsize(os.path.join(os.path.dirname(os.path.abspath(dst_path)), data_name))
