"""From a row to token ids: the training text is
``chat_template(messages, tools, add_generation_prompt=True) + target + <end token>``, and the loss
covers the target and the end token only. A row with ``eos: false`` (a rollout sample that stopped on a
stop string or its token limit) has no end token: the policy never sampled one.

The prompt and the target are tokenized separately: the policy host tokenizes the rendered prompt on
its own and generates the target after it, so this is the token sequence the policy actually sees.
(When the policy sampled a non-canonical tokenization of its text, training uses the canonical one.)

An act row with ``train_history: true`` also trains on every earlier assistant turn of its
conversation: one row then teaches a whole episode, instead of one row per turn each re-reading the
same prefix. The prompt is tokenized piece by piece (template text, then each assistant text and its
end token), which is how those turns were generated; the tokenizer splits at every newline, so the
pieces join exactly as the whole conversation tokenizes.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..chat_template import render_chat
from ..errors import data_error

if TYPE_CHECKING:
    from ..tokenizer.tokenizer import Tokenizer


class Example:
    """A tokenized row."""

    __slots__ = ("index", "id", "role", "source", "weight", "reward", "group", "prompt_ids", "target_ids",
                 "advantage", "has_signal", "finished", "temperature", "where", "history_spans", "episode",
                 "sampler_logprobs")

    def __init__(self, index: int, row: dict[str, Any], prompt_ids: list[int], target_ids: list[int],
                 history_spans: Sequence[tuple[int, int]] = ()) -> None:
        self.index = index
        self.id = row["id"]
        self.role = row["role"]
        self.source = row["source"]
        self.weight = float(row.get("weight", 1.0))
        self.reward: float | None = row.get("reward")
        self.group: str | None = row.get("group")
        self.prompt_ids = prompt_ids
        self.target_ids = target_ids
        self.advantage = 0.0
        #: Whether the row's (group, role) set has rewards that differ (set with the advantages).
        self.has_signal = False
        #: Rollout rows: whether the episode finished on its own; rows without the field count as finished.
        self.finished = row.get("finished") is not False
        #: Rollout rows: the temperature the row's role sampled at (GRPO scores its log-probs at it).
        self.temperature: float | None = row.get("temperature")
        self.where = row.get("_where", "")
        #: ``(start, end)`` index ranges of ``prompt_ids`` that are also trained on (history turns).
        self.history_spans = tuple(history_spans)
        #: The episode the row belongs to, as ``(group, task, episode)`` (episode ids are unique within
        #: a run, not across rollout files); None for a row without an ``episode`` field.
        episode = row.get("episode")
        self.episode: tuple[str | None, str | None, str] | None = (
            (row.get("group"), row.get("task"), str(episode)) if episode is not None else None)
        #: A served model's rollout row: each target token's log-prob under the sampler (truncated IS).
        self.sampler_logprobs: list[float] | None = row.get("target_logprobs")

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.target_ids)

    @property
    def loss_tokens(self) -> int:
        """How many tokens the loss covers: the target's, plus those of trained history turns."""
        return len(self.target_ids) + sum(end - start for start, end in self.history_spans)


def special_tokens(tokenizer: Tokenizer) -> dict[str, str | None]:
    """The token variables transformers.js gives a chat template."""
    return {name: tokenizer.token_text(name) for name in ("bos_token", "eos_token", "pad_token", "unk_token")}


def chat_template(tokenizer: Tokenizer) -> str:
    """The tokenizer's chat template: rows cannot be rendered without one."""
    template = tokenizer.chat_template
    if template is None:
        from ..errors import TrainerError
        raise TrainerError("TOKENIZER_MISSING", "The tokenizer_config.json has no chat_template; rows cannot be rendered.")
    return template


def render_prompt(row: dict[str, Any], tokenizer: Tokenizer) -> str:
    return render_chat(chat_template(tokenizer), row["messages"], row.get("tools"), True, special_tokens(tokenizer))


def render_row(row: dict[str, Any], tokenizer: Tokenizer) -> tuple[str, str]:
    """``(prompt_text, target_text)``; target_text ends with the end token unless the row says ``eos: false``."""
    return render_prompt(row, tokenizer), row["target"] + (tokenizer.eos_token if row.get("eos", True) else "")


def encode_with_history(row: dict[str, Any], tokenizer: Tokenizer,
                        eos_id: int) -> tuple[list[int], list[tuple[int, int]]] | None:
    """``(prompt_ids, spans)`` of a ``train_history`` row, or None when its template does not render
    conversations as prefixes of each other (then the row trains on its target only)."""
    messages, tools, variables = row["messages"], row.get("tools"), special_tokens(tokenizer)
    eos_text = tokenizer.eos_token
    ids, spans, consumed = [], [], ""
    for i, m in enumerate(messages):
        if m["role"] != "assistant" or m.get("tool_calls"):
            continue
        prefix = render_chat(chat_template(tokenizer), messages[:i], tools, True, variables)
        if not prefix.startswith(consumed):
            return None
        ids += tokenizer.encode(prefix[len(consumed):])
        turn = tokenizer.encode(m["content"]) + [eos_id]
        spans.append((len(ids), len(ids) + len(turn)))
        ids += turn
        consumed = prefix + m["content"] + eos_text
    prompt = render_prompt(row, tokenizer)
    if not prompt.startswith(consumed):
        return None
    return ids + tokenizer.encode(prompt[len(consumed):]), spans


def sampled_ids(row: dict[str, Any], vocab: int) -> list[int] | None:
    """A served model's sampled target ids (``target_ids``, checked against ``target_logprobs`` and the
    vocabulary), or None for a row without them (its target is tokenized)."""
    ids = row.get("target_ids")
    if ids is None:
        if row.get("target_logprobs") is not None:
            raise data_error(f"{row.get('_where', row['id'])}: target_logprobs needs target_ids beside it.")
        return None
    logprobs = row.get("target_logprobs")
    if logprobs is not None and len(logprobs) != len(ids):
        raise data_error(f"{row.get('_where', row['id'])}: target_ids has {len(ids)} tokens, target_logprobs "
                         f"{len(logprobs)}; a server's sample gives one log-prob per token.")
    bad = next((t for t in ids if t >= vocab), None)
    if bad is not None:
        raise data_error(f"{row.get('_where', row['id'])}: target_ids holds {bad}, outside the tokenizer's "
                         f"{vocab} tokens: the rows were sampled by another model than this run trains.")
    return list(ids) or None


def encode_rows(rows: list[dict[str, Any]], tokenizer: Tokenizer, max_length: int) -> tuple[list[Example], list[Example]]:
    """``(examples, dropped)``: rows longer than ``max_length`` tokens are dropped (listed by id)."""
    if not tokenizer.chat_template:
        from ..errors import TrainerError
        raise TrainerError("TOKENIZER_MISSING",
                           "The tokenizer_config.json has no chat_template; training text cannot be rendered.")
    eos_id = tokenizer.token_id(tokenizer.eos_token)
    examples, dropped = [], []
    for i, row in enumerate(rows):
        history = encode_with_history(row, tokenizer, eos_id) if row.get("train_history") and row["role"] == "act" else None
        prompt_ids, spans = history if history else (tokenizer.encode(render_prompt(row, tokenizer)), ())
        # A sample that stopped on a stop string or its token limit never sampled the end token.
        target_ids = sampled_ids(row, len(tokenizer)) or (
            tokenizer.encode(row["target"]) + ([eos_id] if row.get("eos", True) else []))
        ex = Example(i, row, prompt_ids, target_ids, spans)
        if ex.length > max_length:
            dropped.append(ex)
        else:
            examples.append(ex)
    return examples, dropped
