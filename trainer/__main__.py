"""Entry point: ``python3 -m trainer <command> ...`` (see :mod:`trainer.cli`)."""
import os
import sys

# libgomp spin-waits by default and oversubscribes small machines; read once, before torch loads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .cli import main  # noqa: E402  (after the environment is set)

if __name__ == "__main__":
    sys.exit(main())
