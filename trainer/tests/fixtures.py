"""Test data: small, deterministic dataset rows in the documented format (docs/dataset-format.md),
shaped like what the studio exports: tool-calling act turns and rehearsals of a weather tool."""
import json
import os
import random

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Current weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
CITIES = ["Paris", "Lisbon", "Oslo", "Tokyo", "Lima", "Cairo", "Quito", "Seoul", "Rome", "Delhi"]
AGENT_SYSTEM = "You are a helpful agent. Use the tools."
SIMULATOR_SYSTEM = "You are a precise tool simulator."


def call_text(city):
    return f'\n<tool_call>\n{{"name": "get_weather", "arguments": {{"city":"{city}"}}}}\n</tool_call>'


def result_text(city, temp):
    return f'{{"city":"{city}","temperature":{temp:d}}}'


def episode_rows(task, episode, city, temp, source="demonstration", reward=None, group=None, weight=1.0):
    """The three rows of one episode: act (call), rehearse (tool result), act (final answer)."""
    ask = {"role": "user", "content": f"What is the weather in {city}?"}
    common = {"task": task, "episode": episode, "reward": reward, "group": group, "weight": weight}
    act1 = dict(common, id=f"{task}/{episode}/0/act", role="act", source=source, tools=TOOLS,
                messages=[{"role": "system", "content": AGENT_SYSTEM}, ask], target=call_text(city))
    rehearse = dict(common, id=f"{task}/{episode}/0/rehearse", role="rehearse", source=source, call="0",
                    messages=[{"role": "system", "content": SIMULATOR_SYSTEM},
                              {"role": "user",
                               "content": f"Call to simulate:\nTool: get_weather\nArguments: {{\"city\":\"{city}\"}}"}],
                    target=f"\n<execution_result>\n{result_text(city, temp)}\n</execution_result>")
    act2 = dict(common, id=f"{task}/{episode}/1/act", role="act", source=source, tools=TOOLS,
                messages=[{"role": "system", "content": AGENT_SYSTEM}, ask,
                          {"role": "assistant", "content": call_text(city)},
                          {"role": "tool", "name": "get_weather", "content": result_text(city, temp)}],
                target=f"It is {temp} C in {city}.")
    return [act1, rehearse, act2]


def demonstration_rows(count=10, seed=0):
    rnd = random.Random(seed)
    rows = []
    for i in range(count):
        city = CITIES[i % len(CITIES)]
        rows += episode_rows(f"task{i}", "demo", city, rnd.randint(-5, 35))
    return rows


def write_rows(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def write_config(path, cfg):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)
    return path


def rollout_rows(iteration, tasks=2, episodes=4, seed=0):
    """One iteration's rollout rows: ``episodes`` imagined episodes per task, rewards 0 or 1, the
    group is task x iteration; plus one actual rehearse row (a recorded real response)."""
    rnd = random.Random(seed * 100 + iteration)
    rows = []
    for t in range(tasks):
        city = CITIES[t % len(CITIES)]
        group = f"task{t}/iter{iteration}"
        for e in range(episodes):
            reward = float(rnd.random() < 0.5)
            rows += episode_rows(f"task{t}", f"iter{iteration}-ep{e}", city, rnd.randint(-5, 35), source="rollout",
                                 reward=reward, group=group)
    actual = episode_rows("task0", f"iter{iteration}-shadow", CITIES[0], 21, source="actual", weight=2.0)[1]
    rows.append(actual)
    return rows
