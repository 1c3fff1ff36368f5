"""``trl-grpo``: GRPO by TRL's ``GRPOTrainer``, for those who keep TRL, with the studio's runner as its
rollout function and the studio's checklist reward.

TRL samples a batch of prompts (here: one per task file of ``trl.tasks``, ``num_generations`` times);
``rollout_func`` serves the trainer's live model on a loopback port (``trainer.serve_hf``'s engine over
the model as it is in memory), runs ``rollouts.command`` (the studio's ``rehearse rollout
--act-rows episode --record-tokens``, placeholders ``{tasks}`` ``{episodes}`` ``{endpoint}``
``{model}`` ``{out}`` ``{seed}`` ``{iteration}``) and hands TRL one sequence per episode: the first
act prompt as the prompt, then every act turn with the tool responses between them as the completion,
the act tokens trained (``env_mask`` 1) and the tool responses masked out (0), with the episode's
reward. What TRL cannot take: a rehearse row has a prompt of its own (the rehearse prompt), which one
sequence per rollout has no room for, so under TRL the rehearse role is not trained and an imagined
episode's rehearsals count as tool output. The studio's own ``grpo`` trains both roles.
"""
from __future__ import annotations

import math
import os
import threading
from typing import TYPE_CHECKING, Any

from ..data.encode import encode_with_history, render_prompt, sampled_ids
from ..data.rows import read_rows
from ..errors import TrainerError, config_error, data_error
from ..model.hf_backend import HFPolicy
from .common import finish, open_run
from .rollouts import run_command, substitute

if TYPE_CHECKING:
    from ..config_types import TrainerConfig
    from ..events import EventStream
    from ..runtime import Runtime

#: The served name of the live model (what ``{model}`` gives the command).
SERVED_NAME = "policy"


def task_files(paths: tuple[str, ...]) -> list[str]:
    """Every ``*.task.json`` of the folders and files named, sorted, each once."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".task.json"))
        elif os.path.isfile(p):
            out.append(p)
        else:
            raise config_error(f"trl.tasks: {p} is neither a task file nor a folder of them.")
    if not out:
        raise config_error("trl.tasks names no *.task.json file: name task files or folders of them.")
    return list(dict.fromkeys(os.path.abspath(p) for p in out))


def task_id(path: str) -> str:
    """The ``id`` a task file declares (rows name their task by it, whatever the file is called)."""
    from ..model.folder import read_json_object
    value = read_json_object(path, "a task file").get("id")
    if not isinstance(value, str) or not value:
        raise config_error(f"trl.tasks: {path} has no id; it is not a task file (docs/task-format.md).")
    return value


def episode_sequence(row: dict[str, Any], tokenizer: Any) -> dict[str, Any]:
    """One episode's act row (``--act-rows episode``: its messages hold every earlier turn) as TRL's
    rollout: the first act prompt's ids, the rest of the conversation as the completion with the act
    turns' tokens marked (``env_mask`` 1) and the rest masked (0), the server's log-probs of its last
    turn's sampled tokens (None elsewhere: TRL reads them only against vLLM), and the reward."""
    eos_id = tokenizer.token_id(tokenizer.eos_token)
    history = encode_with_history(row, tokenizer, eos_id)
    spans: list[tuple[int, int]] = []
    if history is None:  # a template that does not render turns as prefixes: the last turn only
        prompt_ids = tokenizer.encode(render_prompt(row, tokenizer))
    else:
        prompt_ids, spans = history
    target = sampled_ids(row, len(tokenizer)) or (tokenizer.encode(row["target"]) + ([eos_id] if row.get("eos", True)
                                                                                    else []))
    first = spans[0][0] if spans else len(prompt_ids)
    completion = prompt_ids[first:] + target
    mask = [0] * (len(prompt_ids) - first) + [1] * len(target)
    for start, end in spans:
        mask[start - first:end - first] = [1] * (end - start)
    logprobs: list[float | None] = [None] * (len(prompt_ids) - first)
    logprobs += row.get("target_logprobs") or [None] * len(target)
    return {"prompt_ids": prompt_ids[:first], "completion_ids": completion, "env_mask": mask, "logprobs": logprobs,
            "reward": float(row.get("reward") or 0.0)}


class StudioRollouts:
    """``rollout_func`` of TRL's GRPOTrainer: the studio's runner playing the trainer's live model."""

    def __init__(self, cfg: TrainerConfig, events: EventStream, model_folder: str, tokenizer: Any) -> None:
        if not cfg.rollouts.command:
            raise config_error("trl-grpo needs rollouts.command: the studio's `rehearse rollout {tasks} --episodes "
                               "{episodes} --policy {endpoint} --model {model} --act-rows episode --record-tokens "
                               "--out {out}`.")
        self.cfg, self.events, self.folder, self.tokenizer = cfg, events, model_folder, tokenizer
        self.url: str | None = None
        self.calls = 0
        self.lock = threading.Lock()

    def serve(self, live: Any) -> str:
        """The live model on a loopback port, started once (the engine samples its current weights)."""
        if self.url is None:
            from ..serve_hf import Engine, serve_in_background
            device = str(next(live.parameters()).device)
            engine = Engine(self.folder, SERVED_NAME, device, live=live)
            self.server, self.url = serve_in_background(engine)
        return self.url

    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        tasks = [p[-1]["content"] if isinstance(p, list) else str(p) for p in prompts]
        order = list(dict.fromkeys(tasks))
        counts = {t: tasks.count(t) for t in order}
        episodes = set(counts.values())
        if len(episodes) != 1:
            raise TrainerError("TRL_BATCH_UNEVEN", f"TRL's batch asks for unequal episodes per task ({counts}); "
                               "set trl.tasks_per_step so that each step takes whole groups.")
        assert self.cfg.out_dir, "open_run requires out_dir"
        step = self.calls
        self.calls += 1
        out = os.path.join(self.cfg.out_dir, "rollouts", f"step-{step:04d}", "rows.jsonl")
        os.makedirs(os.path.dirname(out), exist_ok=True)
        if os.path.exists(out):
            os.remove(out)
        was_training = trainer.model.training
        trainer.model.eval()
        try:
            values = {"endpoint": self.serve(trainer.model), "model": SERVED_NAME, "out": out,
                      "episodes": episodes.pop(), "seed": self.cfg.seed + step, "iteration": step,
                      "run_dir": self.cfg.out_dir}
            argv: list[str] = []
            for arg in self.cfg.rollouts.command or ():
                argv += order if arg == "{tasks}" else substitute([arg], values)
            run_command(argv, self.cfg.rollouts.env, self.cfg.rollouts.timeout_s, self.cfg.config_dir,
                        self.events.stderr)
        finally:
            trainer.model.train(was_training)
        if not os.path.exists(out):
            raise TrainerError("ROLLOUT_COMMAND_FAILED", f"rollouts.command wrote no rows to {out}.", 1)
        by_task: dict[str, list[dict[str, Any]]] = {t: [] for t in order}
        ids = {task_id(t): t for t in order}
        for row in read_rows([out]):
            if row["role"] == "act" and row.get("task") in ids:
                by_task[ids[row["task"]]].append(row)
        output: dict[str, list[Any]] = {"prompt_ids": [], "completion_ids": [], "logprobs": [], "env_mask": [],
                                        "studio_reward": []}
        for task in order:
            rows = sorted(by_task[task], key=lambda r: str(r.get("episode")))
            if len(rows) != counts[task]:
                raise data_error(f"rollouts.command wrote {len(rows)} act rows for {task}, not {counts[task]}: it "
                                 "must play --episodes {episodes} with --act-rows episode (one row per episode).")
            for row in rows:
                seq = episode_sequence(row, self.tokenizer)
                for key in ("prompt_ids", "completion_ids", "logprobs", "env_mask"):
                    output[key].append(seq[key])
                output["studio_reward"].append(seq["reward"])
        self.events.emit("progress", stage="rollouts", done=step + 1, total=self.cfg.grpo.iterations, file=out)
        return output


def studio_reward(completions: list[Any], studio_reward: list[float], **_: Any) -> list[float | None]:
    """The reward the studio's checks gave each episode (``rollout_func`` passes it through)."""
    return list(studio_reward)


def run_trl_grpo(cfg: TrainerConfig, events: EventStream, runtime: Runtime) -> None:
    try:
        from datasets import Dataset  # type: ignore[import-untyped]
        from transformers import AutoTokenizer, TrainerCallback
        from transformers.trainer_callback import PrinterCallback
        from trl import GRPOConfig, GRPOTrainer
    except ImportError as e:
        raise TrainerError("TRAINER_PACKAGES_MISSING", f"trl-grpo needs trl and datasets ({e}): run `rehearse "
                           "trainer setup --dev`, which installs the pinned trl and datasets of "
                           "trainer/requirements-dev.txt.") from e
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    model, tokenizer, tokenizer_dir, _ = open_run(cfg, events, runtime, "trl-grpo")
    if not isinstance(model, HFPolicy):
        raise config_error("trl-grpo trains a Hugging Face model through transformers: set model.backend to "
                           "transformers or lora.rank.")
    trl = cfg.trl
    tasks = task_files(trl.tasks)
    hf_tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
    if hf_tokenizer.pad_token is None:
        hf_tokenizer.pad_token = hf_tokenizer.eos_token
    rollouts = StudioRollouts(cfg, events, tokenizer_dir, tokenizer)
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": t}]} for t in tasks])
    assert cfg.out_dir, "open_run requires out_dir"

    class Events(TrainerCallback):
        """TRL's logs of each step as `trl_step` events (stdout carries nothing else)."""

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            numbers = {k: float(v) for k, v in (logs or {}).items()
                       if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}
            if "loss" in numbers:
                events.emit("trl_step", step=int(state.global_step), steps=int(state.max_steps), logs=numbers)

    args = GRPOConfig(
        output_dir=os.path.join(cfg.out_dir, "trl"), max_steps=cfg.grpo.iterations,
        per_device_train_batch_size=trl.tasks_per_step * trl.num_generations, num_generations=trl.num_generations,
        learning_rate=cfg.optim.lr, lr_scheduler_type="constant", beta=cfg.grpo.kl_coef,
        temperature=cfg.grpo.temperature, max_completion_length=cfg.data.max_length, logging_steps=1,
        save_strategy="no", report_to=[], use_cpu=runtime.device.type == "cpu", seed=cfg.seed,
        bf16=cfg.train.precision == "bf16" and runtime.device.type == "cuda", remove_unused_columns=False,
        disable_tqdm=True)
    trainer = GRPOTrainer(model=model.inner, reward_funcs=studio_reward,  # type: ignore[arg-type]
                          args=args, train_dataset=dataset, processing_class=hf_tokenizer, rollout_func=rollouts,
                          callbacks=[Events()])
    # transformers prints each log line on stdout, which carries only the trainer's events.
    trainer.remove_callback(PrinterCallback)
    result = trainer.train()
    written = finish(cfg, events, runtime, model, tokenizer, tokenizer_dir)
    events.emit("done", command="trl-grpo", steps=int(result.global_step), **written)
