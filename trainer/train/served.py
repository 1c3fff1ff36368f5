"""A served rollout engine: the OpenAI-compatible server (vLLM, SGLang, ``trainer.serve_hf``) the user
started on the run's base model, to which a LoRA run hands its adapter each GRPO iteration.

vLLM's runtime LoRA endpoints (``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``): ``POST
/v1/load_lora_adapter {"lora_name", "lora_path"}`` and ``POST /v1/unload_lora_adapter {"lora_name"}``.
The adapter folder must be readable by the server at the same path (one machine, or a shared disk).
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

from ..errors import EXIT_RUNTIME, TrainerError, config_error

#: Seconds one request to the server may take (loading an adapter reads it from disk).
REQUEST_TIMEOUT_S = 300
#: Bytes of a server's answer read at most.
MAX_ANSWER = 1 << 20


class ServedEngine:
    def __init__(self, url: str, api_key_env: str | None) -> None:
        self.url = url.rstrip("/")
        if not self.url.endswith("/v1"):
            raise config_error(f"rollouts.server_url must be the server's OpenAI base URL ending in /v1, not {url!r} "
                               "(e.g. http://127.0.0.1:8000/v1).")
        self.key = None
        if api_key_env:
            self.key = os.environ.get(api_key_env)
            if not self.key:
                raise config_error(f"rollouts.server_api_key_env names {api_key_env}, which is not set.")
        #: The adapter name the server holds now (None before the first iteration).
        self.loaded: str | None = None

    def _post(self, route: str, body: dict[str, Any], base: str | None = None) -> tuple[int, str]:
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {self.key}"} if self.key else {})}
        request = urllib.request.Request((base or self.url) + route, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_S) as answer:  # noqa: S310 (a URL the user named)
                return answer.status, answer.read(MAX_ANSWER).decode("utf-8", errors="replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read(MAX_ANSWER).decode("utf-8", errors="replace")
        except (urllib.error.URLError, OSError) as e:
            raise TrainerError("SERVER_UNREACHABLE", f"Cannot reach the rollout server at {self.url} ({e}). Start it "
                               "on the run's base (vLLM: `vllm serve <base> --enable-lora --max-lora-rank <r>` with "
                               "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), or fix rollouts.server_url.", EXIT_RUNTIME) from e

    def publish(self, name: str, adapter_dir: str) -> float:
        """Loads the adapter in ``adapter_dir`` under ``name`` and unloads the one before; returns seconds."""
        t0 = time.monotonic()
        # A run resumed after a crash loads an iteration the server may hold already: it is replaced.
        self.unload(name)
        status, text = self._post("/load_lora_adapter", {"lora_name": name, "lora_path": os.path.abspath(adapter_dir)})
        if status != 200:
            raise TrainerError("ADAPTER_LOAD_FAILED", f"{self.url} did not load the adapter {adapter_dir} as {name} "
                               f"({status}: {text[:500]}). vLLM needs --enable-lora, a --max-lora-rank of at least "
                               "lora.rank and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True.", EXIT_RUNTIME)
        previous, self.loaded = self.loaded, name
        if previous and previous != name:
            self.unload(previous)
        return time.monotonic() - t0

    def reload(self, model_dir: str) -> float:
        """Full fine-tuning: the server reads every weight again from ``model_dir`` (a Hugging Face
        folder), in place, under the name it serves the base as (SGLang's ``POST
        /update_weights_from_disk``, beside its /v1 routes); returns seconds."""
        t0 = time.monotonic()
        base = self.url[: -len("/v1")]
        status, text = self._post("/update_weights_from_disk", {"model_path": os.path.abspath(model_dir)}, base)
        if status != 200:
            raise TrainerError("WEIGHTS_RELOAD_FAILED", f"{base} did not reload its weights from {model_dir} "
                               f"({status}: {text[:500]}). Full fine-tuning needs a server with SGLang's "
                               "/update_weights_from_disk (or `python -m trainer.serve_hf`); vLLM takes LoRA "
                               "adapters at run time: set lora.rank.", EXIT_RUNTIME)
        return time.monotonic() - t0

    def unload(self, name: str) -> None:
        # An adapter the server no longer holds (restarted meanwhile) is no error.
        self._post("/unload_lora_adapter", {"lora_name": name})
