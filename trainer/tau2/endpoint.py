"""An OpenAI-compatible endpoint as τ²'s LLM calls take it: litellm's ``openai/<model>`` at the
endpoint's base URL (``api_base``), its key read from the environment variable the caller names
(never from the input: a key travels in the environment, not on a command line or in a trace).

Both endpoints the studio hands τ² go through here: the user simulator's (``--user-endpoint``,
:mod:`.user`) and the judge of τ²'s natural-language assertions (``--judge``, :mod:`.grade`).
An endpoint is ``{"base_url": ..., "model": ..., "api_key_env": "VAR"?}``.
"""
from __future__ import annotations

import os
from typing import Any


def llm_model(endpoint: dict[str, Any]) -> str:
    """litellm's name of the endpoint's model: ``openai/<model>`` (any OpenAI-compatible server)."""
    return f"openai/{endpoint['model']}"


def llm_args(endpoint: dict[str, Any], defaults: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """τ²'s ``llm_args`` for the endpoint: τ²'s own ``defaults`` (its temperature), the endpoint's
    base URL, its key (``none`` when the variable is unnamed or empty) and litellm's ``timeout`` of
    one request."""
    key_env = endpoint.get("api_key_env")
    return {**defaults, "api_base": str(endpoint["base_url"]),
            # An OpenAI-compatible server of one's own often takes no key; litellm needs one.
            "api_key": (os.environ.get(str(key_env)) if key_env else None) or "none",
            "timeout": timeout_s}


def unreachable(e: BaseException) -> bool:
    """Whether ``e`` (litellm's, or what it wraps) is a connection that could not be made or timed
    out. litellm wraps a refused connection in an ``InternalServerError``: the causes below it say
    what it was."""
    import httpx
    import litellm
    kinds = (litellm.exceptions.APIConnectionError, litellm.exceptions.Timeout, httpx.ConnectError,
             httpx.TimeoutException, ConnectionError, TimeoutError)
    seen: BaseException | None = e
    for _ in range(16):
        if seen is None:
            break
        if isinstance(seen, kinds):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
