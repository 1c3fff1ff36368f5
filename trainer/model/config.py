"""The model's shape, read from and written as a Hugging Face ``config.json``.

Three architectures share one decoder (:mod:`trainer.model.llama`): ``llama``; ``qwen2`` (biases on the
query, key and value projections, none on the output one); ``qwen3`` (an RMSNorm over each head of the
queries and keys before the rotary embedding, ``head_dim`` set on its own, which may differ from
hidden_size / num_attention_heads). Qwen3 is what EnvACE trains and merges (``scripts/model_merger.py``).
"""
from __future__ import annotations

from typing import Any

from ..errors import TrainerError

#: model_type -> the class name transformers writes in ``architectures``.
ARCHITECTURES = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}

_FIELDS = {
    "vocab_size": None, "hidden_size": 128, "intermediate_size": 344, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": None, "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0, "max_position_embeddings": 4096, "tie_word_embeddings": False,
    "attention_bias": False, "initializer_range": 0.02, "model_type": "llama", "torch_dtype": "float32",
}
# Keys of a Qwen config.json that only describe sliding-window attention (unused when it is off);
# max_window_layers is written as the layer count (as Qwen's own checkpoints do): transformers 5
# rejects a config.json where it is null.
_QWEN_WINDOW = {"use_sliding_window": False, "sliding_window": None}


def _as_transformers4(hf: dict[str, Any]) -> dict[str, Any]:
    """transformers 5 writes ``rope_parameters: {rope_type, rope_theta}`` and ``dtype`` where 4.x wrote
    ``rope_theta``, ``rope_scaling`` and ``torch_dtype``; without this, a folder saved by transformers 5
    would load with the default rope_theta and compute another model."""
    rope_parameters = hf.get("rope_parameters")
    rope: dict[str, Any] = rope_parameters if isinstance(rope_parameters, dict) else {}
    if rope.get("rope_type", "default") != "default":
        raise TrainerError("MODEL_UNSUPPORTED", f"rope_parameters.rope_type {rope['rope_type']!r} is not supported by "
                           "the trainer's model (plain rotary embeddings only).")
    out = dict(hf)
    for key, value in (("rope_theta", rope.get("rope_theta")), ("torch_dtype", hf.get("dtype"))):
        if out.get(key) is None and value is not None:
            out[key] = value
    return out


class ModelConfig:
    """Shape of the decoder plus the token ids generation needs (eos, pad)."""

    # The fields of _FIELDS, set in __init__ by name (declared here for the type checker).
    vocab_size: int
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    rms_norm_eps: float
    rope_theta: float
    max_position_embeddings: int
    tie_word_embeddings: bool
    attention_bias: bool
    initializer_range: float
    model_type: str
    torch_dtype: str

    def __init__(self, eos_token_id: int | list[int] | None = None, pad_token_id: int | None = None,
                 bos_token_id: int | None = None, **fields: Any) -> None:
        unknown = set(fields) - set(_FIELDS)
        if unknown:
            raise TypeError(f"unknown model fields: {sorted(unknown)}")
        for name, default in _FIELDS.items():
            setattr(self, name, fields.get(name, default))
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        self.eos_token_id = eos_token_id
        self.pad_token_id = pad_token_id
        self.bos_token_id = bos_token_id
        self.check()

    def check(self) -> None:
        def bad(msg: str) -> TrainerError:
            return TrainerError("MODEL_CONFIG_INVALID", msg + " Fix model.architecture (or the folder's config.json).")
        if self.model_type not in ARCHITECTURES:
            raise bad(f"model_type {self.model_type!r} is not one of {', '.join(ARCHITECTURES)}.")
        if not self.vocab_size or self.vocab_size < 1:
            raise bad("The model has no vocab_size.")
        if self.num_attention_heads % self.num_key_value_heads:
            raise bad(f"num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                      f"num_key_value_heads ({self.num_key_value_heads}).")
        if self.head_dim is None or self.head_dim < 2 or self.head_dim % 2:
            raise bad(f"head_dim ({self.head_dim}) must be even (rotary embeddings rotate pairs).")

    @property
    def qkv_bias(self) -> bool:
        """Biases on q_proj, k_proj and v_proj: always in Qwen2, ``attention_bias`` elsewhere."""
        return self.model_type == "qwen2" or self.attention_bias

    @property
    def o_bias(self) -> bool:
        """A bias on o_proj: ``attention_bias`` in Llama and Qwen3, never in Qwen2."""
        return self.model_type != "qwen2" and self.attention_bias

    @property
    def qk_norm(self) -> bool:
        """Qwen3's per-head RMSNorm of queries and keys (``q_norm``, ``k_norm``)."""
        return self.model_type == "qwen3"

    @classmethod
    def from_hf(cls, hf: dict[str, Any]) -> ModelConfig:
        """From a ``config.json`` dict of a ``llama``, ``qwen2`` or ``qwen3`` model (transformers 4 or 5)."""
        hf = _as_transformers4(hf)
        model_type = hf.get("model_type")
        if model_type not in ARCHITECTURES:
            raise TrainerError("MODEL_UNSUPPORTED", f"model_type {model_type!r} is not supported: the trainer trains "
                               f"the decoders {', '.join(ARCHITECTURES)} (Qwen3 is what EnvACE checkpoints are).")
        if hf.get("rope_scaling"):
            raise TrainerError("MODEL_UNSUPPORTED", "rope_scaling is not supported by the trainer's model.")
        if hf.get("use_sliding_window"):
            raise TrainerError("MODEL_UNSUPPORTED", "use_sliding_window is not supported by the trainer's model: set it "
                               "to false in config.json (Qwen checkpoints are trained with it off).")
        if hf.get("hidden_act", "silu") != "silu":
            raise TrainerError("MODEL_UNSUPPORTED", f"hidden_act {hf.get('hidden_act')!r} is not supported (silu only).")
        if model_type == "qwen2" and hf.get("head_dim") not in (
                None, hf.get("hidden_size", 0) // max(1, hf.get("num_attention_heads", 1))):
            raise TrainerError("MODEL_UNSUPPORTED", "a qwen2 config.json with head_dim other than "
                               "hidden_size / num_attention_heads is not supported (transformers ignores it for Qwen2).")
        fields = {k: hf[k] for k in _FIELDS if k in hf and hf[k] is not None}
        if not isinstance(fields.get("torch_dtype", ""), str):
            fields.pop("torch_dtype")
        eos = hf.get("eos_token_id")
        return cls(eos_token_id=eos, pad_token_id=hf.get("pad_token_id"), bos_token_id=hf.get("bos_token_id"), **fields)

    def to_hf(self) -> dict[str, Any]:
        """The ``config.json`` of this model (readable by transformers and transformers.js)."""
        llama = self.model_type == "llama"
        # Llama's keys in the order the trainer always wrote them (models/default's config.json).
        d: dict[str, Any]
        d = {"architectures": [ARCHITECTURES[self.model_type]], "model_type": self.model_type, "hidden_act": "silu",
             **({"mlp_bias": False} if llama else {}), "torch_dtype": self.torch_dtype, "use_cache": True,
             "rope_scaling": None, "attention_dropout": 0.0,
             **({"pretraining_tp": 1} if llama else {**_QWEN_WINDOW, "max_window_layers": self.num_hidden_layers})}
        d.update({name: getattr(self, name) for name in _FIELDS if name not in ("model_type", "torch_dtype")})
        if self.model_type == "qwen2":
            del d["head_dim"], d["attention_bias"]  # Qwen2 has neither key: its biases are fixed
        d.update(bos_token_id=self.bos_token_id, eos_token_id=self.eos_token_id, pad_token_id=self.pad_token_id)
        return d

    def num_parameters(self) -> int:
        h, i, v, L = self.hidden_size, self.intermediate_size, self.vocab_size, self.num_hidden_layers
        q = self.num_attention_heads * self.head_dim
        kv = self.num_key_value_heads * self.head_dim
        attn = h * q * 2 + h * kv * 2 + ((q + 2 * kv) if self.qkv_bias else 0) + (h if self.o_bias else 0)
        per_layer = attn + 3 * h * i + 2 * h + (2 * self.head_dim if self.qk_norm else 0)
        return v * h * (1 if self.tie_word_embeddings else 2) + L * per_layer + h
