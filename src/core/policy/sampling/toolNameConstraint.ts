/**
 * Decoding constrained to the offered tool names (as vLLM's guided decoding constrains a tool call):
 * while a sample writes the `"name"` of a `<tool_call>` block, only tokens that keep the name a
 * prefix of an offered tool's name, or end it exactly with its closing quote, may be drawn. Outside
 * a name nothing is constrained.
 */

const NAME_IN_OPEN_CALL = /<tool_call>\s*\{\s*"name"\s*:\s*"([^"\\]*)$/;

/**
 * The tokens a sample may draw next, given its text so far; undefined when nothing is constrained
 * (not inside a tool call's name, or a name no offered tool starts with).
 */
export function allowedNameTokens(
  text: string,
  names: readonly string[],
  pieces: readonly string[],
): Set<number> | undefined {
  const open = text.lastIndexOf('<tool_call>');
  if (open < 0 || text.indexOf('</tool_call>', open) >= 0) return undefined;
  const partial = NAME_IN_OPEN_CALL.exec(text.slice(open))?.[1];
  if (partial === undefined) return undefined;
  const candidates = names.filter((n) => n.startsWith(partial));
  if (candidates.length === 0) return undefined;
  const allowed = new Set<number>();
  for (let id = 0; id < pieces.length; id++) {
    const piece = pieces[id];
    if (!piece) continue;
    const next = partial + piece;
    if (candidates.some((n) => n.startsWith(next) || next.startsWith(`${n}"`))) allowed.add(id);
  }
  return allowed.size ? allowed : undefined;
}

/** Sets every logit of the row at `offset` outside `allowed` to -Infinity. */
export function maskLogits(
  logits: Float32Array,
  offset: number,
  size: number,
  allowed: ReadonlySet<number>,
): void {
  for (let id = 0; id < size; id++) if (!allowed.has(id)) logits[offset + id] = -Infinity;
}
