import { serveDomain } from '../common/serve';
import { BANK_DOMAIN } from './domain';

// The bank domain as an MCP server (stdio, or `--http <port>`).
serveDomain(BANK_DOMAIN).catch((err) => {
  process.stderr.write(`bank server failed: ${String(err)}\n`);
  process.exit(1);
});
