"""The policy: a Llama-architecture decoder (RMSNorm, RoPE, grouped-query attention, SwiGLU) whose
parameter names and ``config.json`` are Hugging Face's, so a saved folder also loads in transformers."""
from .config import ModelConfig
from .llama import LlamaForCausalLM

__all__ = ["ModelConfig", "LlamaForCausalLM"]
