import { z } from 'zod';
import type { JsonObject } from '../../core/base/json';

/** A refusal by the domain's policy (cancelling a delivered order, overdrawing an account...). */
export class PolicyError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'PolicyError';
  }
}

/** One tool of a domain: pure code over the domain's state, no MCP in sight. */
export interface DomainTool<S> {
  name: string;
  description: string;
  /** Zod shape of the arguments (published to clients as JSON Schema). */
  input: z.ZodRawShape;
  /** For tools that change the state: the id of what they change, logged in the snapshot's `writes`. */
  target?: (args: Record<string, unknown>) => string;
  /** Runs the tool; throws a PolicyError to refuse. */
  run(state: S, args: Record<string, unknown>): JsonObject;
}

/** A built-in domain: a seeded world and the tools that act on it. */
export interface Domain<S> {
  name: string;
  version: string;
  /** The world of a seed. */
  createState(seed: number): S;
  /** The world as JSON, for grading. */
  snapshot(state: S): JsonObject;
  tools: DomainTool<S>[];
}

/** A successful write, as the snapshot's `writes` lists it. */
export interface WriteRecord {
  tool: string;
  target: string;
}

/** What a tool call gave: a result, or a refusal with its code. */
export type ToolOutcome =
  { ok: true; value: JsonObject } | { ok: false; error: { code: string; message: string } };

/**
 * A domain's state for one episode, with the log of successful writes. Used by the MCP server and,
 * without any process, by tests.
 */
export class DomainSession<S> {
  private state: S;
  private writes: WriteRecord[] = [];
  private readonly schemas = new Map<string, z.ZodObject<z.ZodRawShape>>();

  constructor(
    private readonly domain: Domain<S>,
    seed: number,
  ) {
    this.state = domain.createState(seed);
    for (const t of domain.tools) this.schemas.set(t.name, z.object(t.input));
  }

  /** Starts again from the world of `seed`. */
  reset(seed: number): void {
    this.state = this.domain.createState(seed);
    this.writes = [];
  }

  /** Calls a tool with arguments already validated by the MCP server (validated again here for direct use). */
  call(name: string, args: Record<string, unknown>): ToolOutcome {
    const tool = this.domain.tools.find((t) => t.name === name);
    if (!tool)
      return { ok: false, error: { code: 'UNKNOWN_TOOL', message: `Unknown tool: ${name}` } };
    const parsed = this.schemas.get(name)!.safeParse(args);
    if (!parsed.success)
      return {
        ok: false,
        error: {
          code: 'INVALID_ARGUMENTS',
          message: parsed.error.issues
            .map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`)
            .join('; '),
        },
      };
    try {
      const value = tool.run(this.state, parsed.data as Record<string, unknown>);
      if (tool.target)
        this.writes.push({
          tool: name,
          target: tool.target(parsed.data as Record<string, unknown>),
        });
      return { ok: true, value };
    } catch (err) {
      if (err instanceof PolicyError)
        return { ok: false, error: { code: err.code, message: err.message } };
      throw err;
    }
  }

  /** The world and the writes so far. */
  snapshot(): JsonObject {
    return { ...this.domain.snapshot(this.state), writes: this.writes.map((w) => ({ ...w })) };
  }
}
