"""The chat template (Qwen2.5 style, with tools and ``<tool_call>`` blocks) and a renderer that
produces the same bytes as transformers.js (@huggingface/jinja).

The renderer is set up the way Hugging Face transformers sets up jinja2 (sandboxed, trim_blocks,
lstrip_blocks, loopcontrols, ``tojson`` without ASCII escaping), with one deliberate difference:
``tojson`` writes numbers as JavaScript does (see :mod:`trainer.jsonfmt`). The template itself
avoids what the two engines print differently (booleans, None, dicts printed without ``tojson``).
Training renders with the template of the model being trained, so any model's own template works.
"""
import functools
from typing import Any

import jinja2
import jinja2.ext
import jinja2.sandbox

from .jsonfmt import js_json

# Assistant turns without structured tool_calls are written as '\n' + content, always: the policy's
# raw text is kept as content, so history renders byte for byte as it was generated after
# '<|im_start|>assistant\n'. Structured tool_calls (from other sources) render as Qwen2.5 does.
CHAT_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
    {%- for tool in tools %}
        {{- '\n' }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- else %}
    {{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
    {%- if message.role == 'system' and loop.first %}
    {%- elif message.role == 'user' or message.role == 'system' %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
    {%- elif message.role == 'assistant' and not message.tool_calls %}
        {{- '<|im_start|>assistant\n' + message.content + '<|im_end|>\n' }}
    {%- elif message.role == 'assistant' %}
        {{- '<|im_start|>assistant' }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' + tool_call.name + '", "arguments": ' }}
            {%- if tool_call.arguments is string %}
                {{- tool_call.arguments }}
            {%- else %}
                {{- tool_call.arguments | tojson }}
            {%- endif %}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == 'tool' %}
        {%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' + message.content + '\n</tool_response>' }}
        {%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
"""  # noqa: E501 - Qwen2.5's template lines, kept verbatim


# One tool's signature up to each argument's optional mark, shared by the compact and minimal
# templates: the function and its parameters, `- name(`, and each argument's name (`?` if optional).
_TOOL_SIGNATURE_START = r"""        {%- set fn = tool.function if tool.function is defined else tool %}
        {%- set params = fn.parameters if fn.parameters is defined and fn.parameters is mapping else {} %}
        {%- set props = params.properties if params.properties is defined and params.properties is mapping else {} %}
        {%- set required = params.required if params.required is defined else [] %}
        {{- '\n- ' + fn.name + '(' }}
        {%- for name, prop in props.items() %}
            {{- name }}
            {%- if name not in required %}{{- '?' }}{%- endif %}
"""

# The same conversation format with a compact tools section: one line per tool, its arguments with
# their types (`?` marks optional ones, enums listed), then its description. Small policies read a
# third of the tokens the JSON schemas take; everything after the system turn is identical.
COMPACT_TOOLS_TEMPLATE = CHAT_TEMPLATE.replace(
    r"""    {{- '\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>' }}
    {%- for tool in tools %}
        {{- '\n' }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}""",  # noqa: E501 - the template lines replaced, verbatim
    r"""    {{- '\n\n# Tools\n' }}
    {%- for tool in tools %}
""" + _TOOL_SIGNATURE_START + r"""            {%- if prop is mapping and prop.type is defined and prop.type is string %}{{- ': ' + prop.type }}{%- endif %}
            {%- if prop is mapping and prop.enum is defined %}{{- ' in ' + (prop.enum | tojson) }}{%- endif %}
            {%- if not loop.last %}{{- ', ' }}{%- endif %}
        {%- endfor %}
        {{- ')' }}
        {%- if fn.description is defined and fn.description %}{{- ': ' + fn.description }}{%- endif %}
    {%- endfor %}
    {{- '\n\nCall a tool with:\n<tool_call>\n{"name": <tool-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n' }}""")  # noqa: E501 - template text; wrapping it would change it
assert COMPACT_TOOLS_TEMPLATE != CHAT_TEMPLATE

# The smallest prompt for a small policy: the system turn is only the tool list, one line per tool
# with its argument names (`?` marks optional ones), no types, descriptions or system message (a task's
# policy text is the same for every task of a domain: the tool list already tells the domain). Act rows
# of the built-in domains drop from ~1,400 to ~700 tokens; everything after the system turn is identical.
MINIMAL_TEMPLATE = r"""{%- if tools %}
    {{- '<|im_start|>system\n# Tools' }}
    {%- for tool in tools %}
""" + _TOOL_SIGNATURE_START + r"""            {%- if not loop.last %}{{- ', ' }}{%- endif %}
        {%- endfor %}
        {{- ')' }}
    {%- endfor %}
    {{- '<|im_end|>\n' }}
{%- elif messages[0].role == 'system' %}
    {{- '<|im_start|>system\n' + messages[0].content + '<|im_end|>\n' }}
{%- else %}
    {{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}
{%- endif %}
""" + CHAT_TEMPLATE[CHAT_TEMPLATE.index("{%- for message in messages %}"):]

#: The trainer's templates, by the name `tokenizer.chat_template` takes.
TEMPLATES = {"full": CHAT_TEMPLATE, "compact": COMPACT_TOOLS_TEMPLATE, "minimal": MINIMAL_TEMPLATE}


def _tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    if ensure_ascii:
        raise jinja2.exceptions.TemplateError("tojson(ensure_ascii=True) is not supported by the trainer")
    return js_json(value, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise(message):
    raise jinja2.exceptions.TemplateError(message)


@functools.lru_cache(maxsize=8)
def compile_template(source: str) -> jinja2.Template:
    """A compiled template, set up like transformers' ``_compile_jinja_template``."""
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env.from_string(source)


def render_chat(template_source: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None,
                add_generation_prompt: bool = True, special_tokens: dict[str, Any] | None = None) -> str:
    """The text ``apply_chat_template(messages, tools, add_generation_prompt, tokenize=False)`` gives."""
    variables = dict(special_tokens or {})
    return compile_template(template_source).render(
        messages=messages, tools=tools, add_generation_prompt=add_generation_prompt, **variables)
