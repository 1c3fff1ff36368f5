import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import type { StdioServerDefinition } from '../../src/core/env/serverDefinition';

/** Tasks per built-in domain the studio promises (seeds 0-499). */
export const TASKS_PER_DOMAIN = 500;

/** The repository root (tests run from out/test/...). */
export const REPO = path.resolve(__dirname, '..', '..', '..');

/** test/fixtures in the source tree (fixtures are not compiled). */
export const FIXTURES = path.join(REPO, 'test', 'fixtures');

/** Entry points of the third-party npm servers. */
export const NPM_SERVERS = {
  memory: path.join(
    REPO,
    'node_modules',
    '@modelcontextprotocol',
    'server-memory',
    'dist',
    'index.js',
  ),
  filesystem: path.join(
    REPO,
    'node_modules',
    '@modelcontextprotocol',
    'server-filesystem',
    'dist',
    'index.js',
  ),
};

let built: string | undefined;

/**
 * Builds the built-in server bundles (`node scripts/build.mjs --servers`, about a second) once per
 * test process, so the e2e tier after `tsc` needs no separate build step. Returns dist/servers.
 */
export function ensureServerBundles(): string {
  if (!built) {
    execFileSync(process.execPath, [path.join(REPO, 'scripts', 'build.mjs'), '--servers'], {
      cwd: REPO,
      stdio: 'inherit',
    });
    built = path.join(REPO, 'dist', 'servers');
  }
  return built;
}

let hostBuilt: string | undefined;

/**
 * Builds the policy host bundle (`node scripts/build.mjs --policy-host`) once per test process: the
 * CLI and `OnnxPolicy` start `dist/policy-host.js`. Returns its path.
 */
export function ensurePolicyHostBundle(): string {
  if (!hostBuilt) {
    execFileSync(process.execPath, [path.join(REPO, 'scripts', 'build.mjs'), '--policy-host'], {
      cwd: REPO,
      stdio: 'inherit',
    });
    hostBuilt = path.join(REPO, 'dist', 'policy-host.js');
  }
  return hostBuilt;
}

/** A stdio definition running a fixture server with this Node. */
export function fixtureServer(name: string): StdioServerDefinition {
  return { type: 'stdio', command: process.execPath, args: [path.join(FIXTURES, 'servers', name)] };
}
