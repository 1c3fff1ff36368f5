import { serveDomain } from '../common/serve';
import { BANK_WORLDS } from './domain';

// The bank domain as an MCP server (stdio, or `--http <port>`); `--world foresight` serves the
// foresight world (CDs, IRAs and joint accounts) instead of the default one.
const at = process.argv.indexOf('--world');
const world = at >= 0 ? process.argv[at + 1] : 'default';
const domain = Object.hasOwn(BANK_WORLDS, world ?? '') ? BANK_WORLDS[world!] : undefined;
if (!domain) {
  process.stderr.write(
    `bank server: unknown world "${String(world)}"; worlds: ${Object.keys(BANK_WORLDS).join(', ')}\n`,
  );
  process.exit(2);
}
serveDomain(domain).catch((err) => {
  process.stderr.write(`bank server failed: ${String(err)}\n`);
  process.exit(1);
});
