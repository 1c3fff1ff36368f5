"""The copy probe: does the policy copy identifiers into its tool calls?

On held-out act rows (tasks the training rows never saw) whose correct call has arguments that appear
verbatim in the conversation (an email or phone from the user, a customer or order id from an earlier
tool response), the probe greedy-decodes the act turn and checks, argument by argument, whether the
produced call carries that exact value under that key. It also measures, teacher-forced, the top-1
accuracy of the target tokens that spell those values (cheap, and it moves before exact matches do).

Figures (``probe`` event, ``docs/trainer-events.md``):
- ``copy_exact``: copyable arguments reproduced exactly, over all copyable arguments of the rows;
  ``copy_exact_user`` / ``copy_exact_tool`` split them by where the value first appears.
- ``call_exact``: produced calls equal to the correct call (name and all arguments);
- ``name_match``, ``parse_valid``: the tool name, and whether a ``<tool_call>`` JSON block parsed;
- ``copy_token_acc``: teacher-forced top-1 accuracy over the tokens of copyable values;
  ``digit_token_acc`` over those tokens that are digits; ``copy_value_tf``: values whose tokens are
  all right, teacher-forced (comparable across tokenizers, unlike the per-token figures).
"""
from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any

import torch

from .data.encode import render_prompt

if TYPE_CHECKING:
    from .model.llama import LlamaForCausalLM
    from .tokenizer.tokenizer import Tokenizer

_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def parse_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` of the first ``<tool_call>`` block of ``text``, or None."""
    m = _CALL_RE.search(text)
    if not m:
        # An unfinished block (generation cut off) still counts as not parsed.
        return None
    try:
        obj = json.loads(m.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
        return None
    args = obj.get("arguments")
    return obj["name"], args if isinstance(args, dict) else {}


def _flat(args, prefix=""):
    """``{dotted.key: scalar}`` of nested arguments (lists indexed)."""
    out = {}
    items = args.items() if isinstance(args, dict) else enumerate(args)
    for k, v in items:
        key = f"{prefix}{k}"
        if isinstance(v, (dict, list)):
            out.update(_flat(v, key + "."))
        else:
            out[key] = v
    return out


def copy_targets(row: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``[(key, value_text, where)]``: the correct call's scalar arguments whose text appears in the
    conversation (``where`` is ``user`` or ``tool``, the earliest message holding it). Values shorter than
    three characters are left out (a ``1`` or ``no`` appears anywhere by chance)."""
    call = parse_call(row["target"])
    if call is None:
        return []
    out = []
    for key, value in _flat(call[1]).items():
        if isinstance(value, bool) or value is None:
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        if len(text) < 3:
            continue
        for m in row["messages"]:
            if m["role"] in ("user", "tool") and isinstance(m.get("content"), str) and text in m["content"]:
                out.append((key, text, m["role"]))
                break
    return out


def probe_rows(rows: list[dict[str, Any]], limit: int | None = None) -> list[dict[str, Any]]:
    """The act rows the probe uses: a tool call as target and at least one copyable argument."""
    chosen = [r for r in rows if r["role"] == "act" and copy_targets(r)]
    return chosen[:limit] if limit else chosen


@torch.no_grad()
def greedy_cached(model: LlamaForCausalLM, ids: list[int], max_new_tokens: int, stop: set[int]) -> list[int]:
    """Greedy continuation of ``ids`` with the exported forward and its KV cache (batch 1)."""
    x = torch.tensor([ids])
    out = model(x, torch.ones_like(x), torch.arange(len(ids))[None])
    logits, past = out[0], list(out[1:])
    new = []
    for _ in range(max_new_tokens):
        nxt = int(logits[0, -1].argmax())
        new.append(nxt)
        if nxt in stop:
            break
        n = len(ids) + len(new)
        out = model(torch.tensor([[nxt]]), torch.ones((1, n), dtype=torch.long), torch.tensor([[n - 1]]), *past)
        logits, past = out[0], list(out[1:])
    return new


def _token_spans(tokenizer, ids):
    """Byte offsets ``[(start, end)]`` of each token of ``ids`` in their decoded UTF-8 text."""
    spans, pos = [], 0
    for i in ids:
        n = len(tokenizer.decode([i]).encode("utf-8"))
        spans.append((pos, pos + n))
        pos += n
    return spans


@torch.no_grad()
def teacher_forced(model: LlamaForCausalLM, tokenizer: Tokenizer, row: dict[str, Any], prompt_ids: list[int],
                   values: list[str]) -> tuple[int, int, int, int, int, int]:
    """``(correct, total, digit_correct, digit_total, values_all_correct, values)``: top-1 over the target
    tokens inside ``values``, and how many values have every one of their tokens right (a measure that
    does not depend on how the tokenizer cuts a value)."""
    target_ids = tokenizer.encode(row["target"])
    target = row["target"].encode("utf-8")
    spans = _token_spans(tokenizer, target_ids)
    inside, groups = set(), []
    for value in values:
        needle = value.encode("utf-8")
        start = target.find(needle)
        if start < 0:
            continue
        end = start + len(needle)
        group = [k for k, (a, b) in enumerate(spans) if a < end and b > start]
        inside.update(group)
        groups.append(group)
    if not inside:
        return 0, 0, 0, 0, 0, 0
    seq = prompt_ids + target_ids
    hidden = model.hidden_states(torch.tensor([seq[:-1]]))[0]
    offset = len(prompt_ids) - 1
    rows = sorted(inside)
    logits = model.lm_head(hidden[[offset + k for k in rows]])
    pred = logits.argmax(-1).tolist()
    correct = digits_ok = digits = 0
    right = set()
    for k, p in zip(rows, pred, strict=True):  # one prediction per row
        ok = p == target_ids[k]
        if ok:
            right.add(k)
        correct += ok
        if tokenizer.decode([target_ids[k]]).strip().isdigit():
            digits += 1
            digits_ok += ok
    whole = sum(1 for g in groups if all(k in right for k in g))
    return correct, len(rows), digits_ok, digits, whole, len(groups)


def run_probe(model: LlamaForCausalLM, tokenizer: Tokenizer, rows: list[dict[str, Any]], stop: set[int],
              max_new_tokens: int = 96, greedy_rows: int | None = None) -> dict[str, Any]:
    """The probe's figures on ``rows`` (see the module doc); ``greedy_rows`` caps the decoded rows."""
    t0 = time.monotonic()
    was_training = model.training
    model.eval()
    tally = {"args": 0, "exact": 0, "user": 0, "user_ok": 0, "tool": 0, "tool_ok": 0, "calls": 0, "call_exact": 0,
             "name": 0, "parsed": 0, "tok": 0, "tok_ok": 0, "dig": 0, "dig_ok": 0, "val": 0, "val_ok": 0}
    samples: list[dict[str, Any]] = []
    for i, row in enumerate(rows):
        targets = copy_targets(row)
        prompt_ids = tokenizer.encode(render_prompt(row, tokenizer))
        c, n, dc, dn, vc, vn = teacher_forced(model, tokenizer, row, prompt_ids, [v for _, v, _ in targets])
        tally["tok_ok"] += c
        tally["tok"] += n
        tally["dig_ok"] += dc
        tally["dig"] += dn
        tally["val_ok"] += vc
        tally["val"] += vn
        if greedy_rows is not None and i >= greedy_rows:
            continue
        text = tokenizer.decode(greedy_cached(model, prompt_ids, max_new_tokens, stop))
        got = parse_call(text)
        want = parse_call(row["target"])
        assert want is not None  # probe_rows keeps only rows whose target is a call
        tally["calls"] += 1
        if got is not None:
            tally["parsed"] += 1
            tally["name"] += got[0] == want[0]
            tally["call_exact"] += got == want
        flat = _flat(got[1]) if got else {}
        for key, value, where in targets:
            v = flat.get(key)
            ok = v is not None and (v if isinstance(v, str) else json.dumps(v)) == value
            tally["args"] += 1
            tally["exact"] += ok
            tally[where] += 1
            tally[where + "_ok"] += ok
        if len(samples) < 3:
            samples.append({"id": row["id"], "want": row["target"].strip()[:200], "got": text.strip()[:200]})
    model.train(was_training)

    def ratio(a: str, b: str) -> float | None:
        return (tally[a] / tally[b]) if tally[b] else None

    return {"rows": len(rows), "decoded": tally["calls"], "copy_args": tally["args"],
            "copy_exact": ratio("exact", "args"), "copy_exact_user": ratio("user_ok", "user"),
            "copy_exact_tool": ratio("tool_ok", "tool"), "call_exact": ratio("call_exact", "calls"),
            "name_match": ratio("name", "calls"), "parse_valid": ratio("parsed", "calls"),
            "copy_token_acc": ratio("tok_ok", "tok"), "digit_token_acc": ratio("dig_ok", "dig"),
            "copy_value_tf": ratio("val_ok", "val"),
            "seconds": round(time.monotonic() - t0, 3), "samples": samples}
