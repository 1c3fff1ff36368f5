/**
 * How a tool server is started or reached. The stdio and http shapes are those of VS Code's
 * `.vscode/mcp.json` `servers` entries, so servers a developer already configured are reused as
 * they are; `builtin` names one of the studio's own domains; `replay` points at a recording.
 */

/** A server started as a child process speaking MCP over stdin/stdout. */
export interface StdioServerDefinition {
  type: 'stdio';
  command: string;
  args?: string[];
  env?: { [name: string]: string | null };
  /** A dotenv file whose variables are added to `env` (`env` wins). */
  envFile?: string;
  cwd?: string;
}

/** A remote server speaking MCP streamable HTTP (`sse` entries of mcp.json are treated alike). */
export interface HttpServerDefinition {
  type: 'http' | 'sse';
  url: string;
  headers?: { [name: string]: string };
}

/**
 * A server the studio carries: one of its built-in domains (`src/servers/<name>`), e.g.
 * `{ "builtin": "retail" }`, or a reference MCP server bundled with it (`filesystem`, `memory`),
 * run with the studio's own Node. `args`, `env` and `cwd` are those of a stdio definition.
 */
export interface BuiltinServerDefinition {
  builtin: string;
  args?: string[];
  env?: { [name: string]: string | null };
  cwd?: string;
}

/** Actual responses taken from a recording file (see `ReplayRecording`). */
export interface ReplayServerDefinition {
  replay: string;
}

/** Any server definition. */
export type ServerDefinition =
  StdioServerDefinition | HttpServerDefinition | BuiltinServerDefinition | ReplayServerDefinition;

/** A `promptString` input of mcp.json, asked for when `${input:ID}` is used. */
export interface McpInputDefinition {
  type: string;
  id: string;
  description?: string;
  password?: boolean;
  default?: string;
}

/** The servers a workspace or a setting configures, by name. */
export interface ServerCatalog {
  servers: { [name: string]: ServerDefinition };
  inputs: McpInputDefinition[];
  /** Where each server came from, for messages (`.vscode/mcp.json`, `setting rehearsal.servers`). */
  origin: { [name: string]: string };
}

/** True for a stdio definition (mcp.json allows `type` to be left out when there is a `command`). */
export function isStdioDefinition(d: ServerDefinition): d is StdioServerDefinition {
  // As in .vscode/mcp.json, `type` may be left out when `command` is given.
  const { type, command } = d as { type?: unknown; command?: unknown };
  return type === 'stdio' || (type === undefined && typeof command === 'string');
}

/** True for an http or sse definition. */
export function isHttpDefinition(d: ServerDefinition): d is HttpServerDefinition {
  const { type: t, url, command } = d as { type?: unknown; url?: unknown; command?: unknown };
  return (
    t === 'http' ||
    t === 'sse' ||
    (t === undefined && command === undefined && typeof url === 'string')
  );
}

/** True for a built-in domain. */
export function isBuiltinDefinition(d: ServerDefinition): d is BuiltinServerDefinition {
  return typeof (d as BuiltinServerDefinition).builtin === 'string';
}

/** True for a replay recording. */
export function isReplayDefinition(d: ServerDefinition): d is ReplayServerDefinition {
  return typeof (d as ReplayServerDefinition).replay === 'string';
}
