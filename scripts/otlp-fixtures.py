"""Regenerates test/fixtures/otlp/: GenAI spans of real instrumentation, as OTLP JSON.

Each producer runs a tiny agent against a stand-in OpenAI-compatible endpoint on localhost that
answers with scripted tool calls: the agent asks for the weather in Paris and a table at Chez Lu;
get_weather answers, book_table fails ("fully booked"); then the model answers. The spans (and log
records, where the producer writes events as logs) are encoded by the OTLP exporter's own encoder
(opentelemetry-exporter-otlp-proto-common) and written as OTLP JSON (`.json`, one
ExportTraceServiceRequest per line; `.logs.json` beside it for logs).

Run with the virtual environments test/fixtures/otlp/README.md names (the older event form needs an
older SDK, in an environment of its own, named by OTLP_EVENTS_PYTHON; OpenLLMetry instruments the
same client as openai-v2, so it has one too, OTLP_OPENLLMETRY_PYTHON):
    OTLP_EVENTS_PYTHON=... OTLP_OPENLLMETRY_PYTHON=... python scripts/otlp-fixtures.py  # every producer
    python scripts/otlp-fixtures.py <producer>  # one of PRODUCERS, in this interpreter, its env set by hand
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "test" / "fixtures" / "otlp"
USER = "What is the weather in Paris, and can you book a table for 4 at Chez Lu?"
ANSWER = "It is 18 °C and cloudy in Paris. Chez Lu is fully booked, so no table was booked."

# Environment each producer runs under (the instrumentation reads it when it starts).
PRODUCERS: dict[str, dict[str, str]] = {
    "openai-v2-latest": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
    },
    "openai-v2-events": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"},
    "pydantic-ai": {},
    "openai-agents": {},
    "openllmetry": {"TRACELOOP_TRACE_CONTENT": "true"},
}


class StandIn(BaseHTTPRequestHandler):
    """Chat completions: first the two tool calls, then (once tool answers are in) the answer."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        answered = any(m.get("role") == "tool" for m in body["messages"])
        if answered:
            message = {"role": "assistant", "content": ANSWER}
            finish = "stop"
        else:
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_W3ath3rPar1s",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "call_B00kChezLu",
                        "type": "function",
                        "function": {
                            "name": "book_table",
                            "arguments": '{"restaurant": "Chez Lu", "people": 4}',
                        },
                    },
                ],
            }
            finish = "tool_calls"
        reply = {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": 1765000000,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 20, "total_tokens": 60},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def get_weather(city: str) -> dict:
    return {"city": city, "temp_c": 18, "sky": "cloudy"}


def book_table(restaurant: str, people: int) -> dict:
    raise RuntimeError(f"{restaurant} is fully booked for {people}")


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "book_table",
            "description": "Book a restaurant table.",
            "parameters": {
                "type": "object",
                "properties": {"restaurant": {"type": "string"}, "people": {"type": "integer"}},
                "required": ["restaurant", "people"],
            },
        },
    },
]


def hex_ids(value: object) -> object:
    """OTLP JSON writes trace and span ids as hex; protobuf's JSON mapping writes bytes as base64."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str) else hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [hex_ids(v) for v in value]
    return value


def write(name: str, request: object) -> None:
    from google.protobuf.json_format import MessageToDict

    doc = hex_ids(MessageToDict(request, use_integers_for_enums=True))
    (OUT / f"{name}.json").write_text(json.dumps(doc, ensure_ascii=False) + "\n")


def own_loop(client: object, handler: object | None) -> None:
    """A hand-written agent loop over the instrumented OpenAI client, in one invoke_agent span."""
    from opentelemetry import trace

    tracer = trace.get_tracer("fixture-agent")
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "concierge"}
    with tracer.start_as_current_span("invoke_agent concierge", attributes=attributes):
        agent_turns(client, handler)


def agent_turns(client: object, handler: object | None) -> None:
    """The loop: chat, run the tools it asks for, until it answers."""
    messages: list[dict] = [
        {"role": "system", "content": "You are a concierge."},
        {"role": "user", "content": USER},
    ]
    for _ in range(3):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            fn = {"get_weather": get_weather, "book_table": book_table}[call.function.name]
            try:
                if handler is None:
                    content = json.dumps(fn(**args))
                else:
                    with handler.tool(call.function.name) as inv:
                        inv.tool_call_id = call.id
                        inv.arguments = args
                        result = fn(**args)
                        inv.tool_result = result
                    content = json.dumps(result)
            except RuntimeError as err:
                content = json.dumps({"error": str(err)})
            messages.append({"role": "tool", "tool_call_id": call.id, "content": content})


def run(producer: str, base_url: str) -> None:
    from opentelemetry import trace
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs import export as log_export
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    resource = Resource.create({"service.name": f"fixture-{producer}"})
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    trace.set_tracer_provider(tracer_provider)
    # The SDK renamed its in-memory log exporter (1.39); the events producer runs an older SDK.
    logs = getattr(log_export, "InMemoryLogRecordExporter", None) or log_export.InMemoryLogExporter
    logs = logs()
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(log_export.SimpleLogRecordProcessor(logs))
    set_logger_provider(logger_provider)
    try:  # SDKs before 1.39 emit GenAI events through the events API, over the logger provider
        from opentelemetry._events import set_event_logger_provider
        from opentelemetry.sdk._events import EventLoggerProvider

        set_event_logger_provider(EventLoggerProvider(logger_provider))
    except ImportError:
        pass

    if producer.startswith("openai-v2"):
        import openai
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        client = openai.OpenAI(base_url=base_url, api_key="stand-in")
        handler = None
        if producer == "openai-v2-latest":
            from opentelemetry.util.genai.handler import TelemetryHandler

            handler = TelemetryHandler(tracer_provider=tracer_provider, logger_provider=logger_provider)
        own_loop(client, handler)
    elif producer == "openllmetry":
        import openai
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider)
        own_loop(openai.OpenAI(base_url=base_url, api_key="stand-in"), None)
    elif producer == "openai-agents":
        run_openai_agents(tracer_provider, base_url)
    else:
        from pydantic_ai import Agent, ModelRetry
        from pydantic_ai.models.instrumented import InstrumentationSettings
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=base_url, api_key="stand-in"))
        agent = Agent(
            model,
            system_prompt="You are a concierge.",
            retries=1,
        )
        agent.instrument = InstrumentationSettings(tracer_provider=tracer_provider, include_content=True)

        @agent.tool_plain(name="get_weather")
        def get_weather_tool(city: str) -> dict:
            """Current weather in a city."""
            return get_weather(city)

        @agent.tool_plain(name="book_table")
        def book_table_tool(restaurant: str, people: int) -> dict:
            """Book a restaurant table."""
            try:
                return book_table(restaurant, people)
            except RuntimeError as err:
                raise ModelRetry(str(err)) from err

        agent.run_sync(USER)

    tracer_provider.force_flush()
    logger_provider.force_flush()
    write(producer, encode_spans(spans.get_finished_spans()))
    records = logs.get_finished_logs()
    if records:
        write(f"{producer}.logs", encode_logs(records))


def run_openai_agents(tracer_provider: object, base_url: str) -> None:
    """The OpenAI Agents SDK, traced by OpenInference's instrumentation (its own processor only)."""
    import openai
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    # Exclusive: the SDK's own processor, which sends traces to OpenAI, is replaced.
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tracer_provider, exclusive_processor=True)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="stand-in")
    model = OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)

    @function_tool(name_override="get_weather")
    def weather_tool(city: str) -> dict:
        """Current weather in a city."""
        return get_weather(city)

    @function_tool(name_override="book_table")
    def booking_tool(restaurant: str, people: int) -> dict:
        """Book a restaurant table."""
        return book_table(restaurant, people)

    agent = Agent(
        name="concierge",
        instructions="You are a concierge.",
        model=model,
        tools=[weather_tool, booking_tool],
    )
    Runner.run_sync(agent, USER)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    if len(sys.argv) > 1:
        run(sys.argv[1], base_url)
        return
    for producer, env in PRODUCERS.items():
        python = sys.executable
        if producer == "openai-v2-events":
            python = os.environ.get("OTLP_EVENTS_PYTHON", python)
        if producer == "openllmetry":
            python = os.environ.get("OTLP_OPENLLMETRY_PYTHON", python)
        subprocess.run([python, __file__, producer], env={**os.environ, **env}, check=True)


if __name__ == "__main__":
    main()
