"""Llama decoder in plain PyTorch (>= 1.13), with Hugging Face parameter names.

Two entry points share the layers:
- :meth:`LlamaForCausalLM.forward` is the exported signature: ``(input_ids, attention_mask,
  position_ids, *past_key_values) -> (logits, *present)``, cache laid out ``[batch, kv_heads, seq,
  head_dim]`` per layer (key, value), the layout transformers.js expects of a Llama ONNX file.
- :meth:`LlamaForCausalLM.hidden_states` is the training path: no cache, causal attention over
  right-padded rows (padding sits after every real token, so it needs no mask of its own), and
  ``scaled_dot_product_attention`` where torch has it.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import ModelConfig

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x, n_rep):
    """[B, kv_heads, T, D] -> [B, kv_heads * n_rep, T, D] (grouped-query attention)."""
    if n_rep == 1:
        return x
    b, h, t, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n_rep, t, d).reshape(b, h * n_rep, t, d)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_heads, self.num_kv_heads, self.head_dim = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.q_proj = nn.Linear(c.hidden_size, self.num_heads * self.head_dim, bias=c.attention_bias)
        self.k_proj = nn.Linear(c.hidden_size, self.num_kv_heads * self.head_dim, bias=c.attention_bias)
        self.v_proj = nn.Linear(c.hidden_size, self.num_kv_heads * self.head_dim, bias=c.attention_bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, c.hidden_size, bias=c.attention_bias)

    def forward(self, x, cos, sin, mask, past_k=None, past_v=None, sdpa_causal=False):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.num_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.num_kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        present_k, present_v = k, v
        rep = self.num_heads // self.num_kv_heads
        if sdpa_causal:
            out = F.scaled_dot_product_attention(q, repeat_kv(k, rep), repeat_kv(v, rep), is_causal=True)
        else:
            # Each key-value head serves its group of query heads through a broadcast dimension, so the
            # cache is never copied per query head (that copy was a third of a batched decode step).
            qg = q.reshape(b, self.num_kv_heads, rep, s, self.head_dim)
            scores = torch.matmul(qg, k.unsqueeze(2).transpose(3, 4)) * self.scale + mask.unsqueeze(1)
            probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
            out = torch.matmul(probs, v.unsqueeze(2)).reshape(b, self.num_heads, s, self.head_dim)
        out = out.transpose(1, 2).reshape(b, s, self.num_heads * self.head_dim)
        return self.o_proj(out), present_k, present_v


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.mlp = MLP(c)

    def forward(self, x, cos, sin, mask, past_k=None, past_v=None, sdpa_causal=False):
        a, k, v = self.self_attn(self.input_layernorm(x), cos, sin, mask, past_k, past_v, sdpa_causal)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, k, v


class LlamaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(c) for _ in range(c.num_hidden_layers)])
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    """The policy. ``attention`` is "eager" or "sdpa" for the training path; export always runs eager."""

    def __init__(self, config: ModelConfig, attention="eager"):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, config.head_dim, 2).float() / config.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.attention = "sdpa" if attention == "sdpa" and HAS_SDPA else "eager"
        self.reset_parameters()

    def reset_parameters(self):
        std = self.config.initializer_range
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=std)
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)

    def _rotary(self, position_ids):
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        return emb.cos()[:, None, :, :], emb.sin()[:, None, :, :]

    def hidden_states(self, input_ids):
        """Final-norm hidden states ``[B, S, H]`` of right-padded rows, causal attention, no cache."""
        b, s = input_ids.shape
        position_ids = torch.arange(s, device=input_ids.device)[None].expand(b, s)
        cos, sin = self._rotary(position_ids)
        x = self.model.embed_tokens(input_ids)
        sdpa = self.attention == "sdpa"
        mask = None
        if not sdpa:
            neg = torch.finfo(torch.float32).min
            mask = torch.full((s, s), neg, device=input_ids.device).triu(1)[None, None]
        for layer in self.model.layers:
            x, _, _ = layer(x, cos.to(x.dtype), sin.to(x.dtype), mask, sdpa_causal=sdpa)
        return self.model.norm(x)

    def forward(self, input_ids, attention_mask, position_ids, *past):
        """The exported signature; ``past`` is ``[k0, v0, k1, v1, ...]`` or empty."""
        b, s = input_ids.shape
        cos, sin = self._rotary(position_ids)
        x = self.model.embed_tokens(input_ids)
        # Query i sits at absolute index (T - S + i); it sees keys up to itself that are not padding.
        t = attention_mask.shape[1]
        key_index = torch.arange(t, device=input_ids.device)
        query_index = torch.arange(s, device=input_ids.device) + (t - s)
        causal = key_index[None, :] <= query_index[:, None]
        allowed = causal[None, None, :, :] & (attention_mask[:, None, None, :] > 0)
        mask = (~allowed).to(torch.float32) * torch.finfo(torch.float32).min
        presents = []
        for i, layer in enumerate(self.model.layers):
            pk = past[2 * i] if past else None
            pv = past[2 * i + 1] if past else None
            x, k, v = layer(x, cos, sin, mask, pk, pv)
            presents += [k, v]
        logits = self.lm_head(self.model.norm(x))
        return (logits, *presents)
