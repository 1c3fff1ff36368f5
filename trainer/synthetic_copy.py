"""A synthetic copy curriculum: short act rows whose only job is to copy identifiers.

Each row's conversation names a few random identifiers of the built-in domains' shapes (emails,
phones, customer/order/account/card/payee/user ids, zips, item ids), some in the user's message and
some in a tool response of an earlier turn; the target is a ``<tool_call>`` whose arguments are some
of them, copied exactly. The key of an argument says which value it takes (``email`` takes the email,
``customer_id`` the customer id), so the model has to look the value up in the context and copy it
token by token: the induction-head task, in the protocol's own format and at ~150 tokens a row
instead of ~1,400.

    python3 -m trainer.synthetic_copy --out rows.jsonl --count 20000 --seed 1
"""
import argparse
import json
import random
import string
from typing import Any

FIRST = ["olivia", "mason", "hana", "noah", "lena", "mateo", "priya", "fatima", "mei", "mia", "ravi", "tomas",
         "daniel", "sofia", "liam", "aisha", "omar", "yuki", "elena", "kofi", "ines", "arjun", "chloe", "diego"]
LAST = ["mitchell", "baker", "campbell", "adams", "kim", "hernandez", "roberts", "nguyen", "chen", "martin",
        "smith", "thomas", "turner", "garcia", "patel", "lopez", "wright", "silva", "okafor", "novak"]
DOMAINS = ["mailbox.test", "example.com", "mail.test", "inbox.test"]


def _digits(rng, n):
    return "".join(rng.choice(string.digits) for _ in range(n))


def identifier(kind: str, rng: random.Random) -> str:
    """A random value of one of the domains' identifier shapes."""
    first, last = rng.choice(FIRST), rng.choice(LAST)
    if kind == "email":
        tail = _digits(rng, rng.choice([0, 0, 2])) if rng.random() < 0.5 else ""
        return f"{first}.{last}{tail}@{rng.choice(DOMAINS)}"
    if kind == "phone":
        return f"+1-555-{_digits(rng, 3)}-{_digits(rng, 4)}"
    if kind == "customer_id":
        return "C" + _digits(rng, 6)
    if kind == "order_id":
        return "#W" + _digits(rng, 7)
    if kind == "account_id":
        return rng.choice(["CHK", "SAV"]) + _digits(rng, 8)
    if kind == "card_id":
        return "CARD" + _digits(rng, 6)
    if kind == "payee_id":
        return "P" + _digits(rng, 6)
    if kind == "transaction_id":
        return "T" + _digits(rng, 9)
    if kind == "user_id":
        return f"{first}_{last}_{_digits(rng, 4)}"
    if kind == "zip":
        return _digits(rng, 5)
    if kind == "item_id":
        return _digits(rng, 10)
    if kind == "payment_method_id":
        return rng.choice(["credit_card_", "paypal_", "gift_card_"]) + _digits(rng, 7)
    raise KeyError(kind)


USER_KINDS = ["email", "phone", "order_id", "zip", "account_id", "card_id"]
TOOL_KINDS = ["customer_id", "user_id", "account_id", "card_id", "payee_id", "transaction_id", "item_id",
              "payment_method_id", "order_id"]
SAY = {"email": "My email is {}.", "phone": "My phone number is {}.", "order_id": "It is about order {}.",
       "zip": "My zip code is {}.", "account_id": "Use account {}.", "card_id": "The card is {}."}


def _args_json(args):
    """Arguments as the reference policy writes them: compact JSON (no spaces)."""
    return json.dumps(args, separators=(",", ":"))


def call_text(name: str, args: dict[str, Any]) -> str:
    return '\n<tool_call>\n{"name": "' + name + '", "arguments": ' + _args_json(args) + "}\n</tool_call>"


def make_row(rng: random.Random, index: int) -> dict[str, Any]:
    """One synthetic act row (dataset-row format, source demonstration)."""
    n_user = rng.randint(1, 3)
    user_kinds = rng.sample(USER_KINDS, n_user)
    values = {k: identifier(k, rng) for k in user_kinds}
    parts = [SAY[k].format(values[k]) for k in user_kinds]
    rng.shuffle(parts)
    messages = [{"role": "system",
                 "content": "You are a support agent. Call tools with the exact identifiers of the conversation."},
                {"role": "user", "content": "Hi. " + " ".join(parts)}]
    pool = dict(values)
    if rng.random() < 0.6:
        # An earlier turn: a lookup by one of the user's values, whose response holds new identifiers.
        key = rng.choice(user_kinds)
        tool_kinds = rng.sample([k for k in TOOL_KINDS if k not in pool], rng.randint(1, 3))
        response = {k: identifier(k, rng) for k in tool_kinds}
        if rng.random() < 0.5:
            response["name"] = f"{rng.choice(FIRST).title()} {rng.choice(LAST).title()}"
        messages.append({"role": "assistant", "content": call_text(f"find_by_{key}", {key: values[key]})})
        messages.append({"role": "tool", "name": f"find_by_{key}", "content": _args_json(response)})
        pool.update({k: v for k, v in response.items() if k in tool_kinds})
        wanted = rng.sample(tool_kinds, rng.randint(1, min(2, len(tool_kinds))))
        if rng.random() < 0.3:
            wanted.append(rng.choice(user_kinds))
    else:
        wanted = rng.sample(user_kinds, rng.randint(1, len(user_kinds)))
    args = {k: pool[k] for k in wanted}
    name = "lookup_" + "_and_".join(wanted) if len(wanted) < 3 else "lookup"
    return {"v": 1, "id": f"synthetic-copy-{index}", "task": "synthetic-copy", "episode": f"s{index}", "role": "act",
            "messages": messages, "target": call_text(name, args), "weight": 1, "source": "demonstration"}


def write_rows(path: str, count: int, seed: int) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(count):
            f.write(json.dumps(make_row(rng, i), ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--count", type=int, default=20000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    write_rows(a.out, a.count, a.seed)


if __name__ == "__main__":
    main()
