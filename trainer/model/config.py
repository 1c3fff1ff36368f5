"""The model's shape, read from and written as a Hugging Face ``config.json`` (``model_type: llama``)."""
from ..errors import TrainerError

_FIELDS = {
    "vocab_size": None, "hidden_size": 128, "intermediate_size": 344, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": None, "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0, "max_position_embeddings": 4096, "tie_word_embeddings": False,
    "attention_bias": False, "initializer_range": 0.02,
}


class ModelConfig:
    """Shape of the decoder plus the token ids generation needs (eos, pad)."""

    def __init__(self, eos_token_id=None, pad_token_id=None, bos_token_id=None, **fields):
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

    def check(self):
        def bad(msg):
            return TrainerError("MODEL_CONFIG_INVALID", msg + " Fix model.architecture (or the folder's config.json).")
        if not self.vocab_size or self.vocab_size < 1:
            raise bad("The model has no vocab_size.")
        if self.num_attention_heads % self.num_key_value_heads:
            raise bad(f"num_attention_heads ({self.num_attention_heads}) must be a multiple of num_key_value_heads ({self.num_key_value_heads}).")
        if self.head_dim % 2:
            raise bad(f"head_dim ({self.head_dim}) must be even (rotary embeddings rotate pairs).")

    @classmethod
    def from_hf(cls, hf):
        """From a ``config.json`` dict of a ``llama`` model."""
        model_type = hf.get("model_type")
        if model_type != "llama":
            raise TrainerError("MODEL_UNSUPPORTED", f"model_type {model_type!r} is not supported: the trainer trains "
                               "Llama-architecture decoders (model_type llama).")
        if hf.get("rope_scaling"):
            raise TrainerError("MODEL_UNSUPPORTED", "rope_scaling is not supported by the trainer's model.")
        fields = {k: hf[k] for k in _FIELDS if k in hf and hf[k] is not None}
        eos = hf.get("eos_token_id")
        return cls(eos_token_id=eos, pad_token_id=hf.get("pad_token_id"), bos_token_id=hf.get("bos_token_id"), **fields)

    def to_hf(self):
        """The ``config.json`` of this model (readable by transformers and transformers.js)."""
        d = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
             "mlp_bias": False, "torch_dtype": "float32", "use_cache": True, "rope_scaling": None,
             "attention_dropout": 0.0, "pretraining_tp": 1}
        d.update({name: getattr(self, name) for name in _FIELDS})
        d.update(bos_token_id=self.bos_token_id, eos_token_id=self.eos_token_id, pad_token_id=self.pad_token_id)
        return d

    def num_parameters(self):
        h, i, v, L = self.hidden_size, self.intermediate_size, self.vocab_size, self.num_hidden_layers
        q = self.num_attention_heads * self.head_dim
        kv = self.num_key_value_heads * self.head_dim
        attn = h * q * 2 + h * kv * 2 + ((q + 2 * kv + h) if self.attention_bias else 0)
        per_layer = attn + 3 * h * i + 2 * h
        return v * h * (1 if self.tie_word_embeddings else 2) + L * per_layer + h
