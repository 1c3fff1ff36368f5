"""Export of a policy to the Hugging Face ONNX layout that the studio's policy host (transformers.js)
loads: ``onnx/model.onnx`` with KV-cache inputs and outputs, beside ``config.json``,
``generation_config.json`` and the tokenizer files."""
from .onnx_export import export_model_folder

__all__ = ["export_model_folder"]
