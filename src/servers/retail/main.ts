import { serveDomain } from '../common/serve';
import { RETAIL_DOMAIN } from './domain';

// The retail domain as an MCP server (stdio, or `--http <port>`).
serveDomain(RETAIL_DOMAIN).catch((err) => {
  process.stderr.write(`retail server failed: ${String(err)}\n`);
  process.exit(1);
});
