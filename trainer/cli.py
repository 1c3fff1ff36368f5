"""``python3 -m trainer <command> [--config FILE] [--set key=value ...] [--device D]``.

stdout carries only JSON events (docs/trainer-events.md); logs and tracebacks go to stderr. Every
failure ends with one ``error`` event and a non-zero exit status: 2 for what the user gave us
(config, rows, arguments), 1 for failures while running, 130 when interrupted.
"""
import argparse
import os
import sys
import traceback
from typing import NoReturn, TextIO

from . import __version__
from .errors import EXIT_RUNTIME, TrainerError
from .events import EVENTS_VERSION, EventStream

COMMANDS = {
    "tokenizer": "train a byte-level BPE tokenizer (tokenizer.json + tokenizer_config.json with the chat template)",
    "init": "create a random-weight model folder of a given shape",
    "sft": "supervised training on dataset rows (act and rehearse targets)",
    "grpo": "role-wise GRPO on rollouts (EnvACE world rehearsal), optional grounding term",
    "trl-grpo": "GRPO by TRL's GRPOTrainer with the studio's runner as its rollout function (act role; trl.tasks)",
    "export": "export a model folder or checkpoint to the ONNX folder the policy host loads",
    "render": "print dataset rows as the exact training text and token ids",
    "generate": "greedy decoding with PyTorch without a KV cache (the parity reference)",
    "test-model": "write a small random-weight policy folder for tests (--out, --seed)",
    "import-checkpoint": "a Hugging Face folder (EnvACE's merged qwen3/qwen2/llama checkpoint) -> a policy folder with ONNX "
                         "(--source, --out)",
    "export-checkpoint": "a policy folder or trainer checkpoint -> a Hugging Face folder with safetensors (--source, --out)",
    "test-checkpoint": "write a random-weight Hugging Face folder (qwen3 or qwen2, safetensors) for tests (--out)",
    "export-trl": "dataset rows -> one parquet file in TRL's conversational prompt-completion format (--rows, --out)",
    "export-slots": "add onnx/model_slots.onnx (the decode graph with its KV cache in place) to a policy folder "
                    "exported without it (--source)",
}
# Commands that take their arguments on the command line, not a config (they run on the CPU).
_DIRECT_COMMANDS = ("test-model", "import-checkpoint", "export-checkpoint", "test-checkpoint", "export-trl",
                    "export-slots")
_RUN_FOLDER_COMMANDS = ("sft", "grpo", "trl-grpo")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise TrainerError("USAGE", f"{message}. Run `python3 -m trainer --help`.")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python3 -m trainer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=__version__)
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)
    for name, help_text in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == "test-model":
            p.add_argument("--out", required=True, help="folder to create")
            p.add_argument("--seed", type=int, default=0)
            continue
        if name in _DIRECT_COMMANDS:
            _direct_arguments(name, p)
            continue
        p.add_argument("--config", help="JSON config file (schemas/trainer-config.schema.json)")
        p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="override a config field, e.g. --set train.steps=10 (value parsed as JSON)")
        p.add_argument("--device", help="auto, cpu, cuda or cuda:N (overrides the config)")
    return parser


def _direct_arguments(name, p):
    if name == "export-slots":
        p.add_argument("--source", required=True, help="the policy folder (onnx/model.onnx) to complete")
        return
    if name == "export-trl":
        p.add_argument("--rows", required=True, action="append", help="a rows file (JSONL), or - for stdin; repeatable")
        p.add_argument("--out", required=True, help="the parquet file to write")
        return
    p.add_argument("--out", required=True, help="folder to create")
    if name == "test-checkpoint":
        p.add_argument("--model-type", default="qwen3", choices=["qwen3", "qwen2"])
        p.add_argument("--tied", action="store_true", help="tie the output layer to the embeddings")
        p.add_argument("--shards", type=int, default=1, help="safetensors files (more than 1: with an index)")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
        return
    p.add_argument("--source", required=True, help="the folder to read")
    if name == "import-checkpoint":
        p.add_argument("--external-data", default="auto", choices=["auto", "always", "never"],
                       help="ONNX weights beside the graph (auto: past 2 GB)")
    else:
        p.add_argument("--dtype", choices=["float32", "float16", "bfloat16"], help="default: config.json's torch_dtype")
        p.add_argument("--max-shard-bytes", type=int, help="split the safetensors past this size (default 5 GB)")


def _run_direct(args, events):
    from .commands import checkpoint, test_checkpoint
    from .commands.test_model import run_test_model
    if args.command == "test-model":
        run_test_model(args.out, args.seed, events)
    elif args.command == "export-trl":
        from .data.rows import read_rows
        from .export.trl_dataset import write_trl_dataset
        rows = read_rows(args.rows)
        size = write_trl_dataset(rows, os.path.abspath(args.out))
        events.emit("done", command="export-trl", path=os.path.abspath(args.out), rows=len(rows), bytes=size)
    elif args.command == "export-slots":
        from .export.slots_graph import export_slots
        size = export_slots(args.source)
        events.emit("done", command="export-slots", path=os.path.abspath(args.source), bytes=size)
    else:
        {"import-checkpoint": checkpoint.run_import, "export-checkpoint": checkpoint.run_export,
         "test-checkpoint": test_checkpoint.run_test_checkpoint}[args.command](args, events)


def _command_module(name):
    from .commands import export, generate, init, render, tokenizer
    from .train import grpo, sft, trl_grpo
    return {"tokenizer": tokenizer.run, "init": init.run, "export": export.run, "render": render.run,
            "generate": generate.run, "sft": sft.run_sft, "grpo": grpo.run_grpo,
            "trl-grpo": trl_grpo.run_trl_grpo}[name]


def main(argv: list[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Runs one command; returns the exit status."""
    events = EventStream(stdout, stderr)
    runtime_started = finished = False
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise TrainerError("USAGE", f"Name a command: {', '.join(COMMANDS)}.")
        if args.command in _DIRECT_COMMANDS:
            events.emit("start", command=args.command, version=__version__, events_version=EVENTS_VERSION, pid=os.getpid())
            _run_direct(args, events)
            return 0
        from .config import load_config
        from .config_types import TrainerConfig
        overrides = list(args.set) + ([f"device={args.device}"] if args.device else [])
        # before importing torch: config errors come back at once
        cfg = TrainerConfig.from_dict(load_config(args.config, overrides))
        from . import runtime as rt
        runtime = rt.start(cfg)
        runtime_started = True
        events.enabled = runtime.is_main
        if args.command in _RUN_FOLDER_COMMANDS and cfg.out_dir:
            events.attach_file(os.path.join(cfg.out_dir, "events.jsonl"))
        events.emit("start", command=args.command, version=__version__, events_version=EVENTS_VERSION,
                    pid=os.getpid(), config=args.config and os.path.abspath(args.config), **runtime.describe())
        _command_module(args.command)(cfg, events, runtime)
        finished = True
        return 0
    except TrainerError as e:
        events.enabled = True
        events.emit("error", code=e.code, message=e.message, **e.details)
        events.log(f"error {e.code}: {e.message}")
        return e.exit_code
    except KeyboardInterrupt:
        events.enabled = True
        events.emit("error", code="INTERRUPTED",
                    message="Interrupted; resume from the last checkpoint by running the same command.")
        return 130
    except Exception as e:  # a bug: keep the traceback on stderr, one clear event on stdout
        events.enabled = True
        traceback.print_exc(file=stderr or sys.stderr)
        events.emit("error", code="INTERNAL", message=f"{type(e).__name__}: {e}")
        return EXIT_RUNTIME
    finally:
        events.close()
        if runtime_started:
            from . import runtime as rt
            rt.stop(ok=finished)
