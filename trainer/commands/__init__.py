"""One module per command of ``python3 -m trainer``; each exposes ``run(cfg, events, runtime)``."""
