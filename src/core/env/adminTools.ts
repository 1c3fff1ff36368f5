/**
 * The admin-tool convention. A server may offer tools whose names start with
 * {@link ADMIN_TOOL_PREFIX}; the environment never shows them to the agent and refuses agent calls to
 * them. Two are understood (docs/task-format.md, "Admin tools"):
 * - `rehearsal__reset` `{ "seed": integer }`: put the server in the clean state of that seed. With it,
 *   one server process serves many episodes; without it, each episode gets a fresh process.
 * - `rehearsal__snapshot` `{}`: the server's state as JSON (`structuredContent`, or JSON text), used
 *   by final-state checks.
 */
export const ADMIN_TOOL_PREFIX = 'rehearsal__';

/** Name of the reset admin tool. */
export const RESET_TOOL = `${ADMIN_TOOL_PREFIX}reset`;

/** Name of the snapshot admin tool. */
export const SNAPSHOT_TOOL = `${ADMIN_TOOL_PREFIX}snapshot`;

/** True for names reserved for admin tools. */
export function isAdminTool(name: string): boolean {
  return name.startsWith(ADMIN_TOOL_PREFIX);
}
