"""Experiment only (docs/default-policy.md): ``python3 -m trainer`` with "smeared keys" (Olsson et al.
2022): every attention key is mixed with the key of the token before it, k'_j = s*k_j + (1-s)*k_{j-1}
with s = sigmoid(a) learned per key-value head, so that one layer can match "the token after an earlier
copy of the current token" (an induction head) without first learning a previous-token head.

Not exportable as is (the ONNX export and the cascade graph know nothing of it); checkpoints carry an
extra ``smear`` parameter per layer. Usage: python3 lab/smear-trainer.py sft --config CFG.json
"""

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from trainer.model import llama  # noqa: E402

_init = llama.Attention.__init__


def _smeared_init(self, c):
    _init(self, c)
    self.smear = nn.Parameter(torch.zeros(self.num_kv_heads, 1, 1))


def _smear(self, k):
    s = torch.sigmoid(self.smear)
    prev = F.pad(k, (0, 0, 1, 0))[:, :, :-1]
    return s * k + (1 - s) * prev


def _forward(self, x, cos, sin, mask, past_k=None, past_v=None, sdpa_causal=False, prefix=None):
    assert prefix is None, "smeared keys: no cascade graph"
    b, s, _ = x.shape
    q, k, v = self.project(x, cos, sin, past_k, past_v)
    present_k, present_v = k, v  # the cache keeps raw keys; smearing is recomputed over it
    ks = _smear(self, k)
    rep = self.num_heads // self.num_kv_heads
    if mask is None:
        t = ks.shape[2]
        mask = torch.full((s, t), torch.finfo(torch.float32).min, device=x.device).triu(t - s + 1)[None, None]
    qg = q.reshape(b, self.num_kv_heads, rep, s, self.head_dim)
    scores = torch.matmul(qg, ks.unsqueeze(2).transpose(3, 4)) * self.scale + mask.unsqueeze(1)
    probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
    out = torch.matmul(probs, v.unsqueeze(2)).reshape(b, self.num_heads, s, self.head_dim)
    out = out.transpose(1, 2).reshape(b, s, self.num_heads * self.head_dim)
    return self.o_proj(out), present_k, present_v


_load = llama.LlamaForCausalLM.load_state_dict


def _load_state_dict(self, sd, strict=True):
    """A folder without smear weights (an ``init`` of the plain model) starts them at 0 (s = 0.5)."""
    sd = dict(sd)
    for name, p in self.named_parameters():
        if name.endswith(".smear") and name not in sd:
            sd[name] = torch.zeros_like(p)
    return _load(self, sd, strict=strict)


llama.LlamaForCausalLM.load_state_dict = _load_state_dict
llama.Attention.__init__ = _smeared_init
llama.Attention.forward = _forward

if __name__ == "__main__":
    from trainer.cli import main

    sys.exit(main(sys.argv[1:], sys.stdout, sys.stderr))
