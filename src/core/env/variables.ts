import * as os from 'node:os';
import * as path from 'node:path';
import { StudioError } from '../base/errors';
import type { McpInputDefinition } from './serverDefinition';

/** Asks the host for the value of an mcp.json `${input:ID}` (the editor prompts; the CLI reads the environment). */
export type InputResolver = (
  id: string,
  input: McpInputDefinition | undefined,
) => Promise<string | undefined>;

/** What `${...}` variables of a server definition resolve against. */
export interface VariableContext {
  /** `${workspaceFolder}`. */
  workspaceFolder?: string;
  /** Definitions of `${input:ID}` from mcp.json. */
  inputs?: readonly McpInputDefinition[];
  /** Resolves `${input:ID}`; without it such a definition is a SERVER_CONFIG_INVALID error. */
  resolveInput?: InputResolver;
  /** Process environment for `${env:NAME}` (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/** The per-episode variable: a fresh empty folder for each episode, e.g. for a server's data file. */
export const EPISODE_DIR_VARIABLE = '${episodeDir}';

const VARIABLE = /\$\{([^}]*)\}/g;

/**
 * Replaces `${workspaceFolder}`, `${userHome}`, `${env:NAME}`, `${input:ID}` and `${pathSeparator}`
 * in `text`; `${episodeDir}` is kept for {@link substituteEpisodeDir}. Unknown variables are a
 * StudioError SERVER_CONFIG_INVALID. Input values are asked once per id and cached in `cache`.
 */
export async function substituteVariables(
  text: string,
  ctx: VariableContext,
  cache: Map<string, string>,
): Promise<string> {
  const names = [...text.matchAll(VARIABLE)].map((m) => m[1]);
  const values = new Map<string, string>();
  for (const name of names) {
    if (values.has(name) || name === 'episodeDir') continue;
    values.set(name, await variableValue(name, ctx, cache));
  }
  return text.replace(VARIABLE, (whole, name: string) =>
    name === 'episodeDir' ? whole : (values.get(name) ?? whole),
  );
}

async function variableValue(
  name: string,
  ctx: VariableContext,
  cache: Map<string, string>,
): Promise<string> {
  if (name === 'workspaceFolder') {
    if (!ctx.workspaceFolder)
      throw new StudioError(
        'SERVER_CONFIG_INVALID',
        '${workspaceFolder} is used but no workspace folder is open.',
      );
    return ctx.workspaceFolder;
  }
  if (name === 'userHome') return os.homedir();
  if (name === 'pathSeparator' || name === '/') return path.sep;
  if (name.startsWith('env:')) return (ctx.env ?? process.env)[name.slice(4)] ?? '';
  if (name.startsWith('input:')) {
    const id = name.slice(6);
    const cached = cache.get(id);
    if (cached !== undefined) return cached;
    const input = ctx.inputs?.find((i) => i.id === id);
    const value = ctx.resolveInput ? await ctx.resolveInput(id, input) : input?.default;
    if (value === undefined) {
      throw new StudioError(
        'SERVER_CONFIG_INVALID',
        `No value for \${input:${id}}: ${input?.description ?? 'it is not defined in the "inputs" of mcp.json'}. Provide it when asked, or define a default.`,
      );
    }
    cache.set(id, value);
    return value;
  }
  throw new StudioError(
    'SERVER_CONFIG_INVALID',
    `Unknown variable \${${name}} in a server definition; supported: workspaceFolder, userHome, env:NAME, input:ID, episodeDir.`,
  );
}

/** Replaces `${episodeDir}` with the episode's folder. */
export function substituteEpisodeDir(text: string, episodeDir: string): string {
  return text.split(EPISODE_DIR_VARIABLE).join(episodeDir);
}
