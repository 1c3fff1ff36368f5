// Regenerates test/fixtures/otlp/vercel-ai.json: the Vercel AI SDK's own telemetry of a tiny agent,
// as OTLP JSON. The same scenario as scripts/otlp-fixtures.py: `generateText` with two tools asks a
// stand-in OpenAI-compatible endpoint on localhost (answering chat completions with scripted tool
// calls) for the weather in Paris and a table at Chez Lu; get_weather answers, book_table throws
// ("Chez Lu is fully booked for 4"); then the model answers. The finished spans are encoded by the
// OTLP exporter's own JSON serializer (@opentelemetry/otlp-transformer) and written on one line,
// trace and span ids as hex.
//
// Its packages live outside the repository (test/fixtures/otlp/README.md names the versions):
//   mkdir -p /tmp/vercel-fixture && cd /tmp/vercel-fixture && npm init -y && npm install --save-exact \
//     ai@6.0.333 @ai-sdk/openai-compatible@2.0.92 zod@4.6.7 @opentelemetry/api@1.9.1 \
//     @opentelemetry/sdk-trace-base@2.12.1 @opentelemetry/resources@2.12.1 \
//     @opentelemetry/context-async-hooks@2.12.1 @opentelemetry/otlp-transformer@0.223.1
//   cp <repo>/scripts/otlp-fixture-vercel.mjs /tmp/vercel-fixture/ && \
//     node /tmp/vercel-fixture/otlp-fixture-vercel.mjs <repo>/test/fixtures/otlp/vercel-ai.json
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';

const USER = 'What is the weather in Paris, and can you book a table for 4 at Chez Lu?';
const ANSWER = 'It is 18 °C and cloudy in Paris. Chez Lu is fully booked, so no table was booked.';
const out = process.argv[2];
if (!out) throw new Error('usage: node otlp-fixture-vercel.mjs <out.json>');

/** Chat completions: first the two tool calls, then (once tool answers are in) the answer. */
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (d) => (raw += d));
  req.on('end', () => {
    const body = JSON.parse(raw);
    const answered = body.messages.some((m) => m.role === 'tool');
    const message = answered
      ? { role: 'assistant', content: ANSWER }
      : {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_W3ath3rPar1s',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city": "Paris"}' },
            },
            {
              id: 'call_B00kChezLu',
              type: 'function',
              function: { name: 'book_table', arguments: '{"restaurant": "Chez Lu", "people": 4}' },
            },
          ],
        };
    const data = JSON.stringify({
      id: 'chatcmpl-standin',
      object: 'chat.completion',
      created: 1765000000,
      model: body.model,
      choices: [{ index: 0, message, finish_reason: answered ? 'stop' : 'tool_calls' }],
      usage: { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 },
    });
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(data);
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));

// Without a context manager each span would start a trace of its own.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'fixture-vercel-ai' }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
const model = createOpenAICompatible({
  name: 'standin',
  baseURL: `http://127.0.0.1:${server.address().port}/v1`,
  apiKey: 'not-used',
})('gpt-4o-mini');

const result = await generateText({
  model,
  system: 'You are a concierge.',
  prompt: USER,
  tools: {
    get_weather: tool({
      description: 'Current weather in a city.',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, temp_c: 18, sky: 'cloudy' }),
    }),
    book_table: tool({
      description: 'Book a restaurant table.',
      inputSchema: z.object({ restaurant: z.string(), people: z.number().int() }),
      execute: async ({ restaurant, people }) => {
        throw new Error(`${restaurant} is fully booked for ${people}`);
      },
    }),
  },
  stopWhen: stepCountIs(3),
  experimental_telemetry: { isEnabled: true, tracer: provider.getTracer('ai') },
});
server.close();
await provider.forceFlush();
if (result.text !== ANSWER) throw new Error(`unexpected answer: ${result.text}`);

const request = JSON.parse(
  new TextDecoder().decode(JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans())),
);
writeFileSync(out, JSON.stringify(request) + '\n');
console.log(`${out}: ${exporter.getFinishedSpans().length} spans`);
