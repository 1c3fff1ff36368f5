import * as path from 'node:path';
import { StudioError } from '../base/errors';
import type { ToolBackend } from './backend';
import type { LaunchContext } from './launch';
import { resolveLaunch } from './launch';
import { McpBackend } from './mcpBackend';
import { parseServersSetting, readWorkspaceMcpConfig } from './mcpConfig';
import { ReplayBackend } from './replayBackend';
import { readReplayRecording } from './replayRecording';
import type { ServerCatalog, ServerDefinition } from './serverDefinition';
import { isReplayDefinition } from './serverDefinition';
import { ToolEnvironment } from './toolEnvironment';
import type { InputResolver } from './variables';

/** What the host (CLI or extension) provides to environments. */
export interface EnvironmentHost {
  /** The workspace folder: `${workspaceFolder}`, and where `.vscode/mcp.json` is read. */
  workspaceFolder?: string;
  /** The value of the `rehearsal.servers` setting (the shape of mcp.json's `servers`). */
  settingServers?: unknown;
  /** Asks the user for `${input:ID}` values. */
  resolveInput?: InputResolver;
  /** Receives server stderr and protocol faults, one line at a time. */
  log?: (line: string) => void;
  /** Folder of the built-in server bundles (default: found beside the running code). */
  builtinServersDir?: string;
  /**
   * The interpreter of the studio's Python environment, which runs the built-in Python servers
   * (`bfcl`); asked only when a task uses one, and may throw the coded error that says to set it up.
   */
  python?: () => string;
  /** Limit for starting a server (default 30 s). */
  startTimeoutMs?: number;
  /** Limit for reset and snapshot calls (default 30 s). */
  adminTimeoutMs?: number;
}

/** The servers of one environment: definitions, or names of servers configured elsewhere. */
export type ServerSpecs = { [name: string]: ServerDefinition | string };

/** Options of {@link openEnvironment}. */
export interface OpenEnvironmentOptions {
  /** Folder that relative paths resolve against (the task file's folder). */
  baseDir: string;
  /** The tools the agent may call; all when absent. */
  allowTools?: readonly string[];
  /** Default call timeout. */
  callTimeoutMs?: number;
}

/**
 * Builds an environment from server specs. A string names a server configured in the
 * `rehearsal.servers` setting or, failing that, in the workspace's `.vscode/mcp.json`. Nothing is
 * started yet: the first `startEpisode` starts the servers. Configuration faults are StudioErrors.
 */
export async function openEnvironment(
  servers: ServerSpecs,
  options: OpenEnvironmentOptions,
  host: EnvironmentHost = {},
): Promise<ToolEnvironment> {
  const catalogs = new LazyCatalogs(host);
  const backends: ToolBackend[] = [];
  const inputCache = new Map<string, string>();
  for (const [name, spec] of Object.entries(servers)) {
    let def: ServerDefinition;
    let baseDir = options.baseDir;
    // mcp.json is read only when it is needed: a broken one must not stop tasks that do not use it.
    let inputs = JSON.stringify(spec).includes('${input:')
      ? (await catalogs.workspace()).inputs
      : [];
    if (typeof spec === 'string') {
      const found = await catalogs.find(spec);
      if (!found) {
        throw new StudioError(
          'SERVER_NOT_CONFIGURED',
          `Server "${name}" refers to "${spec}", which is configured neither in the rehearsal.servers setting nor in .vscode/mcp.json. Add it to one of them, or define it in the task.`,
        );
      }
      def = found.definition;
      baseDir = host.workspaceFolder ?? baseDir;
      inputs = found.catalog.inputs.length ? found.catalog.inputs : inputs;
    } else {
      def = spec;
    }
    if (isReplayDefinition(def)) {
      backends.push(
        new ReplayBackend(name, await readReplayRecording(path.resolve(baseDir, def.replay))),
      );
      continue;
    }
    const ctx: LaunchContext = {
      baseDir,
      workspaceFolder: host.workspaceFolder,
      inputs,
      resolveInput: host.resolveInput,
      builtinServersDir: host.builtinServersDir,
      python: host.python,
    };
    const launch = await resolveLaunch(name, def, ctx, inputCache);
    backends.push(
      new McpBackend(name, launch, {
        log: host.log,
        startTimeoutMs: host.startTimeoutMs,
        adminTimeoutMs: host.adminTimeoutMs,
      }),
    );
  }
  return new ToolEnvironment(backends, {
    allowTools: options.allowTools,
    callTimeoutMs: options.callTimeoutMs,
  });
}

class LazyCatalogs {
  private settingCatalog: ServerCatalog | undefined;
  private workspaceCatalog: Promise<ServerCatalog> | undefined;

  constructor(private readonly host: EnvironmentHost) {}

  workspace(): Promise<ServerCatalog> {
    this.workspaceCatalog ??= this.host.workspaceFolder
      ? readWorkspaceMcpConfig(this.host.workspaceFolder)
      : Promise.resolve({ servers: {}, inputs: [], origin: {} });
    return this.workspaceCatalog;
  }

  async find(
    name: string,
  ): Promise<{ definition: ServerDefinition; catalog: ServerCatalog } | undefined> {
    this.settingCatalog ??= parseServersSetting(this.host.settingServers ?? {});
    const fromSetting = this.settingCatalog.servers[name];
    if (fromSetting) return { definition: fromSetting, catalog: this.settingCatalog };
    const ws = await this.workspace();
    const fromWorkspace = ws.servers[name];
    return fromWorkspace ? { definition: fromWorkspace, catalog: ws } : undefined;
  }
}
