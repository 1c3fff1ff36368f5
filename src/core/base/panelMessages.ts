import { z } from 'zod';

/**
 * The validator of a webview panel's messages from its zod schema: the message, or undefined for
 * anything malformed (the host logs and drops it). Every panel's page is outside input.
 */
export function panelMessageParser<S extends z.ZodTypeAny>(
  schema: S,
): (value: unknown) => z.infer<S> | undefined {
  return (value) => {
    const parsed = schema.safeParse(value);
    return parsed.success ? (parsed.data as z.infer<S>) : undefined;
  };
}

/** The schema of the page's `ready` notification (see `panelProtocol.ts`). */
export const readyMessageSchema = z.object({ type: z.literal('ready') });

/** The schema of a request's envelope (see `panelProtocol.ts`) around the schema of its `{ method, ...params }`. */
export function requestMessageSchema<R extends z.ZodTypeAny>(request: R) {
  return z.object({ type: z.literal('request'), id: z.number().int().nonnegative(), request });
}
