import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { ENV_ERROR_CODES } from '../../../src/core/env/errors';
import { openEnvironment } from '../../../src/core/env/openEnvironment';
import { REPO, fixtureServer } from '../servers';
import type { FuzzTarget } from './targets';
import { processAlive as alive } from '../crash/kill';

/**
 * MCP server behaviour over time as a fuzz target: a real stdio server (test/fixtures/servers/
 * scripted-faults.mjs) whose tool behaves on each call as a generated script says (answers, slow
 * answers, hangs, garbage, crashes, error results, JSON-RPC errors, answers with a wrong id or twice,
 * large and deep results, notifications, stderr floods, an exit after answering), called several
 * times in one or two episodes. The promise: every call ends within its timeout and a slack, as a
 * response or with one of the environment's codes; a new episode starts a working server; closing
 * ends within a bound and leaves no server process.
 */

const ACTIONS = [
  'ok',
  'ok',
  'slow',
  'hang',
  'garbage',
  'crash',
  'error',
  'rpc-error',
  'wrong-id',
  'double',
  'large',
  'deep',
  'log',
  'stderr',
  'exit-after',
] as const;
const TIMEOUT_MS = 400;
/** A call's answer may come this much after its timeout on a loaded 2-core machine. */
const SLACK_MS = 3000;
const CODES = new Set<string>(ENV_ERROR_CODES);

/** The MCP target (see the file's comment). */
export const mcpTarget: FuzzTarget = {
  name: 'MCP server behaviour over time (real stdio server, scripted faults)',
  startsProcesses: true,
  share: 0.05,
  property(scratch: string) {
    let n = 0;
    return fc.asyncProperty(
      fc.array(fc.constantFrom(...ACTIONS), { minLength: 1, maxLength: 5 }),
      fc.integer({ min: 1, max: 6 }),
      fc.boolean(),
      async (script, calls, twoEpisodes) => {
        const pidFile = path.join(scratch, `mcp-pids-${n++}`);
        await fs.rm(pidFile, { force: true });
        const server = {
          ...fixtureServer('scripted-faults.mjs'),
          env: { SCRIPTED_FAULTS: JSON.stringify(script), SCRIPTED_FAULTS_PIDS: pidFile },
        };
        const env = await openEnvironment(
          { s: server },
          { baseDir: REPO, callTimeoutMs: TIMEOUT_MS },
          { log: () => undefined },
        );
        try {
          for (let episode = 0; episode < (twoEpisodes ? 2 : 1); episode++) {
            await env.startEpisode();
            for (let k = 0; k < calls; k++) {
              const t0 = performance.now();
              const r = await env.call('step', {});
              const ms = performance.now() - t0;
              assert.ok(
                ms < TIMEOUT_MS + SLACK_MS,
                `call ${k} of ${JSON.stringify(script)} took ${Math.round(ms)} ms`,
              );
              if (r.error) assert.ok(CODES.has(r.error.code), `uncoded ${JSON.stringify(r.error)}`);
              else assert.ok(r.response, 'neither a response nor an error');
            }
          }
        } finally {
          const t0 = performance.now();
          await env.close();
          assert.ok(performance.now() - t0 < 10_000, 'closing took over 10 s');
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
        const pids = (await fs.readFile(pidFile, 'utf8')).trim().split('\n').map(Number);
        assert.ok(pids.length >= 1, 'the server started');
        for (const pid of pids)
          assert.ok(
            !alive(pid),
            `server ${pid} still runs after close (script ${JSON.stringify(script)})`,
          );
      },
    );
  },
};
