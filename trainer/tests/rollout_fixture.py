"""Stands in for the studio's runner in the test of GRPO's loop mechanics (not a rollout generator):
checks that the exported policy exists, records its hash, and copies the iteration's fixture rows
to the trainer's {out}.

usage: rollout_fixture.py <iteration> <out> <model_dir> <fixture_dir>
"""
import hashlib
import os
import shutil
import sys


def main(iteration, out, model_dir, fixture_dir):
    onnx_path = os.path.join(model_dir, "onnx", "model.onnx")
    if not os.path.exists(onnx_path) or not os.path.exists(os.path.join(model_dir, "tokenizer.json")):
        print(f"no exported policy in {model_dir}", file=sys.stderr)
        return 3
    with open(onnx_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(fixture_dir, "policies.txt"), "a", encoding="utf-8") as f:
        f.write(f"{iteration} {digest}\n")
    shutil.copyfile(os.path.join(fixture_dir, f"iter-{iteration}.jsonl"), out)
    print(f"rollouts for iteration {iteration} written")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
