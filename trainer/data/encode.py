"""From a row to token ids: the training text is
``chat_template(messages, tools, add_generation_prompt=True) + target + <end token>``, and the loss
covers the target and the end token only.

The prompt and the target are tokenized separately: the policy host tokenizes the rendered prompt on
its own and generates the target after it, so this is the token sequence the policy actually sees.
(When the policy sampled a non-canonical tokenization of its text, training uses the canonical one.)
"""
from ..chat_template import render_chat


class Example:
    """A tokenized row."""

    __slots__ = ("index", "id", "role", "source", "weight", "reward", "group", "prompt_ids", "target_ids",
                 "advantage", "where")

    def __init__(self, index, row, prompt_ids, target_ids):
        self.index = index
        self.id = row["id"]
        self.role = row["role"]
        self.source = row["source"]
        self.weight = float(row.get("weight", 1.0))
        self.reward = row.get("reward")
        self.group = row.get("group")
        self.prompt_ids = prompt_ids
        self.target_ids = target_ids
        self.advantage = 0.0
        self.where = row.get("_where", "")

    @property
    def length(self):
        return len(self.prompt_ids) + len(self.target_ids)


def special_tokens(tokenizer):
    """The token variables transformers.js gives a chat template."""
    return {name: tokenizer.token_text(name) for name in ("bos_token", "eos_token", "pad_token", "unk_token")}


def render_prompt(row, tokenizer):
    return render_chat(tokenizer.chat_template, row["messages"], row.get("tools"), True, special_tokens(tokenizer))


def render_row(row, tokenizer):
    """``(prompt_text, target_text)``; target_text ends with the end token."""
    return render_prompt(row, tokenizer), row["target"] + tokenizer.eos_token


def encode_rows(rows, tokenizer, max_length):
    """``(examples, dropped)``: rows longer than ``max_length`` tokens are dropped (listed by id)."""
    if not tokenizer.chat_template:
        from ..errors import TrainerError
        raise TrainerError("TOKENIZER_MISSING", "The tokenizer_config.json has no chat_template; training text cannot be rendered.")
    eos_id = tokenizer.token_id(tokenizer.eos_token)
    examples, dropped = [], []
    for i, row in enumerate(rows):
        prompt_ids = tokenizer.encode(render_prompt(row, tokenizer))
        target_ids = tokenizer.encode(row["target"]) + [eos_id]
        ex = Example(i, row, prompt_ids, target_ids)
        if ex.length > max_length:
            dropped.append(ex)
        else:
            examples.append(ex)
    return examples, dropped
