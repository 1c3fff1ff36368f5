"""Copy experiments at equal wall time (docs/default-policy.md): one experiment = init + a time-boxed
SFT with the copy probe, from a JSON spec. Work files under WORK (default .rehearsal/copy).

    /usr/bin/python3 lab/copy-lab.py SPEC.json [SPEC.json ...]

A spec: {"name", "tokenizer" (folder, relative to WORK), "architecture", "train_rows" (files),
"probe_rows" (files), "seconds", "threads", "optim", "train", "data", "env"}. Prints one summary line
per probe and writes WORK/lab/<name>/summary.json.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = os.path.abspath(os.environ.get("WORK", os.path.join(ROOT, ".rehearsal/copy")))
# glibc: no mmap/munmap per large tensor (the SFT step was dominated by that churn on 2 cores).
FAST_MALLOC = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(1 << 34), "MALLOC_TOP_PAD_": str(1 << 30)}


def run(spec):
    name = spec["name"]
    out = os.path.join(WORK, "lab", name)
    os.makedirs(out, exist_ok=True)
    env = {
        **os.environ,
        "PYTHONPATH": ROOT,
        "OMP_WAIT_POLICY": "PASSIVE",
        **(FAST_MALLOC if spec.get("fast_malloc", True) else {}),
        **spec.get("env", {}),
    }
    py = ["nice", "-n", "19", "/usr/bin/python3", "-m", "trainer"]
    # "smear": true trains with smeared keys (lab/smear-trainer.py; experiment only, not exportable).
    sft_py = ["nice", "-n", "19", "/usr/bin/python3", os.path.join(ROOT, "lab/smear-trainer.py")] if spec.get("smear") else py
    init_cfg = os.path.join(out, "init.json")
    with open(init_cfg, "w") as f:
        json.dump(
            {
                "seed": spec.get("seed", 0),
                "out_dir": "init",
                "model": {"tokenizer": os.path.join(WORK, spec["tokenizer"]), "architecture": spec["architecture"]},
            },
            f,
        )
    if not spec.get("start_model") and not os.path.exists(os.path.join(out, "init", "config.json")):
        subprocess.run(py + ["init", "--config", init_cfg], env=env, check=True, stdout=subprocess.DEVNULL)
    start_model = "init"
    if spec.get("pre"):
        # A curriculum stage first (e.g. synthetic copy rows), its final model the start of the main stage.
        pre = spec["pre"]
        pre_spec = {
            **spec,
            "name": name + "/pre",
            "train_rows": pre["train_rows"],
            "seconds": pre["seconds"],
            "train": {**spec.get("train", {}), **pre.get("train", {})},
            "optim": {**spec.get("optim", {}), **pre.get("optim", {})},
            "pre": None,
            "start_model": os.path.join(out, "init"),
        }
        run(pre_spec)
        start_model = os.path.join(out, "pre", "sft", "final")
    start_model = spec.get("start_model") or start_model
    sft_cfg = os.path.join(out, "sft.json")
    train = {
        "steps": 100000,
        "batch_size": 16,
        "micro_batch_size": 8,
        "checkpoint_every": 100000,
        "log_every": 10,
        "export_at_end": False,
        "max_seconds": spec["seconds"],
        **spec.get("train", {}),
    }
    with open(sft_cfg, "w") as f:
        json.dump(
            {
                "seed": spec.get("seed", 0),
                "threads": spec.get("threads", 1),
                "out_dir": "sft",
                "model": {"path": start_model},
                "data": {
                    "train": [os.path.join(WORK, p) for p in spec["train_rows"]],
                    "max_length": 3072,
                    **spec.get("data", {}),
                },
                "optim": {"lr": 0.002, "schedule": "constant", "warmup_steps": 20, "weight_decay": 0.01, **spec.get("optim", {})},
                "train": train,
                "probe": {
                    "rows": [os.path.join(WORK, p) for p in spec["probe_rows"]],
                    "every": spec.get("probe_every", 50),
                    "max_rows": spec.get("probe_max_rows", 64),
                    "greedy_rows": spec.get("probe_greedy_rows", 32),
                },
            },
            f,
        )
    events = []
    proc = subprocess.Popen(
        sft_py + ["sft", "--config", sft_cfg],
        env=env,
        stdout=subprocess.PIPE,
        stderr=open(os.path.join(out, "stderr.log"), "w"),
        text=True,
    )
    for line in proc.stdout:
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            continue
        events.append(e)
        if e["event"] == "probe":
            steps = [s for s in events if s["event"] == "step"]
            last = steps[-1] if steps else {}
            print(
                f"{name} t={e['t']:.0f}s step={e['step']} loss={last.get('loss', 0):.3f} copy_exact={e['copy_exact']} "
                f"user={e['copy_exact_user']} tool={e['copy_exact_tool']} call={e['call_exact']} "
                f"tok_acc={e['copy_token_acc']:.3f} "
                f"digit_acc={e['digit_token_acc']} value_tf={e.get('copy_value_tf')} probe_s={e['seconds']}",
                flush=True,
            )
        elif e["event"] == "error":
            print(name, "ERROR", e, flush=True)
    proc.wait()
    steps = [e for e in events if e["event"] == "step"]
    probes = [e for e in events if e["event"] == "probe"]
    summary = {
        "name": name,
        "rc": proc.returncode,
        "architecture": spec["architecture"],
        "steps": steps[-1]["step"] if steps else 0,
        "last_loss": steps[-1]["loss"] if steps else None,
        "last_roles": steps[-1]["roles"] if steps else None,
        "mean_tokens_per_s": (sum(e["tokens_per_s"] * 1 for e in steps) / len(steps)) if steps else None,
        "probes": [
            {
                k: p[k]
                for k in (
                    "t",
                    "step",
                    "copy_exact",
                    "copy_exact_user",
                    "copy_exact_tool",
                    "call_exact",
                    "name_match",
                    "parse_valid",
                    "copy_token_acc",
                    "digit_token_acc",
                    "copy_value_tf",
                    "seconds",
                )
            }
            for p in probes
        ],
        "data": next((e for e in events if e["event"] == "data"), None),
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out, "events.jsonl"), "w") as f:
        for e in events:
            f.write(json.dumps(e) + "\n")
    print(f"{name} done rc={proc.returncode} steps={summary['steps']} loss={summary['last_loss']}", flush=True)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path) as f:
            run(json.load(f))
