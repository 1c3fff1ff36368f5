import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/**
 * Serves MCP over streamable HTTP on loopback at `port` (0 picks a free port; the URL is printed on
 * stderr as `listening <url>`), one server from `build` per session.
 */
export function serveHttp(httpPort: string, build: () => McpServer): void {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? transports.get(id) : undefined;
    if (!transport) {
      if (typeof id === 'string') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32001, message: 'Session not found' },
            id: null,
          }),
        );
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sid) => {
          transports.set(sid, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) transports.delete(created.sessionId);
      };
      await build().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((err) => {
      process.stderr.write(`request failed: ${String(err)}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  http.listen(Number(httpPort), '127.0.0.1', () => {
    const address = http.address();
    const port = typeof address === 'object' && address ? address.port : httpPort;
    process.stderr.write(`listening http://127.0.0.1:${port}/mcp\n`);
  });
}
