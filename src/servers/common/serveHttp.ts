import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { safeInterval } from '../../core/base/timers';

/** Most MCP sessions open at once by default; a client past it is refused (a session may hold a world). */
export const MAX_HTTP_SESSIONS = 1_024;
/** A session unused for this long is closed (its client went away without ending it). */
export const HTTP_SESSION_IDLE_MS = 10 * 60_000;

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * Serves MCP over streamable HTTP on loopback at `port` (0 picks a free port; the URL is printed on
 * stderr as `listening <url>`), one server from `build` per session. Answers are JSON (no event
 * stream, and a GET is 405: these servers send nothing unasked), to loopback clients that are not
 * web pages (the Host header names this port; no Origin header). Sessions are bounded in number
 * (`maxSessions`) and closed after {@link HTTP_SESSION_IDLE_MS} unused.
 */
export function serveHttp(
  httpPort: string,
  build: () => McpServer,
  maxSessions = MAX_HTTP_SESSIONS,
): void {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; usedAt: number }>();
  let hosts: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    // Loopback clients only, never a web page (DNS rebinding, or a page posting from a browser).
    if (!hosts.includes(req.headers.host ?? '') || req.headers.origin !== undefined) {
      jsonRpcError(res, 403, -32000, 'Only loopback clients that are not web pages may connect.');
      return;
    }
    // No stream of messages unasked: these servers send none, so a client's GET holds nothing open.
    if (req.method === 'GET') {
      res.writeHead(405, { allow: 'POST, DELETE' }).end();
      return;
    }
    const id = req.headers['mcp-session-id'];
    const open = typeof id === 'string' ? sessions.get(id) : undefined;
    let transport = open?.transport;
    if (open) open.usedAt = Date.now();
    if (!transport) {
      if (typeof id === 'string') {
        jsonRpcError(res, 404, -32001, 'Session not found');
        return;
      }
      if (sessions.size >= maxSessions) {
        jsonRpcError(
          res,
          503,
          -32000,
          `Too many sessions (${maxSessions} open): end one before starting another.`,
        );
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableJsonResponse: true,
        onsessioninitialized: (sid) => {
          sessions.set(sid, { transport: created, usedAt: Date.now() });
        },
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await build().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  };
  safeInterval(
    () => {
      const before = Date.now() - HTTP_SESSION_IDLE_MS;
      for (const { transport, usedAt } of [...sessions.values()])
        if (usedAt < before) void transport.close();
    },
    Math.min(HTTP_SESSION_IDLE_MS, 60_000),
  ).unref();
  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      process.stderr.write(`request failed: ${String(err)}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  http.listen(Number(httpPort), '127.0.0.1', () => {
    const address = http.address();
    const port = typeof address === 'object' && address ? address.port : httpPort;
    hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
    process.stderr.write(`listening http://127.0.0.1:${port}/mcp\n`);
  });
}
