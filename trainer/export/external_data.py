"""Moving ONNX weights into one ``model.onnx_data`` file beside ``model.onnx``.

torch.onnx writes a model past protobuf's 2 GB limit as one file per tensor; transformers.js loads
``<name>.onnx_data`` only. The tensors are copied one at a time, so memory stays flat whatever the size.
A second graph of the same weights (``model_cascade.onnx``) points into that same file.
"""
import hashlib
import os

import onnx

_CHUNK = 64 << 20


def _tensors(model):
    yield from model.graph.initializer
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


def _read_chunks(path, start, length):
    with open(path, "rb") as f:
        f.seek(start)
        remaining = length
        while remaining is None or remaining > 0:
            chunk = f.read(_CHUNK if remaining is None else min(_CHUNK, remaining))
            if not chunk:
                break
            yield chunk
            if remaining is not None:
                remaining -= len(chunk)


def _external_chunks(tensor, folder):
    info = _info(tensor)
    length = int(info["length"]) if "length" in info else None
    return _read_chunks(os.path.join(folder, info["location"]), int(info.get("offset", 0)), length)


def _content_key(tensor, chunks):
    digest = hashlib.sha256()
    for chunk in chunks:
        digest.update(chunk)
    return tensor.data_type, tuple(tensor.dims), digest.hexdigest()


def consolidate(src_path: str, dst_path: str, data_name: str = "model.onnx_data") -> int:
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
            length = 0
            for chunk in _external_chunks(tensor, src_dir):
                out.write(chunk)
                length += len(chunk)
            _set_external(tensor, data_name, offset, length)
            offset += length
    onnx.save(model, dst_path)
    return offset


def externalize_small(src_path: str, dst_path: str, data_name: str = "model.onnx_data") -> int:
    """A model that fits in one proto, rewritten with its weights in ``data_name`` (export.external_data = always)."""
    model = onnx.load(src_path)
    onnx.save_model(model, dst_path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data_name, size_threshold=1024)
    return os.path.getsize(os.path.join(os.path.dirname(os.path.abspath(dst_path)), data_name))


def share_weights(src_path: str, dst_path: str, shared_path: str) -> None:
    """Writes ``dst_path`` from ``src_path`` with each tensor whose bytes ``shared_path``'s external data
    already holds (same type, shape and content) pointing into that file, so the weights are stored once.

    The two graphs come from one model, so their weights match whatever names the exporter gave them;
    a tensor without a match keeps its bytes in the proto. Both graphs must sit in the same folder.
    """
    shared_dir = os.path.dirname(os.path.abspath(shared_path))
    if shared_dir != os.path.dirname(os.path.abspath(dst_path)):
        raise ValueError("share_weights: the graphs must be in one folder")
    stored = {}
    for tensor in _tensors(onnx.load(shared_path, load_external_data=False)):
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            stored[_content_key(tensor, _external_chunks(tensor, shared_dir))] = _info(tensor)
    src_dir = os.path.dirname(os.path.abspath(src_path))
    model = onnx.load(src_path, load_external_data=False)
    for tensor in _tensors(model):
        external = tensor.data_location == onnx.TensorProto.EXTERNAL
        match = stored.get(_content_key(tensor, _external_chunks(tensor, src_dir) if external else [tensor.raw_data]))
        if match:
            tensor.ClearField("raw_data")
            _set_external(tensor, match["location"], int(match.get("offset", 0)), int(match["length"]))
        elif external:
            tensor.raw_data = b"".join(_external_chunks(tensor, src_dir))
            del tensor.external_data[:]
            tensor.data_location = onnx.TensorProto.DEFAULT
    onnx.save(model, dst_path)
