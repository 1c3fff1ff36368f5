/**
 * `npm run bench:profile [-- --kv-cache slots|copy] [--concurrency N] [--tasks N]`: where the time of
 * one `rehearse run` goes, by phase. It plays held-out tasks (test split, half retail, half bank) with
 * the default policy on the CPU under Node's CPU profiler, in the CLI process and in the policy host
 * (`REHEARSAL_PROFILE_DIR`, hostProtocol.ts), and attributes every sample to a phase by the source file
 * of the innermost frame that names one (the bundles' source maps give the files). The host's
 * forward-pass time is split into prefill and decode by its own counters. The tool servers' CPU time
 * is what `/usr/bin/time` counts for the whole command less the CLI's profiled time and the host's
 * CPU by its own count (every thread). Prints a
 * Markdown table (docs/profile.md holds the measured ones) and writes bench-results/profile-*.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROFILE_DIR_VARIABLE } from '../src/core/policy/hostProtocol';
import { REPO } from '../test/support/servers';
import { defaultPolicyRun, heldOutTasks } from './support/runs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Phases by the source file a frame comes from, first match wins; unmatched frames take their caller's. */
const CLI_PHASES: [string, RegExp][] = [
  [
    'tool calls (MCP client, environments)',
    /@modelcontextprotocol|src\/core\/env\/|taskEnvironment|src\/servers\//,
  ],
  ['trace writes (serialise, validate, append)', /src\/core\/trace\//],
  ['policy requests (JSON-RPC to the host)', /vscode-jsonrpc|src\/core\/policy\//],
  ['grading and fidelity', /[Gg]rad|src\/core\/fidelity\/|src\/core\/report\//],
  ['prompts and parsing', /src\/core\/protocol\/|toolMessages|envaceText/],
  ['runner bookkeeping', /src\/core\/runner\//],
  ['CLI and task loading', /src\/cli\/|src\/core\/tasks\/|commander/],
];
const HOST_PHASES: [string, RegExp][] = [
  ['forward passes (onnxruntime)', /onnxruntime-node|onnxruntime-common/],
  [
    'KV cache and batch bookkeeping',
    /policy\/onnx\/(slotCache|kvCache|forwardInputs|slotScheduler|batchScheduler|sessionCache)/,
  ],
  ['sampling and stop rules', /policy\/sampling\/|onnx\/generation|onnx\/textStream/],
  ['tokenizer and chat template', /@huggingface\/transformers|onnx\/engine/],
  ['JSON-RPC to the CLI', /vscode-jsonrpc|policy\/host/],
];
const SPECIAL = new Map([
  ['(idle)', 'idle (event-loop waits)'],
  ['(garbage collector)', 'garbage collection'],
  ['(program)', 'V8 and native runtime'],
]);

const maps = new Map<string, SourceMap | undefined>();

/**
 * Where a frame comes from: its file and, for a bundled one (dist/*.js, a package's dist), the
 * original source its .map names.
 */
function sourceOf(frame: CallFrame): string {
  if (!frame.url.startsWith('file://')) return frame.url;
  const file = fileURLToPath(frame.url);
  if (!maps.has(file))
    maps.set(
      file,
      existsSync(`${file}.map`)
        ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')) as never)
        : undefined,
    );
  const entry = maps.get(file)?.findEntry(frame.lineNumber, frame.columnNumber) as
    { originalSource?: string } | undefined;
  return `${file} ${entry?.originalSource ?? ''}`;
}

/** Milliseconds of samples by phase. */
function phases(profile: CpuProfile, rules: [string, RegExp][]): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const phaseOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = phaseOf.get(id);
    if (known) return known;
    const frame = byId.get(id)!.callFrame;
    let phase = SPECIAL.get(frame.functionName);
    if (!phase) {
      const source = sourceOf(frame);
      phase = rules.find(([, re]) => re.test(source))?.[0] ?? '';
      if (!phase) {
        const up = parent.get(id);
        phase = up === undefined ? 'other (Node internals, libraries)' : classify(up);
      }
    }
    phaseOf.set(id, phase);
    return phase;
  };
  const out = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const phase = classify(id);
    out.set(phase, (out.get(phase) ?? 0) + profile.timeDeltas[i] / 1000);
  });
  return out;
}

function readProfile(dir: string): CpuProfile {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length !== 1) throw new Error(`expected one profile in ${dir}, found ${files.length}`);
  return JSON.parse(readFileSync(path.join(dir, files[0]), 'utf8')) as CpuProfile;
}

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : fallback;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const kvCache = option(args, '--kv-cache', 'slots');
  const concurrency = option(args, '--concurrency', '8');
  const perDomain = Math.max(1, Math.round(Number(option(args, '--tasks', '16')) / 2));
  const cli = path.join(REPO, 'dist', 'cli.js');
  const work = mkdtempSync(path.join(os.tmpdir(), 'rehearsal-profile-'));
  try {
    const tasks = await heldOutTasks(work, perDomain);
    const profiles = path.join(work, 'profiles');
    const node = [
      '--cpu-prof',
      `--cpu-prof-dir=${path.join(profiles, 'cli')}`,
      cli,
      ...defaultPolicyRun(tasks, path.join(work, 'runs'), kvCache, concurrency),
    ];
    const timed = existsSync('/usr/bin/time');
    const t0 = performance.now();
    const r = spawnSync(
      timed ? '/usr/bin/time' : process.execPath,
      timed ? ['-f', 'cpu %U %S', process.execPath, ...node] : node,
      { env: { ...process.env, [PROFILE_DIR_VARIABLE]: profiles }, encoding: 'utf8' },
    );
    const wallMs = performance.now() - t0;
    if (r.status !== 0) throw new Error(`rehearse run failed (${r.status}):\n${r.stderr}`);
    const cpu = /cpu ([\d.]+) ([\d.]+)/.exec(r.stderr ?? '');
    const totalCpuMs = cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : undefined;
    const cliPhases = phases(readProfile(path.join(profiles, 'cli')), CLI_PHASES);
    const hostPhases = phases(readProfile(path.join(profiles, 'host')), HOST_PHASES);
    const stats = JSON.parse(readFileSync(path.join(profiles, 'host', 'stats.json'), 'utf8')) as {
      prefillForwardMs: number;
      decodeForwardMs: number;
      prefillPasses: number;
      prefillTokens: number;
      decodePasses: number;
      decodeRows: number;
      cpu: { user: number; system: number };
    };
    // The forward passes split by the host's own clock around each pass.
    const forward = hostPhases.get(HOST_PHASES[0][0]) ?? 0;
    const share = stats.prefillForwardMs / (stats.prefillForwardMs + stats.decodeForwardMs || 1);
    hostPhases.delete(HOST_PHASES[0][0]);
    hostPhases.set('forward passes: prefill', forward * share);
    hostPhases.set('forward passes: decode', forward * (1 - share));
    const busy = (m: Map<string, number>) =>
      [...m].filter(([k]) => !k.startsWith('idle')).reduce((s, [, v]) => s + v, 0);
    // The host's CPU by its own count (every thread: prefill runs on several), not its profile's
    // main thread, so that onnxruntime's other threads are not taken for the servers'.
    const hostCpuMs = (stats.cpu.user + stats.cpu.system) / 1000;
    const serversMs =
      totalCpuMs !== undefined ? totalCpuMs - busy(cliPhases) - hostCpuMs : undefined;
    const lines = [
      `One \`rehearse run\` of ${2 * perDomain} held-out tasks, --concurrency ${concurrency}, --kv-cache ${kvCache}: ${(wallMs / 1000).toFixed(2)} s wall.`,
      `Host counters: ${stats.prefillPasses} prefill passes (${stats.prefillTokens} tokens, ${stats.prefillForwardMs.toFixed(0)} ms in the graph), ${stats.decodePasses} decode passes of ${(stats.decodeRows / Math.max(1, stats.decodePasses)).toFixed(2)} rows on average (${stats.decodeForwardMs.toFixed(0)} ms in the graph).`,
      '',
      '| process | phase | ms | share of wall |',
      '| --- | --- | ---: | ---: |',
    ];
    for (const [name, m] of [
      ['policy host', hostPhases],
      ['CLI (runner)', cliPhases],
    ] as const)
      for (const [phase, ms] of [...m].sort((a, b) => b[1] - a[1]))
        lines.push(
          `| ${name} | ${phase} | ${ms.toFixed(0)} | ${((100 * ms) / wallMs).toFixed(1)}% |`,
        );
    if (serversMs !== undefined)
      lines.push(
        `| tool servers (processes) | CPU of every server process | ${serversMs.toFixed(0)} | ${((100 * serversMs) / wallMs).toFixed(1)}% |`,
      );
    console.log(lines.join('\n'));
    const out = path.join(REPO, 'bench-results', `profile-${kvCache}-N${concurrency}.json`);
    writeFileSync(
      out,
      JSON.stringify(
        {
          kvCache,
          concurrency: Number(concurrency),
          tasks: 2 * perDomain,
          wallMs,
          totalCpuMs,
          host: Object.fromEntries(hostPhases),
          cli: Object.fromEntries(cliPhases),
          serversMs,
          stats,
        },
        null,
        2,
      ),
    );
    console.log(`\nwrote ${path.relative(process.cwd(), out)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
