"""Llama decoder in plain PyTorch (>= 1.13), with Hugging Face parameter names; the same layers run
Qwen2 (q/k/v biases) and Qwen3 (``q_norm``/``k_norm`` per head before RoPE), as ``config.model_type`` says.

Two entry points share the layers:
- :meth:`LlamaForCausalLM.forward` is the exported signature: ``(input_ids, attention_mask,
  position_ids, *past_key_values) -> (logits, *present)``, cache laid out ``[batch, kv_heads, seq,
  head_dim]`` per layer (key, value), the layout transformers.js expects of a Llama ONNX file.
- :meth:`LlamaForCausalLM.hidden_states` is the training path: no cache, causal attention over
  right-padded rows (padding sits after every real token, so it needs no mask of its own), or over
  packed rows (:mod:`.packing`: several rows in one sequence, attention within each row), and
  ``scaled_dot_product_attention`` where torch has it.
- :meth:`LlamaForCausalLM.forward_cascade` is the second exported signature ("cascade" attention):
  n samples that share one prompt cache (batch 1, read in place, never copied or returned) and each
  carry a cache of their own tokens after it.

Outside an ONNX export the exported signature also runs ``scaled_dot_product_attention`` (with its
mask), which is what Python generation and probes call; the export traces plain matmul/softmax
attention, the graph onnxruntime is tuned for.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from .config import ModelConfig
from .packing import PackedLayout

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")
# enable_gqa (torch >= 2.5) lets each key-value head serve its group of query heads in the fused kernel,
# where repeat_kv copies the keys and values per query head (half of a batched decode step's attention).
SDPA_GQA = HAS_SDPA and torch.__version__ >= "2.5"


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(dtype)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """[B, kv_heads, T, D] -> [B, kv_heads * n_rep, T, D] (grouped-query attention)."""
    if n_rep == 1:
        return x
    b, h, t, d = x.shape
    return x[:, :, None, :, :].expand(b, h, n_rep, t, d).reshape(b, h * n_rep, t, d)


class Attention(nn.Module):
    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.num_heads, self.num_kv_heads, self.head_dim = c.num_attention_heads, c.num_key_value_heads, c.head_dim
        self.scale = 1.0 / math.sqrt(self.head_dim)
        self.q_proj = nn.Linear(c.hidden_size, self.num_heads * self.head_dim, bias=c.qkv_bias)
        self.k_proj = nn.Linear(c.hidden_size, self.num_kv_heads * self.head_dim, bias=c.qkv_bias)
        self.v_proj = nn.Linear(c.hidden_size, self.num_kv_heads * self.head_dim, bias=c.qkv_bias)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, c.hidden_size, bias=c.o_bias)
        if c.qk_norm:
            self.q_norm = RMSNorm(self.head_dim, c.rms_norm_eps)
            self.k_norm = RMSNorm(self.head_dim, c.rms_norm_eps)
        self.qk_norm = c.qk_norm

    def project(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, past_k: torch.Tensor | None = None,
                past_v: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, and keys and values after the cache's (rotary applied): [B, heads, T, D] each."""
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.num_heads, self.head_dim)
        k = self.k_proj(x).view(b, s, self.num_kv_heads, self.head_dim)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.num_kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past_k is not None:
            assert past_v is not None, "past_k and past_v come together"
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        return q, k, v

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor | None,
                past_k: torch.Tensor | None = None, past_v: torch.Tensor | None = None, sdpa_causal: bool = False,
                prefix: tuple[torch.Tensor, torch.Tensor] | None = None,
                spans: tuple[tuple[int, ...], ...] | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, s, _ = x.shape
        q, k, v = self.project(x, cos, sin, past_k, past_v)
        present_k, present_v = k, v
        rep = self.num_heads // self.num_kv_heads
        if prefix is not None:
            out = self._cascade(q, k, v, mask, *prefix)
        elif spans is not None:
            out = self._spans(q, k, v, spans)
        elif sdpa_causal or (HAS_SDPA and not torch.onnx.is_in_onnx_export()):
            out = self._sdpa(q, k, v, None if sdpa_causal else mask)
        else:
            # Each key-value head serves its group of query heads through a broadcast dimension, so the
            # cache is never copied per query head (that copy was a third of a batched decode step).
            assert mask is not None, "the eager path needs the additive mask"
            qg = q.reshape(b, self.num_kv_heads, rep, s, self.head_dim)
            scores = torch.matmul(qg, k.unsqueeze(2).transpose(3, 4)) * self.scale + mask.unsqueeze(1)
            probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
            out = torch.matmul(probs, v.unsqueeze(2)).reshape(b, self.num_heads, s, self.head_dim)
        out = out.transpose(1, 2).reshape(b, s, self.num_heads * self.head_dim)
        return self.o_proj(out), present_k, present_v

    def _sdpa(self, q, k, v, mask):
        """torch's fused attention: causal when ``mask`` is None, else the additive ``[B, 1, S, T]`` mask
        (additive, not boolean: a query that sees no key, left padding, gets a uniform row, not NaN)."""
        if SDPA_GQA:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None, enable_gqa=True)
        rep = self.num_heads // self.num_kv_heads
        return F.scaled_dot_product_attention(q, repeat_kv(k, rep), repeat_kv(v, rep), attn_mask=mask, is_causal=mask is None)

    def _spans(self, q, k, v, spans):
        """Causal attention within each span of each sequence (:attr:`PackedLayout.spans`), one fused
        call per span: the cost of each packed row alone, where a block-diagonal mask over the whole
        sequence would compute (and discard) the scores between rows too."""
        rows = []
        for b, lengths in enumerate(spans):
            parts, start = [], 0
            for n in lengths:
                end = start + n
                parts.append(self._sdpa(q[b:b + 1, :, start:end], k[b:b + 1, :, start:end], v[b:b + 1, :, start:end],
                                        None))
                start = end
            rows.append(torch.cat(parts, dim=2) if len(parts) > 1 else parts[0])
        return torch.cat(rows, dim=0) if len(rows) > 1 else rows[0]

    def _cascade(self, q, k, v, mask, prefix_k, prefix_v):
        """Attention of n samples over a shared prefix ``[1, kv_heads, P, D]`` and their own keys ``k``.

        The queries of all samples (and of every query head of a group) become the rows of one matrix
        per key-value head, multiplied by the prefix keys as they are: one matrix product per head
        where a tiled cache would need n, and the prefix is never copied. One softmax runs over the
        prefix and suffix scores together, so the result is the attention over the concatenated cache.
        """
        b, _, s, d = q.shape
        kv, rep = self.num_kv_heads, self.num_heads // self.num_kv_heads
        t = k.shape[2]
        qg = q.reshape(b, kv, rep, s, d)
        rows = qg.transpose(0, 1).reshape(1, kv, -1, d)  # [1, kv, b*rep*s, D]
        prefix_scores = torch.matmul(rows, prefix_k.transpose(2, 3)) * self.scale  # [1, kv, b*rep*s, P]
        suffix_scores = torch.matmul(qg, k.unsqueeze(2).transpose(3, 4)) * self.scale + mask  # [b, kv, rep, s, T]
        suffix_scores = suffix_scores.transpose(0, 1).reshape(1, kv, -1, t)
        probs = torch.softmax(torch.cat([prefix_scores, suffix_scores], dim=-1).float(), dim=-1).to(q.dtype)
        p = prefix_k.shape[2]
        from_prefix = torch.matmul(probs[..., :p], prefix_v)  # [1, kv, b*rep*s, D]
        suffix_probs = probs[..., p:].reshape(kv, b, rep, s, t).transpose(0, 1)
        from_suffix = torch.matmul(suffix_probs, v.unsqueeze(2))  # [b, kv, rep, s, D]
        out = from_prefix.reshape(kv, b, rep, s, d).transpose(0, 1) + from_suffix
        return out.reshape(b, self.num_heads, s, d)


class MLP(nn.Module):
    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.mlp = MLP(c)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, mask: torch.Tensor | None,
                past_k: torch.Tensor | None = None, past_v: torch.Tensor | None = None, sdpa_causal: bool = False,
                prefix: tuple[torch.Tensor, torch.Tensor] | None = None,
                spans: tuple[tuple[int, ...], ...] | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        a, k, v = self.self_attn(self.input_layernorm(x), cos, sin, mask, past_k, past_v, sdpa_causal, prefix, spans)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, k, v


class LlamaModel(nn.Module):
    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(c) for _ in range(c.num_hidden_layers)])
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    """The policy. ``attention`` is "eager" or "sdpa" for the training path; export always runs eager,
    the exported signature runs sdpa otherwise."""

    def __init__(self, config: ModelConfig, attention: str = "eager") -> None:
        super().__init__()
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, config.head_dim, 2).float() / config.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.attention = "sdpa" if attention == "sdpa" and HAS_SDPA else "eager"
        #: ``train.gradient_checkpointing``: in training, each layer's activations are recomputed in the
        #: backward pass instead of kept (less memory, about a third more compute).
        self.gradient_checkpointing = False
        self.reset_parameters()

    def reset_parameters(self) -> None:
        std = self.config.initializer_range
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, mean=0.0, std=std)
                bias = getattr(m, "bias", None)
                if isinstance(bias, torch.Tensor):
                    nn.init.zeros_(bias)

    def _rotary(self, position_ids):
        freqs = position_ids[:, :, None].float() * self.inv_freq[None, None, :]
        emb = torch.cat([freqs, freqs], dim=-1)
        return emb.cos()[:, None, :, :], emb.sin()[:, None, :, :]

    def hidden_states(self, input_ids: torch.Tensor, packing: PackedLayout | None = None) -> torch.Tensor:
        """Final-norm hidden states ``[B, S, H]`` of right-padded rows, causal attention, no cache; with
        ``packing``, of packed rows (positions from 0 and attention within each row)."""
        b, s = input_ids.shape
        if packing is None:
            position_ids = torch.arange(s, device=input_ids.device)[None].expand(b, s)
        else:
            position_ids = packing.position_ids
        cos, sin = self._rotary(position_ids)
        x = self.model.embed_tokens(input_ids)
        sdpa = self.attention == "sdpa"
        mask, spans = None, None
        if sdpa and packing is not None:
            spans = packing.spans
        elif packing is not None:
            mask = packing.additive_mask(x.dtype)
        elif not sdpa:
            neg = torch.finfo(torch.float32).min
            mask = torch.full((s, s), neg, device=input_ids.device).triu(1)[None, None]
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        for layer in self.model.layers:
            if self.gradient_checkpointing and self.training and torch.is_grad_enabled():
                x = checkpoint(lambda h, layer=layer: layer(h, cos, sin, mask, sdpa_causal=sdpa, spans=spans)[0], x,
                               use_reentrant=False)
            else:
                x, _, _ = layer(x, cos, sin, mask, sdpa_causal=sdpa, spans=spans)
        return self.model.norm(x)

    @staticmethod
    def _causal(s, t, device):
        """``[s, t]``: query i sits at absolute index (t - s + i) and sees the keys up to itself."""
        key_index = torch.arange(t, device=device)
        query_index = torch.arange(s, device=device) + (t - s)
        return key_index[None, :] <= query_index[:, None]

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, position_ids: torch.Tensor,
                *past: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The exported signature; ``past`` is ``[k0, v0, k1, v1, ...]`` or empty."""
        s = input_ids.shape[1]
        cos, sin = self._rotary(position_ids)
        x = self.model.embed_tokens(input_ids)
        # Keys that are padding are hidden from every query.
        causal = self._causal(s, attention_mask.shape[1], input_ids.device)
        allowed = causal[None, None, :, :] & (attention_mask[:, None, None, :] > 0)
        mask = (~allowed).to(torch.float32) * torch.finfo(torch.float32).min
        return self._decode(x, cos, sin, mask, past)

    def forward_cascade(self, input_ids: torch.Tensor, position_ids: torch.Tensor,
                        *caches: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The cascade graph's signature: ``caches`` is the shared prefix ``[k0, v0, ...]`` (batch 1),
        then the samples' own past ``[k0, v0, ...]`` (batch n, sequence 0 at the first step). Returns
        ``(logits, *present)`` where present covers the samples' own tokens only. ``position_ids``
        continue after the prefix. No padding: every sample sees the whole prefix and its own tokens."""
        n = 2 * self.config.num_hidden_layers
        prefix, past = caches[:n], caches[n:]
        s = input_ids.shape[1]
        cos, sin = self._rotary(position_ids)
        x = self.model.embed_tokens(input_ids)
        causal = self._causal(s, past[0].shape[2] + s, input_ids.device)
        mask = (~causal).to(torch.float32) * torch.finfo(torch.float32).min
        return self._decode(x, cos, sin, mask, past, prefix)

    def _decode(self, x, cos, sin, mask, past, prefix=()):
        presents = []
        for i, layer in enumerate(self.model.layers):
            pk = past[2 * i] if past else None
            pv = past[2 * i + 1] if past else None
            shared = (prefix[2 * i], prefix[2 * i + 1]) if prefix else None
            x, k, v = layer(x, cos, sin, mask, pk, pv, prefix=shared)
            presents += [k, v]
        logits = self.lm_head(self.model.norm(x))
        return (logits, *presents)
