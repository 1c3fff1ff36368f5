"""Training runs: the optimizer engine shared by the objectives, checkpoints, and the sft and grpo loops."""
