"""``test-model``: a small random-weight policy folder in a few seconds, for the studio's own tests
(real ONNX with a KV cache, a real tokenizer and chat template, meaningless output). The same seed
gives the same files."""
from __future__ import annotations

import os
import random
from typing import TYPE_CHECKING, Any

from ..chat_template import CHAT_TEMPLATE, render_chat
from ..config_types import ArchitectureConfig, ExportSection
from ..errors import config_error
from ..export import export_model_folder
from ..tokenizer import DEFAULT_ADDED_TOKENS
from .init import make_model, write_model_folder
from .tokenizer import build

if TYPE_CHECKING:
    from ..events import EventStream

ARCHITECTURE: dict[str, Any] = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
                "num_key_value_heads": 2, "max_position_embeddings": 4096}
_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "add_item", "description": "Add an item to the cart",
                                      "parameters": {"type": "object",
                                                     "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                                                     "required": ["sku"]}}},
]
_CITIES = ["Paris", "Lisbon", "Oslo", "Tokyo", "Lima", "Cairo", "Quito", "Seoul"]


def synthetic_corpus(seed: int, count: int = 60) -> list[str]:
    """Chat-template text of small tool-using conversations and rehearsals (the tokenizer's corpus)."""
    rnd = random.Random(seed)
    variables = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "bos_token": None, "unk_token": None}
    texts = []
    for _ in range(count):
        city, temp = rnd.choice(_CITIES), rnd.randint(-5, 35)
        call = f'\n<tool_call>\n{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}\n</tool_call>'
        result = f'{{"city":"{city}","temperature":{temp:d},"unit":"C"}}'
        messages = [{"role": "user", "content": f"What is the weather in {city}?"},
                    {"role": "assistant", "content": call},
                    {"role": "tool", "name": "get_weather", "content": result},
                    {"role": "assistant", "content": f"It is {temp} C in {city}."}]
        texts.append(render_chat(CHAT_TEMPLATE, messages, _TOOLS, False, variables))
        rehearse = [{"role": "system", "content": "You are a precise tool simulator."},
                    {"role": "user", "content": f"Call to simulate:\nTool: get_weather\nArguments: {{\"city\":\"{city}\"}}"}]
        texts.append(render_chat(CHAT_TEMPLATE, rehearse, None, True, variables) +
                     f"<think>\nA city.\n</think>\n<execution_result>\n{result}\n</execution_result><|im_end|>")
    return texts


def make_test_model(folder: str, seed: int = 0, vocab_size: int = 512) -> dict[str, Any]:
    """Writes the folder (tokenizer, PyTorch weights, ONNX export); returns the export summary."""
    os.makedirs(folder, exist_ok=True)
    tokenizer, _ = build(synthetic_corpus(seed), vocab_size, DEFAULT_ADDED_TOKENS, 2, folder, 4096)
    model = make_model(ArchitectureConfig(**ARCHITECTURE), tokenizer, seed)
    write_model_folder(folder, model, tokenizer, folder, 64)
    summary = export_model_folder(model, tokenizer, folder, folder, ExportSection(max_new_tokens=64))
    summary["parameters"] = sum(p.numel() for p in model.parameters())
    return summary


def run_test_model(out: str, seed: int, events: EventStream) -> None:
    if not out:
        raise config_error("`test-model` needs --out <folder>.")
    events.emit("export", **make_test_model(os.path.abspath(out), seed))
    events.emit("done", command="test-model", path=os.path.abspath(out))
