"""Experiment only (docs/default-policy.md): content-based copy at a variable distance. Noise with a
marker and a 6-token value at a random place, the marker again at the end; accuracy of the value after it.
Usage: python3 lab/induction-lookup.py VOCAB NOISE_LEN LAYERS LR SECONDS [smear]"""

# Content-based copy at a variable distance: noise with "M v1..v6" at a random place, then "M" at the end;
# accuracy of v1..v6 after the final M (teacher-forced). Tests lookup + copy, not a fixed offset.
import os
import sys
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
if len(sys.argv) > 6 and sys.argv[6] == "smear":
    exec(open(os.path.join(HERE, "smear-trainer.py")).read().split("if __name__")[0])
from trainer.model import LlamaForCausalLM, ModelConfig  # noqa: E402 (after the path is set)

V, L, B, K = int(sys.argv[1]), int(sys.argv[2]), 32, 6
layers = int(sys.argv[3])
lr = float(sys.argv[4])
secs = float(sys.argv[5])
m = LlamaForCausalLM(
    ModelConfig(
        vocab_size=V + 1,
        hidden_size=128,
        intermediate_size=344,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        tie_word_embeddings=True,
    )
)
opt = torch.optim.AdamW(m.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
M = V


def batch():
    seq = torch.randint(0, V, (B, L + 1 + K))
    val = torch.randint(0, V, (B, K))
    for b in range(B):
        p = int(torch.randint(0, L - K - 1, (1,)))
        seq[b, p] = M
        seq[b, p + 1 : p + 1 + K] = val[b]
    seq[:, L] = M
    seq[:, L + 1 :] = val
    return seq


t0 = time.time()
step = 0
while time.time() - t0 < secs:
    seq = batch()
    logits = m.lm_head(m.hidden_states(seq[:, :-1]))
    loss = torch.nn.functional.cross_entropy(logits[:, L:].reshape(-1, V + 1), seq[:, L + 1 :].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
    step += 1
    if step % 100 == 0:
        pred = logits[:, L:].argmax(-1)
        acc = (pred == seq[:, L + 1 :]).float().mean().item()
        whole = (pred == seq[:, L + 1 :]).all(1).float().mean().item()
        print(
            f"V={V} step {step} t={time.time() - t0:.0f}s loss {loss.item():.3f} token-acc {acc:.3f} value-exact {whole:.3f}",
            flush=True,
        )
