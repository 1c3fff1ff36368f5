"""Experiment only (docs/default-policy.md): the classic induction sanity check. A random sequence of
n tokens followed by itself; accuracy on the repeat. Usage: python3 lab/induction-repeat.py VOCAB N LAYERS LR SECONDS"""

# Classic induction sanity check: random tokens then the same tokens again; accuracy on the repeat.
import os
import sys
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from trainer.model import LlamaForCausalLM, ModelConfig  # noqa: E402 (after the path is set)

V, L, B = int(sys.argv[1]), int(sys.argv[2]), 32
layers = int(sys.argv[3])
lr = float(sys.argv[4])
secs = float(sys.argv[5])
m = LlamaForCausalLM(
    ModelConfig(
        vocab_size=V,
        hidden_size=128,
        intermediate_size=344,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    )
)
opt = torch.optim.AdamW(m.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
t0 = time.time()
step = 0
while time.time() - t0 < secs:
    x = torch.randint(0, V, (B, L))
    seq = torch.cat([x, x], 1)
    h = m.hidden_states(seq[:, :-1])
    logits = m.lm_head(h)
    loss = torch.nn.functional.cross_entropy(logits[:, L - 1 :].reshape(-1, V), seq[:, L:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    step += 1
    if step % 50 == 0:
        acc = (logits[:, L:].argmax(-1) == seq[:, L + 1 :]).float().mean().item()
        print(f"step {step} t={time.time() - t0:.0f}s loss {loss.item():.3f} repeat-acc {acc:.3f}", flush=True)
