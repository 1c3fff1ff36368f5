import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { parseEnv } from 'node:util';
import { StudioError } from '../base/errors';
import { studioRoot } from '../base/studioRoot';
import type {
  BuiltinServerDefinition,
  HttpServerDefinition,
  ServerDefinition,
  StdioServerDefinition,
} from './serverDefinition';
import { isBuiltinDefinition, isHttpDefinition, isStdioDefinition } from './serverDefinition';
import type { VariableContext } from './variables';
import { EPISODE_DIR_VARIABLE, substituteVariables } from './variables';

/** How to reach one MCP server once its variables are resolved. */
export type LaunchSpec =
  | {
      kind: 'stdio';
      command: string;
      args: string[];
      env: { [name: string]: string };
      cwd?: string;
      /** True when the definition uses `${episodeDir}`: such a server gets a fresh process per episode. */
      perEpisode: boolean;
    }
  | { kind: 'http'; url: string; headers: { [name: string]: string } }
  | {
      /**
       * A built-in domain: one process for every environment with the same launch, each MCP session
       * (an environment's) a world of its own (see `SessionServers`).
       */
      kind: 'session';
      command: string;
      args: string[];
      env: { [name: string]: string };
      cwd?: string;
    };

/** Where relative paths and built-in domains are found. */
export interface LaunchContext extends VariableContext {
  /** Folder relative `cwd` and `envFile` paths resolve against (the task file's folder, or the workspace). */
  baseDir: string;
  /** Folder of the built-in server bundles (`dist/servers`); see {@link defaultBuiltinServersDir}. */
  builtinServersDir?: string;
  /** The studio's Python environment's interpreter, for the built-in Python servers (may throw). */
  python?: () => string;
}

/**
 * Built-in servers written in Python, by name: the module `python -m` runs, from the studio's own
 * folder (PYTHONPATH), on the studio's Python environment (`rehearse trainer setup` makes it).
 */
export const PYTHON_BUILTINS: Readonly<Record<string, string>> = {
  bfcl: 'trainer.bfcl.server',
  tau2: 'trainer.tau2.server',
};

/**
 * The folder holding the built-in server bundles: `servers/` beside the running bundle
 * (dist/cli.js, dist/extension.js), else `dist/servers` of the enclosing package.
 */
export function defaultBuiltinServersDir(): string {
  const beside = path.join(__dirname, 'servers');
  if (existsSync(beside)) return beside;
  return path.join(studioRoot(), 'dist', 'servers');
}

/**
 * The bundle of a built-in server: `<name>.js` (a built-in domain), else `<name>.mjs` (a reference
 * MCP server bundled as an ES module).
 */
export function builtinServerPath(name: string, dir = defaultBuiltinServersDir()): string {
  const commonJs = path.join(dir, `${name}.js`);
  const esModule = path.join(dir, `${name}.mjs`);
  return existsSync(commonJs) || !existsSync(esModule) ? commonJs : esModule;
}

/**
 * Resolves a stdio, http or builtin definition into a {@link LaunchSpec}: variables substituted
 * (inputs asked through the context), `envFile` read, relative `cwd` resolved. Faults are
 * StudioErrors (SERVER_CONFIG_INVALID, SERVER_START_FAILED for a missing built-in bundle).
 */
export async function resolveLaunch(
  name: string,
  def: ServerDefinition,
  ctx: LaunchContext,
  inputCache = new Map<string, string>(),
): Promise<LaunchSpec> {
  const sub = (s: string) => substituteVariables(s, ctx, inputCache);
  if (isBuiltinDefinition(def)) {
    const stdio = builtinAsStdio(name, def, ctx);
    const spec = await resolveLaunch(name, stdio, ctx, inputCache);
    // A built-in domain (a `.js` bundle, served by `serveDomain`; the Python built-ins run `-m`)
    // serves a world per session, so environments share its process; one asked for its own HTTP
    // port, or whose every episode gets a folder of its own, runs as defined.
    const domain = (stdio.args ?? [])[0]?.endsWith('.js');
    if (spec.kind === 'stdio' && domain && !spec.perEpisode && !spec.args.includes('--http')) {
      const { command, args, env, cwd } = spec;
      return { kind: 'session', command, args, env, ...(cwd !== undefined ? { cwd } : {}) };
    }
    return spec;
  }
  if (isStdioDefinition(def)) return resolveStdio(name, def, ctx.baseDir, sub);
  if (isHttpDefinition(def)) return resolveHttp(name, def, sub);
  throw new StudioError(
    'SERVER_CONFIG_INVALID',
    `Server "${name}" is not an MCP server definition.`,
  );
}

/**
 * The stdio definition a built-in server runs as: a Python built-in as `python -m <module>` on the
 * studio's environment, else its bundle on this Node.
 */
function builtinAsStdio(
  name: string,
  def: BuiltinServerDefinition,
  ctx: LaunchContext,
): StdioServerDefinition {
  if (!/^[a-z][a-z0-9-]*$/.test(def.builtin))
    throw new StudioError(
      'SERVER_CONFIG_INVALID',
      `Server "${name}": "${def.builtin}" is not a built-in server name.`,
    );
  const module = Object.hasOwn(PYTHON_BUILTINS, def.builtin)
    ? PYTHON_BUILTINS[def.builtin]
    : undefined;
  if (module !== undefined) {
    const python = ctx.python?.();
    if (!python)
      throw new StudioError(
        'SERVER_START_FAILED',
        `Server "${name}": the built-in server "${def.builtin}" runs on the studio's Python environment, which this host did not name. Run \`rehearse trainer setup\`, then the task again from the CLI or the editor.`,
      );
    return {
      type: 'stdio',
      command: python,
      args: ['-m', module, ...(def.args ?? [])],
      env: { PYTHONPATH: studioRoot(), OMP_WAIT_POLICY: 'PASSIVE', ...def.env },
      ...(def.cwd !== undefined ? { cwd: def.cwd } : {}),
    };
  }
  const bundle = builtinServerPath(def.builtin, ctx.builtinServersDir);
  if (!existsSync(bundle)) {
    throw new StudioError(
      'SERVER_START_FAILED',
      `Server "${name}": the built-in server "${def.builtin}" has no bundle at ${bundle}. Build it with \`node scripts/build.mjs\`, or check the name (the built-in domains, filesystem, memory).`,
    );
  }
  // The bundle runs with this Node (in the editor, process.execPath is Electron: run it as plain
  // Node); its args, env and cwd are a stdio definition's.
  return {
    type: 'stdio',
    command: process.execPath,
    args: [bundle, ...(def.args ?? [])],
    env: {
      ...(process.versions['electron'] ? { ELECTRON_RUN_AS_NODE: '1' } : {}),
      ...def.env,
    },
    ...(def.cwd !== undefined ? { cwd: def.cwd } : {}),
  };
}

/** A stdio definition resolved: `envFile` read, then `env`, args, command and `cwd` substituted. */
async function resolveStdio(
  name: string,
  def: StdioServerDefinition,
  baseDir: string,
  sub: (s: string) => Promise<string>,
): Promise<LaunchSpec> {
  const env: { [k: string]: string } = {};
  if (def.envFile) {
    const file = path.resolve(baseDir, await sub(def.envFile));
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new StudioError(
        'SERVER_CONFIG_INVALID',
        `Server "${name}": cannot read envFile ${file} (${(err as Error).message}).`,
      );
    }
    Object.assign(env, parseEnv(text));
  }
  for (const [k, v] of Object.entries(def.env ?? {})) {
    if (v === null) delete env[k];
    else env[k] = await sub(v);
  }
  const args: string[] = [];
  for (const a of def.args ?? []) args.push(await sub(a));
  const command = await sub(def.command);
  let cwd = def.cwd !== undefined ? await sub(def.cwd) : undefined;
  // `${episodeDir}` is absolute once substituted; other relative folders resolve against the base.
  if (cwd !== undefined && !cwd.startsWith(EPISODE_DIR_VARIABLE)) cwd = path.resolve(baseDir, cwd);
  const perEpisode = [command, ...args, ...Object.values(env), cwd ?? ''].some((s) =>
    s.includes(EPISODE_DIR_VARIABLE),
  );
  return { kind: 'stdio', command, args, env, ...(cwd !== undefined ? { cwd } : {}), perEpisode };
}

/** An http definition resolved: headers and URL substituted, the URL checked. */
async function resolveHttp(
  name: string,
  def: HttpServerDefinition,
  sub: (s: string) => Promise<string>,
): Promise<LaunchSpec> {
  const headers: { [k: string]: string } = {};
  for (const [k, v] of Object.entries(def.headers ?? {})) headers[k] = await sub(v);
  const url = await sub(def.url);
  try {
    new URL(url);
  } catch {
    throw new StudioError(
      'SERVER_CONFIG_INVALID',
      `Server "${name}": "${url}" is not a valid URL.`,
    );
  }
  return { kind: 'http', url, headers };
}
