"""Coded errors a user can cause (bad config, bad rows, failed rollout command).

Each one becomes a single ``error`` event on stdout and a non-zero exit status; the message says what
to do. Anything else that escapes is a bug and is reported with the code ``INTERNAL``.
"""
from typing import Any

#: Exit status of errors in what the user gave us (config, rows, paths), like the CLI's usage errors.
EXIT_USAGE = 2
#: Exit status of failures while running (a rollout command failed, export failed, ...).
EXIT_RUNTIME = 1


class TrainerError(Exception):
    """An error with a stable code, a message that says what to do, and the exit status it causes."""

    def __init__(self, code: str, message: str, exit_code: int = EXIT_USAGE, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.details = details


def config_error(message: str, **details: Any) -> TrainerError:
    """The configuration is wrong (exit 2)."""
    return TrainerError("CONFIG_INVALID", message, EXIT_USAGE, **details)


def data_error(message: str, **details: Any) -> TrainerError:
    """A dataset row or file is wrong (exit 2)."""
    return TrainerError("DATA_INVALID", message, EXIT_USAGE, **details)
