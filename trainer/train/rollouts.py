"""Where each GRPO iteration's rollout rows come from.

Normally the studio's own runner generates them: after exporting the current policy the trainer runs
``rollouts.command`` (imagine mode with that ONNX policy), so prompts, parsers and checks have one
implementation (TypeScript) and the sampled policy is exactly the deployed one. For offline runs and
tests, ``rollouts.rows`` names a rows file per iteration instead.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from ..errors import EXIT_RUNTIME, TrainerError, config_error

if TYPE_CHECKING:
    from ..config_types import TrainerConfig

PLACEHOLDERS = ("{model_dir}", "{out}", "{iteration}", "{seed}", "{run_dir}", "{endpoint}", "{model}")


def substitute(argv: Sequence[str], values: dict[str, Any]) -> list[str]:
    """Replaces the placeholders in every argument (plain text replacement: JSON braces are safe)."""
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", str(value))
        out.append(arg)
    return out


def _pump(stream, sink, prefix):
    # The command's output goes to our stderr: stdout is reserved for our own events.
    for line in iter(stream.readline, b""):
        sink.write(prefix + line.decode("utf-8", errors="replace"))
        sink.flush()


def run_command(argv: Sequence[str], env_extra: dict[str, str], timeout_s: float, cwd: str,
                log_sink: TextIO | None = None, code: str = "ROLLOUT_COMMAND_FAILED",
                what: str = "rollouts.command", prefix: str = "[rollouts] ") -> None:
    """Runs a command of the loop (``what``: the rollouts or the validation); raises ``code`` on a
    non-zero exit or a timeout. Its output goes to ``log_sink`` with ``prefix`` on each line."""
    sink = log_sink or sys.stderr
    env = dict(os.environ)
    env.update(env_extra)
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
    except OSError as e:
        raise TrainerError(code, f"Cannot start {what} {argv[0]!r}: {e}.", EXIT_RUNTIME) from e
    assert proc.stdout is not None and proc.stderr is not None, "Popen with PIPE gives both streams"
    stdout, stderr = proc.stdout, proc.stderr
    pumps = [threading.Thread(target=_pump, args=(s, sink, prefix), daemon=True) for s in (stdout, stderr)]
    for p in pumps:
        p.start()
    try:
        status = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        proc.kill()
        proc.wait()
        stdout.close()
        stderr.close()
        raise TrainerError(code, f"{what} ran past its timeout_s ({timeout_s} s) and was stopped.", EXIT_RUNTIME) from e
    for p in pumps:
        p.join(timeout=5)
    stdout.close()
    stderr.close()
    if status != 0:
        raise TrainerError(code, f"{what} exited with status {status} (its output is on stderr with a "
                           f"{prefix.strip()} prefix).", EXIT_RUNTIME)


class RolloutSource:
    """Gives the rows file of an iteration, generating it first when a command is configured."""

    def __init__(self, cfg: TrainerConfig, log_sink: TextIO | None = None) -> None:
        self.log_sink = log_sink
        ro = cfg.rollouts
        if not ro.command and not ro.rows:
            raise config_error("`grpo` needs rollouts.command (the studio's runner in imagine mode) or rollouts.rows "
                               "(a rows file per iteration, {iteration} replaced).")
        if ro.command and ro.rows:
            raise config_error("Set either rollouts.command or rollouts.rows, not both.")
        self.cfg = cfg
        self.command = ro.command

    @property
    def needs_export(self) -> bool:
        return bool(self.command)

    def iteration_dir(self, iteration: int) -> str:
        assert self.cfg.out_dir, "open_run requires out_dir"
        return os.path.join(self.cfg.out_dir, "rollouts", f"iter-{iteration:04d}")

    def rows_for(self, iteration: int, model_dir: str, served: dict[str, str] | None = None) -> tuple[str, float]:
        """Path of the iteration's rows (runs the command first when there is one)."""
        ro = self.cfg.rollouts
        if not self.command:
            assert ro.rows, "__init__ requires rollouts.command or rollouts.rows"
            path = ro.rows.replace("{iteration}", str(iteration))
            if not os.path.exists(path):
                raise config_error(f"rollouts.rows: {path} (iteration {iteration}) does not exist.")
            return path, 0.0
        out = os.path.join(self.iteration_dir(iteration), "rows.jsonl")
        if os.path.exists(out):
            os.remove(out)  # a rerun after a crash must not read a half-written file
        values = {"model_dir": model_dir, "out": out, "iteration": iteration,
                  "seed": self.cfg.seed + iteration, "run_dir": self.cfg.out_dir, **(served or {})}
        t0 = time.monotonic()
        run_command(substitute(self.command, values), ro.env, ro.timeout_s, self.cfg.config_dir, self.log_sink)
        if not os.path.exists(out):
            raise TrainerError("ROLLOUT_COMMAND_FAILED", f"rollouts.command succeeded but wrote no rows to {out} "
                               "(it must write its rows to the {out} placeholder).", EXIT_RUNTIME)
        return out, time.monotonic() - t0
