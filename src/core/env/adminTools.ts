/**
 * The admin-tool convention. A server may offer tools whose names start with
 * {@link ADMIN_TOOL_PREFIX}; the environment never shows them to the agent and refuses agent calls to
 * them. Two are understood (docs/task-format.md, "Admin tools"):
 * - `rehearsal__reset` `{ "seed": integer }`: put the server in the clean state of that seed. With it,
 *   one server process serves many episodes; without it, each episode gets a fresh process.
 * - `rehearsal__snapshot` `{}`: the server's state as JSON (`structuredContent`, or JSON text), used
 *   by final-state checks.
 * - `rehearsal__user__<name>`: a tool of the task's user, not the agent's (τ²'s telecom user acts on its
 *   own phone): the runner calls it for the user in the loop ({@link USER_TOOL_PREFIX}).
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

/**
 * Prefix of the user's own tools (τ²'s dual control: telecom's user toggles airplane mode on its
 * phone): `rehearsal__user__toggle_airplane_mode` is the user's `toggle_airplane_mode`. Admin tools,
 * so never offered to the agent; the runner calls them for the task's user in the loop.
 */
export const USER_TOOL_PREFIX = `${ADMIN_TOOL_PREFIX}user__`;

/** The user's tool a server offers under `name`, or undefined when `name` is not one. */
export function userToolName(name: string): string | undefined {
  return name.startsWith(USER_TOOL_PREFIX) && name.length > USER_TOOL_PREFIX.length
    ? name.slice(USER_TOOL_PREFIX.length)
    : undefined;
}
