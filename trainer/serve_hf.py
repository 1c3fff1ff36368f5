"""A small OpenAI-compatible chat server backed by transformers, with vLLM's LoRA endpoints.

``python -m trainer.serve_hf --model <Hugging Face folder> [--port 8000] [--host 127.0.0.1]``

It stands in for vLLM where vLLM cannot run (CPU machines, the tests, a GPU check without vLLM) and
speaks the part of vLLM's API a served GRPO run uses:

- ``POST /v1/chat/completions``: ``messages``, ``tools``, ``temperature``, ``top_p``, ``seed``, ``n``,
  ``max_tokens``, ``logprobs``, and vLLM's ``return_token_ids`` (``token_ids`` on each choice,
  ``prompt_token_ids`` on the response). The prompt is the folder's own chat template; the text is
  returned raw (tool calls stay in ``content`` as the model wrote them). Log-probs are of the
  distribution sampled from (after temperature), as vLLM's ``--logprobs-mode processed_logprobs``.
- ``POST /v1/load_lora_adapter`` ``{"lora_name", "lora_path"}`` and ``POST /v1/unload_lora_adapter``
  ``{"lora_name"}``; a request's ``model`` names the base (the served name) or a loaded adapter.
- ``POST /update_weights_from_disk`` ``{"model_path"}`` (SGLang's): the base's weights read again in
  place, for full fine-tuning.
- ``GET /v1/models``, ``GET /health``.

One request generates at a time (a lock); it is a stand-in, not a serving engine. Loopback only
unless ``--host`` says otherwise; bodies past 8 MiB, ``n`` past 16 and ``max_tokens`` past 8192 are
refused with 400.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import torch

MAX_BODY = 8 * 2 ** 20
MAX_N = 16
MAX_TOKENS = 8192


class BadRequest(Exception):
    pass


class Engine:
    """The model, its adapters and its tokenizer; ``complete`` is one chat completion."""

    def __init__(self, folder: str, served_name: str, device: str = "cpu", dtype: str = "float32",
                 live: Any = None) -> None:
        """``live``: a model already in memory to serve as it is (a trainer's, while it trains: each
        request samples its current weights), instead of loading ``folder``'s; ``folder`` still gives
        the tokenizer and the chat template."""
        from transformers import AutoModelForCausalLM
        from transformers.utils import logging as hf_logging

        from .chat_template import render_chat
        from .data.encode import chat_template, special_tokens
        from .tokenizer import load_tokenizer
        hf_logging.disable_progress_bar()
        self.folder, self.name = folder, served_name
        self.device = torch.device(device)
        if live is None:
            base = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=getattr(torch, dtype))
            live = base.to(self.device).eval()  # type: ignore[arg-type]  # transformers types .to oddly
        self.base = live
        self.model: Any = self.base
        self.adapters: dict[str, str] = {}
        self.tokenizer = load_tokenizer(folder)
        self._render = lambda messages, tools: render_chat(chat_template(self.tokenizer), messages, tools, True,
                                                            special_tokens(self.tokenizer))
        eos = self.base.generation_config.eos_token_id if self.base.generation_config else None
        eos = eos if eos is not None else self.base.config.eos_token_id
        self.stop = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
        self.lock = threading.Lock()

    def load_adapter(self, name: str, path: str) -> None:
        from peft import PeftModel
        if not name or not os.path.isfile(os.path.join(path, "adapter_config.json")):
            raise BadRequest(f"lora_path {path!r} is not a PEFT adapter folder (no adapter_config.json).")
        with self.lock:
            if name in self.adapters:
                raise BadRequest(f"The lora adapter '{name}' has already been loaded.")
            if self.model is self.base:
                self.model = PeftModel.from_pretrained(self.base, path, adapter_name=name).eval()
            else:
                self.model.load_adapter(path, adapter_name=name)
            self.adapters[name] = path

    def unload_adapter(self, name: str) -> None:
        with self.lock:
            if name not in self.adapters:
                raise BadRequest(f"The lora adapter '{name}' cannot be found.")
            self.model.delete_adapter(name)
            del self.adapters[name]

    @torch.no_grad()
    def reload(self, path: str) -> None:
        """SGLang's ``/update_weights_from_disk``: every weight read again from a Hugging Face folder of
        the same architecture, in place (full fine-tuning's iterations)."""
        from transformers import AutoModelForCausalLM
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise BadRequest(f"model_path {path!r} is not a Hugging Face model folder (no config.json).")
        with self.lock:
            if self.adapters:
                raise BadRequest("Unload the LoRA adapters before reloading the base's weights.")
            new = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=self.base.dtype)
            try:
                self.base.load_state_dict(new.state_dict(), strict=True)
            except RuntimeError as e:
                raise BadRequest(f"{path} is not the served model's architecture: {e}") from e

    @torch.no_grad()
    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        model_name = body.get("model") or self.name
        if model_name != self.name and model_name not in self.adapters:
            raise BadRequest(f"The model `{model_name}` does not exist (served: {self.name}, "
                             f"{', '.join(self.adapters) or 'no adapters'}).")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise BadRequest("messages must be a non-empty list.")
        n = int(body.get("n") or 1)
        max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
        if not 1 <= n <= MAX_N or not 1 <= max_tokens <= MAX_TOKENS:
            raise BadRequest(f"n must be 1..{MAX_N} and max_tokens 1..{MAX_TOKENS}.")
        temperature = float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0)
        top_p = float(body.get("top_p") or 1.0)
        seed = body.get("seed")
        prompt = self.tokenizer.encode(self._render(messages, body.get("tools") or None))
        with self.lock:
            net = self._net(model_name)
            generator = torch.Generator().manual_seed(int(seed)) if seed is not None else None
            choices = [self._sample(net, prompt, i, max_tokens, temperature, top_p, generator, body) for i in range(n)]
        out: dict[str, Any] = {
            "id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": model_name, "choices": choices,
            "usage": {"prompt_tokens": len(prompt), "completion_tokens": sum(len(c["token_ids"]) for c in choices),
                      "total_tokens": len(prompt) + sum(len(c["token_ids"]) for c in choices)}}
        if body.get("return_token_ids"):
            out["prompt_token_ids"] = prompt
        else:
            for c in choices:
                del c["token_ids"]
        return out

    def _net(self, model_name: str) -> Any:
        if model_name == self.name:
            return self.base if self.model is self.base else _WithoutAdapter(self.model)
        self.model.set_adapter(model_name)
        return self.model

    def _sample(self, net: Any, prompt: list[int], index: int, max_tokens: int, temperature: float, top_p: float,
                generator: torch.Generator | None, body: dict[str, Any]) -> dict[str, Any]:
        ids: list[int] = []
        logprobs: list[float] = []
        past = None
        step_input = torch.tensor([prompt], device=self.device)
        finish = "length"
        for _ in range(max_tokens):
            out = net(input_ids=step_input, past_key_values=past, use_cache=True)
            past = out.past_key_values
            logits = out.logits[0, -1].float().cpu()
            if temperature <= 0:
                dist = torch.log_softmax(logits, -1)
                token = int(torch.argmax(dist))
            else:
                dist = torch.log_softmax(logits / temperature, -1)
                probs = dist.exp()
                if top_p < 1.0:
                    sorted_p, order = probs.sort(descending=True)
                    keep = sorted_p.cumsum(0) - sorted_p < top_p
                    probs = torch.zeros_like(probs).scatter(0, order[keep], sorted_p[keep])
                token = int(torch.multinomial(probs / probs.sum(), 1, generator=generator))
            ids.append(token)
            logprobs.append(float(dist[token]))
            if token in self.stop:  # kept in token_ids and logprobs, as vLLM keeps it; not in the text
                finish = "stop"
                break
            step_input = torch.tensor([[token]], device=self.device)
        text = self.tokenizer.decode(ids[:-1] if finish == "stop" else ids)
        choice: dict[str, Any] = {"index": index, "message": {"role": "assistant", "content": text},
                                  "finish_reason": finish, "token_ids": ids}
        if body.get("logprobs"):
            choice["logprobs"] = {"content": [{"token": self.tokenizer.decode([t]), "logprob": lp, "bytes": None,
                                               "top_logprobs": []} for t, lp in zip(ids, logprobs, strict=True)]}
        return choice


class _WithoutAdapter:
    """The base model of a PeftModel, its adapters switched off for one call."""

    def __init__(self, peft_model: Any) -> None:
        self.peft_model = peft_model

    def __call__(self, **kwargs: Any) -> Any:
        with self.peft_model.disable_adapter():
            return self.peft_model(**kwargs)


def make_handler(engine: Engine):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base class's name)
            sys.stderr.write("[serve_hf] " + (format % args) + "\n")

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                raise BadRequest(f"The body is larger than {MAX_BODY} bytes.")
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError as e:
                raise BadRequest(f"The body is not JSON: {e}") from e
            if not isinstance(body, dict):
                raise BadRequest("The body must be a JSON object.")
            return body

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/health":
                self._send(200, {"status": "ok"})
            elif self.path == "/v1/models":
                names = [engine.name, *engine.adapters]
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in names]})
            else:
                self._send(404, {"error": {"message": f"No route {self.path}", "type": "NotFoundError"}})

        def do_POST(self) -> None:  # noqa: N802
            try:
                body = self._body()
                if self.path == "/v1/chat/completions":
                    self._send(200, engine.complete(body))
                elif self.path == "/v1/load_lora_adapter":
                    engine.load_adapter(str(body.get("lora_name") or ""), str(body.get("lora_path") or ""))
                    self._send(200, {"message": f"Success: LoRA adapter '{body['lora_name']}' added successfully."})
                elif self.path == "/update_weights_from_disk":
                    engine.reload(str(body.get("model_path") or ""))
                    self._send(200, {"success": True, "message": "Succeeded to update model weights."})
                elif self.path == "/v1/unload_lora_adapter":
                    engine.unload_adapter(str(body.get("lora_name") or ""))
                    self._send(200, {"message": f"Success: LoRA adapter '{body['lora_name']}' removed successfully."})
                else:
                    self._send(404, {"error": {"message": f"No route {self.path}", "type": "NotFoundError"}})
            except (BadRequest, ValueError, TypeError) as e:
                self._send(400, {"error": {"message": str(e), "type": "BadRequestError"}})

    return Handler


def serve_in_background(engine: Engine, host: str = "127.0.0.1") -> tuple[ThreadingHTTPServer, str]:
    """Serves ``engine`` from a daemon thread on a free port; returns the server and its /v1 URL."""
    server = ThreadingHTTPServer((host, 0), make_handler(engine))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://{host}:{server.server_address[1]}/v1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trainer.serve_hf", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a Hugging Face model folder")
    parser.add_argument("--served-model-name", help="the name requests give as model (default: the folder's name)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0: any free port (the ready line names it)")
    parser.add_argument("--device", default="auto", help="auto (CUDA when there is one), cpu, cuda or cuda:N")
    parser.add_argument("--dtype", default="float32", choices=("float32", "bfloat16", "float16"))
    args = parser.parse_args(argv)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    device = ("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device
    engine = Engine(os.path.abspath(args.model), args.served_model_name or os.path.basename(os.path.abspath(args.model)),
                    device, args.dtype)
    server = ThreadingHTTPServer((args.host, args.port), make_handler(engine))
    # One line on stdout when it listens: the tests and the GPU check wait for it.
    print(json.dumps({"event": "listening", "url": f"http://{args.host}:{server.server_address[1]}/v1",
                      "model": engine.name}), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
