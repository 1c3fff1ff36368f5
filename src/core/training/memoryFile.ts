import { readFile, stat } from 'node:fs/promises';
import { StudioError } from '../base/errors';
import { isJsonObject } from '../base/json';
import { parseStrictJson } from '../protocol/strictJson';
import { memoryContext } from '../runner/privateRehearsal';

/** At most this many bytes of a memory file: it is read whole. */
export const MAX_MEMORY_FILE_BYTES = 64 * 2 ** 20;
/** At most this many UTF-8 bytes of one memory (an `outcomes` memory is at most 1,200). */
export const MAX_MEMORY_BYTES = 8192;
/** Memories kept a task, as `--memory-from` keeps them (the later ones are left out). */
export const MEMORIES_PER_TASK = 4;

const usage = (message: string) => new StudioError('USAGE', message);

/**
 * The memories of a memory file (`rehearse export --memory-file`), by task: each as the context a
 * committed episode reads it ({@link memoryContext}), at most `perTask` a task. The file is JSONL,
 * one `{"task": "<task id>", "memory": "<text>"}` a line (blank lines skipped): memories a recipe
 * made rather than recorded, such as an `outcomes` memory built from a write's true outcome. A line
 * that is not such an object, a memory of more than {@link MAX_MEMORY_BYTES} or a file of more than
 * {@link MAX_MEMORY_FILE_BYTES} is a usage error naming it.
 */
export async function readMemoryFile(
  file: string,
  perTask = MEMORIES_PER_TASK,
): Promise<Map<string, string[]>> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    throw usage(`--memory-file ${file} cannot be read: check the path.`);
  }
  if (size > MAX_MEMORY_FILE_BYTES)
    throw usage(
      `--memory-file ${file} is ${(size / 2 ** 20).toFixed(0)} MiB; a memory file is read up to ${MAX_MEMORY_FILE_BYTES / 2 ** 20} MiB: split it and export the parts.`,
    );
  const memories = new Map<string, string[]>();
  for (const [i, line] of (await readFile(file, 'utf8')).split('\n').entries()) {
    if (!line.trim()) continue;
    const where = `--memory-file ${file}, line ${i + 1}`;
    const parsed = parseStrictJson(line);
    const value = parsed.ok ? parsed.value : undefined;
    const task = isJsonObject(value) ? value['task'] : undefined;
    const memory = isJsonObject(value) ? value['memory'] : undefined;
    if (typeof task !== 'string' || !task || typeof memory !== 'string' || !memory.trim())
      throw usage(`${where}: expected {"task": "<task id>", "memory": "<text>"}.`);
    if (Buffer.byteLength(memory, 'utf8') > MAX_MEMORY_BYTES)
      throw usage(`${where}: the memory is longer than ${MAX_MEMORY_BYTES} bytes.`);
    const list = memories.get(task) ?? [];
    if (list.length < perTask) memories.set(task, [...list, memoryContext(memory)]);
  }
  return memories;
}
