import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { RESET_TOOL, SNAPSHOT_TOOL } from '../../core/env/adminTools';
import type { Domain, ToolOutcome } from './domain';
import { DomainSession } from './domain';

function toResult(outcome: ToolOutcome): CallToolResult {
  if (outcome.ok)
    return {
      content: [{ type: 'text', text: JSON.stringify(outcome.value) }],
      structuredContent: outcome.value,
    };
  return {
    content: [
      {
        type: 'text',
        text: JSON.stringify({ error: outcome.error.message, code: outcome.error.code }),
      },
    ],
    isError: true,
  };
}

function buildServer<S>(domain: Domain<S>, session: DomainSession<S>): McpServer {
  const server = new McpServer({ name: `rehearsal-${domain.name}`, version: domain.version });
  for (const tool of domain.tools) {
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: tool.input,
        // A tool that changes the state has a target (its writes are logged); the others only read.
        annotations: { readOnlyHint: !tool.target },
      },
      async (args: Record<string, unknown>) => toResult(session.call(tool.name, args)),
    );
  }
  server.registerTool(
    RESET_TOOL,
    {
      description:
        'Admin (hidden from agents): restore the world of a seed and clear the write log.',
      inputSchema: { seed: z.number().int().min(0).optional() },
    },
    async ({ seed }) => {
      session.reset(seed ?? 0);
      return {
        content: [{ type: 'text', text: JSON.stringify({ ok: true, seed: seed ?? 0 }) }],
        structuredContent: { ok: true, seed: seed ?? 0 },
      };
    },
  );
  server.registerTool(
    SNAPSHOT_TOOL,
    { description: 'Admin (hidden from agents): the world state and the write log, for grading.' },
    async () => {
      // The state goes in structuredContent only: a JSON text copy would double what is sent and parsed.
      return {
        content: [{ type: 'text', text: 'The state is in structuredContent.' }],
        structuredContent: session.snapshot(),
      };
    },
  );
  return server;
}

function option(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

/**
 * Runs a domain as an MCP server: over stdio by default, or streamable HTTP on loopback with
 * `--http <port>` (0 picks a free port; the URL is printed on stderr as `listening <url>`).
 * `--seed <n>` sets the initial world (default 0). Over stdio there is one session, so one world;
 * over HTTP every session shares the process's one world, or, with `--world-per-session`, each MCP
 * session gets a world of its own (what a run starts: one process a domain, a session an episode
 * in flight); `--max-sessions <n>` bounds the sessions open at once (default 1,024). `--lifeline`
 * ends the server when its stdin closes, so that a studio that dies (even by SIGKILL) leaves no
 * server behind.
 */
export async function serveDomain<S>(
  domain: Domain<S>,
  argv: readonly string[] = process.argv.slice(2),
): Promise<void> {
  const seed = Number(option(argv, '--seed') ?? 0);
  const httpPort = option(argv, '--http');
  if (httpPort === undefined) {
    await buildServer(domain, new DomainSession(domain, seed)).connect(new StdioServerTransport());
    return;
  }
  if (argv.includes('--lifeline')) {
    process.stdin.on('end', () => process.exit(0));
    process.stdin.on('error', () => process.exit(0));
    process.stdin.resume();
  }
  // Loaded only here: the HTTP transport's modules (undici, http2, crypto) cost every stdio server's
  // start a third of its time.
  const { MAX_HTTP_SESSIONS, serveHttp } = await import('./serveHttp.js');
  const max = Number(option(argv, '--max-sessions') ?? MAX_HTTP_SESSIONS);
  if (!Number.isInteger(max) || max < 1 || max > MAX_HTTP_SESSIONS)
    throw new Error(`--max-sessions takes a whole number from 1 to ${MAX_HTTP_SESSIONS}`);
  const shared = argv.includes('--world-per-session') ? undefined : new DomainSession(domain, seed);
  serveHttp(httpPort, () => buildServer(domain, shared ?? new DomainSession(domain, seed)), max);
}
