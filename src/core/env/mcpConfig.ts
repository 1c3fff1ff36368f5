import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { parse as parseJsonc, printParseErrorCode } from 'jsonc-parser';
import type { ParseError as JsoncParseError } from 'jsonc-parser';
import { StudioError } from '../base/errors';
import { isJsonObject } from '../base/json';
import type { McpInputDefinition, ServerCatalog, ServerDefinition } from './serverDefinition';

/** Path of a workspace's MCP configuration, the file VS Code reads. */
export function workspaceMcpConfigPath(workspaceFolder: string): string {
  return path.join(workspaceFolder, '.vscode', 'mcp.json');
}

/** An empty catalog. */
export function emptyCatalog(): ServerCatalog {
  return { servers: {}, inputs: [], origin: {} };
}

/**
 * Reads `.vscode/mcp.json` (JSON with comments, as VS Code writes it). A missing file is an empty
 * catalog; a malformed one is a StudioError SERVER_CONFIG_INVALID naming the fault.
 */
export async function readWorkspaceMcpConfig(workspaceFolder: string): Promise<ServerCatalog> {
  const file = workspaceMcpConfigPath(workspaceFolder);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return emptyCatalog();
    throw new StudioError(
      'SERVER_CONFIG_INVALID',
      `Cannot read ${file}: ${(err as Error).message}.`,
    );
  }
  const errors: JsoncParseError[] = [];
  const value: unknown = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length) {
    const e = errors[0];
    throw new StudioError(
      'SERVER_CONFIG_INVALID',
      `${file} is not valid JSON (${printParseErrorCode(e.error)} at offset ${e.offset}). Fix the file and try again.`,
    );
  }
  if (!isJsonObject(value))
    throw new StudioError(
      'SERVER_CONFIG_INVALID',
      `${file} must hold a JSON object with a "servers" map.`,
    );
  const catalog = parseServersMap(value['servers'] ?? {}, file, '/servers');
  catalog.inputs = parseInputs(value['inputs'] ?? [], file);
  return catalog;
}

/**
 * Reads the value of the `rehearsal.servers` setting: the same shape as mcp.json's `servers` map.
 * Faults are StudioErrors SERVER_CONFIG_INVALID naming the JSON path.
 */
export function parseServersSetting(value: unknown): ServerCatalog {
  return parseServersMap(value ?? {}, 'setting rehearsal.servers', '');
}

function parseServersMap(value: unknown, origin: string, base: string): ServerCatalog {
  const fail = (where: string, what: string): never => {
    throw new StudioError('SERVER_CONFIG_INVALID', `${origin}: ${where || '/'} ${what}.`, {
      path: where,
    });
  };
  if (!isJsonObject(value)) fail(base, 'must be an object mapping server names to definitions');
  const catalog = emptyCatalog();
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    const at = `${base}/${name}`;
    catalog.servers[name] = parseServerDefinition(raw, at, fail);
    catalog.origin[name] = origin;
  }
  return catalog;
}

/**
 * Checks and normalises one server definition (mcp.json shape, or `builtin` / `replay`). A missing
 * `type` with a `command` means stdio, with a `url` means http. `fail(path, what)` reports a fault.
 */
export function parseServerDefinition(
  raw: unknown,
  at: string,
  fail: (where: string, what: string) => never,
): ServerDefinition {
  if (!isJsonObject(raw)) return fail(at, 'must be an object');
  const strMap = (key: string, allowNull: boolean): { [k: string]: string } | undefined => {
    const v = raw[key];
    if (v === undefined) return undefined;
    if (!isJsonObject(v)) return fail(`${at}/${key}`, 'must be an object of strings');
    for (const [k, s] of Object.entries(v)) {
      if (typeof s !== 'string' && !(allowNull && s === null))
        fail(`${at}/${key}/${k}`, 'must be a string');
    }
    return v as { [k: string]: string };
  };
  // What a process is started with: a stdio definition's and a built-in server's.
  const processFields = () => {
    const args = raw['args'];
    if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string')))
      fail(`${at}/args`, 'must be an array of strings');
    const cwd = raw['cwd'];
    if (cwd !== undefined && typeof cwd !== 'string') fail(`${at}/cwd`, 'must be a string');
    return {
      ...(args !== undefined ? { args: args as string[] } : {}),
      ...(raw['env'] !== undefined ? { env: strMap('env', true) } : {}),
      ...(cwd !== undefined ? { cwd: cwd as string } : {}),
    };
  };
  if (typeof raw['builtin'] === 'string') return { builtin: raw['builtin'], ...processFields() };
  if (typeof raw['replay'] === 'string') return { replay: raw['replay'] };
  const type =
    raw['type'] ??
    (raw['command'] !== undefined ? 'stdio' : raw['url'] !== undefined ? 'http' : undefined);
  if (type === 'stdio') {
    const command = raw['command'];
    if (typeof command !== 'string' || command === '')
      return fail(`${at}/command`, 'must be a non-empty string');
    const envFile = raw['envFile'];
    if (envFile !== undefined && typeof envFile !== 'string')
      fail(`${at}/envFile`, 'must be a string');
    const { args, env, cwd } = processFields();
    return {
      type: 'stdio',
      command,
      ...(args !== undefined ? { args } : {}),
      ...(env !== undefined ? { env } : {}),
      ...(envFile !== undefined ? { envFile: envFile as string } : {}),
      ...(cwd !== undefined ? { cwd } : {}),
    };
  }
  if (type === 'http' || type === 'sse') {
    const url = raw['url'];
    if (typeof url !== 'string' || url === '')
      return fail(`${at}/url`, 'must be a non-empty string');
    return {
      type,
      url,
      ...(raw['headers'] !== undefined ? { headers: strMap('headers', false) } : {}),
    };
  }
  return fail(at, 'needs "command" (stdio), "url" (http), "builtin" or "replay"');
}

function parseInputs(value: unknown, origin: string): McpInputDefinition[] {
  if (!Array.isArray(value))
    throw new StudioError('SERVER_CONFIG_INVALID', `${origin}: /inputs must be an array.`);
  return value.map((v, i) => {
    if (!isJsonObject(v) || typeof v['id'] !== 'string')
      throw new StudioError(
        'SERVER_CONFIG_INVALID',
        `${origin}: /inputs/${i} needs a string "id".`,
      );
    // A JSON object with a string id; its other fields are what VS Code's mcp.json allows (read as given).
    return v as unknown as McpInputDefinition;
  });
}
