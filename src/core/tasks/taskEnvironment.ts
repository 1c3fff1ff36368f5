import type { EnvironmentHost } from '../env/openEnvironment';
import { openEnvironment } from '../env/openEnvironment';
import type { ToolEnvironment } from '../env/toolEnvironment';
import type { LoadedTask } from './format/taskFile';

/** Opens the environment a task names: its servers, its allow-list, its call timeout. Nothing starts yet. */
export function openTaskEnvironment(
  loaded: LoadedTask,
  host: EnvironmentHost = {},
): Promise<ToolEnvironment> {
  const { task } = loaded;
  return openEnvironment(
    task.servers,
    { baseDir: loaded.baseDir, allowTools: task.tools, callTimeoutMs: task.limits?.callTimeoutMs },
    host,
  );
}
