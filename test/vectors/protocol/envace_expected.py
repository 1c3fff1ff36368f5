"""Writes the `envace` expectation of every case of act.json and rehearsal.json.

What EnvACE (commit 173e941) makes of each input, computed by CPython's own `json.loads`,
`str.strip()` and `re` (standard library only), following the steps of
agent_system/environments/env_package/checklist/tool_parser.py (`parse_tool_calls`, lines 48-118)
and agent_system/agent/agents/checklist/tool_simulator_agent.py (`_parse_sim_response`, lines
93-164). The studio's `envace` parse dialect must give the same (test/unit/protocol-vectors.test.ts).

Run from the repository root:  /usr/bin/python3 test/vectors/protocol/envace_expected.py
With --check it writes nothing and exits 1 when a file's envace expectations differ from CPython's.
"""
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# The studio keeps values at most this deep (src/core/base/json.ts MAX_JSON_DEPTH); EnvACE takes
# up to Python's recursion limit (about 990 levels). Deeper values get the studio's code, marked.
STUDIO_MAX_DEPTH = 256
NON_FINITE_KEY = "$numberDouble"


def depth(v):
    if isinstance(v, list):
        return 1 + max((depth(x) for x in v), default=0)
    if isinstance(v, dict):
        return 1 + max((depth(x) for x in v.values()), default=0)
    return 0


def tokenizer_guard(s):
    """mcp_tool.py `_sanitize_text_for_tokenizer` (lines 273-312): NUL, lone surrogates and
    noncharacters become U+FFFD. envs.py (line 232) applies it to the caller's whole text before
    parse_tool_calls; tool_parser.py (line 103) again to the json.dumps text of the arguments, where a
    NUL is already escaped."""
    return "".join(
        "\ufffd"
        if (0xD800 <= ord(c) <= 0xDFFF or ord(c) == 0 or 0xFDD0 <= ord(c) <= 0xFDEF or (ord(c) & 0xFFFE) == 0xFFFE)
        else c
        for c in s
    )


def passed_on(v):
    """json.dumps(v, ensure_ascii=False), the guard, and json.loads again; floats a trace cannot
    hold are written as the studio stores them ({"$numberDouble": "NaN"})."""
    v = json.loads(tokenizer_guard(json.dumps(v, ensure_ascii=False)))
    return encoded(v)


def encoded(v):
    if isinstance(v, float) and not math.isfinite(v):
        return {NON_FINITE_KEY: "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}
    if isinstance(v, list):
        return [encoded(x) for x in v]
    if isinstance(v, dict):
        return {k: encoded(x) for k, x in v.items()}
    return v


TOOL_CALL = re.compile(re.escape("\n<tool_call>\n") + "(.*?)" + re.escape("\n</tool_call>"), re.DOTALL)
RESULT = re.compile(re.escape("\n<execution_result>\n") + "(.*?)" + re.escape("\n</execution_result>"), re.DOTALL)
THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)


def act(text):
    """tool_parser.py `parse_tool_calls` on the text envs.py hands it (lines 230-233), and envs.py's
    reading of the outcome: no call and no error is a turn judged as an answer (lines 276-279). An
    error carries `feedback`, the tool message envs.py writes (`json.dumps(payload,
    ensure_ascii=True)`, line 265), but for NON_SERIALIZABLE_ARGUMENTS, whose detail is Python's own
    exception text."""
    text = tokenizer_guard(text)
    if "<tool_call>" not in text:
        return {"kind": "final"}
    blocks = list(TOOL_CALL.finditer(text))

    def error(code, payload):
        return {"kind": "error", "code": code, "feedback": json.dumps(payload, ensure_ascii=True)}

    if not blocks:
        return error(
            "NO_TOOL_CALL_FOUND",
            {
                "error_tool_call": "No tool call found. Please check your output format. "
                'The correct (<tool_call>\n{"name": ..., "arguments": { ... }}\n</tool_call>).'
            },
        )
    calls = []
    for block in blocks:
        stripped = block.group(1).strip()
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            return error(
                "JSON_DECODE_ERROR", {"error_tool_call": f"One tool call can not be parsed as JSON: {stripped}"}
            )
        for item in value if isinstance(value, list) else [value]:
            fields = item if isinstance(item, dict) else {}
            arguments = fields.get("parameters")
            if arguments is None:
                arguments = fields.get("arguments")
            if arguments is None:
                return error(
                    "NO_ARGUMENTS",
                    {"error_tool_call": "No argumets found in one tool call. Use empty dict if no argument."},
                )
            if depth(arguments) > STUDIO_MAX_DEPTH:
                return {"kind": "error", "code": "NON_SERIALIZABLE_ARGUMENTS", "studioBound": "EnvACE takes it"}
            json.dumps(arguments, ensure_ascii=False)  # raises only past the recursion limit
            name = fields.get("name")
            if not isinstance(name, str) or not name.strip():
                return error(
                    "INVALID_TOOL_NAME",
                    {
                        "error_tool_call": "INVALID_TOOL_NAME in one tool call",
                        "raw_name": str(name),
                        "arguments": str(arguments),
                    },
                )
            calls.append({"name": name.strip(), "arguments": passed_on(arguments)})
    if not calls:
        return {"kind": "final"}
    # The preamble is the studio's: the text before the first block, stripped the same way.
    return {"kind": "calls", "preamble": text[: blocks[0].start()].strip(), "calls": calls}


def rehearsal(text):
    thinks = [m.group(1).strip() for m in THINK.finditer(text)]
    rest = THINK.sub("", text)
    if not rest.strip():
        return {"ok": False, "code": "EMPTY_SIMULATOR_OUTPUT"}
    if "<execution_result>" not in rest:
        return {"ok": False, "code": "NO_EXECUTION_RESULT_TAG_FOUND"}
    blocks = RESULT.findall(rest)
    if not blocks:
        return {"ok": False, "code": "EXECUTION_RESULT_TAG_MALFORMED"}
    try:
        value = json.loads(blocks[0].strip())
    except json.JSONDecodeError:
        return {"ok": False, "code": "SIMULATOR_JSON_DECODE_ERROR"}
    if not (isinstance(value, list) or (isinstance(value, dict) and value)):
        return {"ok": False, "code": "INVALID_EXECUTION_RESULT_TYPE"}
    if depth(value) > STUDIO_MAX_DEPTH:
        return {"ok": False, "code": "NON_SERIALIZABLE_EXECUTION_RESULT", "studioBound": "EnvACE takes it"}
    json.dumps(value, ensure_ascii=False)
    out = {"ok": True, "value": passed_on(value)}
    if thinks:  # the think text is the studio's; EnvACE drops it
        out["think"] = "\n\n".join(thinks)
    return out


def main(check):
    stale = []
    for name, expect in (("act", act), ("rehearsal", rehearsal)):
        path = os.path.join(HERE, name + ".json")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        vectors = json.loads(text)
        for case in vectors["cases"]:
            case["envace"] = expect(case["input"])
        differ = sum(1 for c in vectors["cases"] if c["envace"] != c["expected"])
        print(f"{name}.json: {len(vectors['cases'])} cases, {differ} with another envace expectation")
        fresh = json.dumps(vectors, indent=2, ensure_ascii=True) + "\n"
        if check:
            if fresh != text:
                stale.append(name + ".json")
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(fresh)
    if stale:
        print("envace expectations differ from CPython's in " + ", ".join(stale))
        sys.exit(1)


if __name__ == "__main__":
    main("--check" in sys.argv[1:])
