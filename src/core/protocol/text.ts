/**
 * Small text helpers whose behaviour the Python trainer mirrors byte for byte (see
 * `test/vectors/protocol/`). JavaScript's `trim()` and Python's `strip()` disagree on which
 * characters are whitespace, so the studio dialect strips only the ASCII whitespace both agree on
 * (the envace dialect strips Python's set, pythonText.ts).
 */
const ASCII_WS = new Set([' ', '\t', '\n', '\r', '\f', '\v']);

/** Removes leading and trailing ASCII whitespace (space, \t, \n, \r, \f, \v). */
export function stripAsciiWhitespace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && ASCII_WS.has(s[start])) start++;
  while (end > start && ASCII_WS.has(s[end - 1])) end--;
  return s.slice(start, end);
}

/**
 * Every non-overlapping block `open ... close`, leftmost first, each ending at the first `close`
 * after its `open` (the semantics of Python's `re.findall(open + '(.*?)' + close, DOTALL)`), in
 * linear time: a regex with a lazy group is quadratic on hostile input with many unclosed opens.
 */
export function findBlocks(
  text: string,
  open: string,
  close: string,
): { start: number; end: number; inner: string }[] {
  const blocks: { start: number; end: number; inner: string }[] = [];
  let from = 0;
  for (;;) {
    const start = text.indexOf(open, from);
    if (start < 0) break;
    const innerStart = start + open.length;
    const closeAt = text.indexOf(close, innerStart);
    if (closeAt < 0) break; // no later open can be closed either
    const end = closeAt + close.length;
    blocks.push({ start, end, inner: text.slice(innerStart, closeAt) });
    from = end;
  }
  return blocks;
}

/** Removes every complete `open ... close` block (leftmost, shortest), like `re.sub` with a lazy group. */
export function removeBlocks(text: string, open: string, close: string): string {
  const blocks = findBlocks(text, open, close);
  if (blocks.length === 0) return text;
  let out = '';
  let at = 0;
  for (const b of blocks) {
    out += text.slice(at, b.start);
    at = b.end;
  }
  return out + text.slice(at);
}
