import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
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

/**
 * Starts a built-in domain bundle over streamable HTTP on a free loopback port (`extraArgs` after
 * `--http 0`); resolves with the process and its URL.
 */
export function startHttpServer(
  bundle: string,
  extraArgs: readonly string[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, '--http', '0', ...extraArgs], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no URL from the server: ${err}`));
    }, 15_000);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      err += chunk;
      const m = /listening (http:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}): ${err}`));
    });
  });
}
