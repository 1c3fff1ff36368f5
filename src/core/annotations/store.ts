import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../base/errors';
import { jsonLineKeysFirst } from '../base/json';
import { openForWrite, removeInside, writeFileInside, writeRootOf } from '../base/writePath';
import { ANNOTATIONS_FILE } from '../trace/format/discover';
import { readLines } from '../trace/format/lineReader';
import { cannotBeJsonObject, TORN_LAST_LINE } from '../trace/format/reader';
import { AnnotationSet } from './annotationSet';
import type { AnnotationEvent, NewAnnotationEvent } from './schema';
import { ANNOTATION_SCHEMA_VERSION } from './schema';
import { validateAnnotationEvent } from './validate';
import { delayMs } from '../base/timers';

/** The annotations file of a trace: `annotations.jsonl` beside `trace.jsonl`. */
export function annotationsFileFor(traceFile: string): string {
  return path.join(path.dirname(traceFile), ANNOTATIONS_FILE);
}

/** A new annotation id, sortable by time: `a-<base36 ms>-<hex>`. */
export function newAnnotationId(now: Date = new Date()): string {
  return `a-${now.getTime().toString(36)}-${randomBytes(3).toString('hex')}`;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads an annotations file and folds its events into the current set. A missing file is an empty
 * set. Torn, corrupt or invalid lines, and events about annotations that do not exist, are skipped
 * and counted with their line numbers, never fatal.
 */
export async function readAnnotations(file: string): Promise<AnnotationSet> {
  const set = new AnnotationSet();
  let info;
  try {
    info = await fs.lstat(file);
  } catch {
    return set;
  }
  if (info.isSymbolicLink() || !info.isFile()) throw notRegularFile(file, info.isSymbolicLink());
  if (info.size > MAX_ANNOTATIONS_BYTES) {
    throw new StudioError(
      'ANNOTATIONS_TOO_LARGE',
      `${file} is ${Math.round(info.size / 2 ** 20)} MiB; annotation files are read up to ${MAX_ANNOTATIONS_BYTES / 2 ** 20} MiB. Move it aside to start a new one (the trace is not affected).`,
    );
  }
  try {
    for await (const raw of readLines(file, { maxLineBytes: 1024 * 1024 })) {
      const skip = (reason: string) => set.skip({ line: raw.line, offset: raw.offset, reason });
      if (raw.oversized) {
        skip(`line too long (${raw.length} bytes)`);
        continue;
      }
      if (cannotBeJsonObject(raw.bytes)) {
        skip(raw.terminated ? 'not valid JSON' : TORN_LAST_LINE);
        continue;
      }
      let text: string;
      try {
        text = utf8.decode(raw.bytes);
      } catch {
        skip('invalid UTF-8');
        continue;
      }
      if (text.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        skip(raw.terminated ? 'not valid JSON' : TORN_LAST_LINE);
        continue;
      }
      const version = (value as { v?: unknown } | null)?.v;
      if (typeof version === 'number' && version > ANNOTATION_SCHEMA_VERSION) {
        skip(
          `written by a newer studio (annotation schema v${version}); update Rehearsal Studio to read it`,
        );
        continue;
      }
      const checked = validateAnnotationEvent(value);
      if (!checked.ok) {
        skip(`not a valid annotation event: ${checked.reason}`);
        continue;
      }
      const why = set.apply(checked.event);
      if (why) skip(why);
    }
  } catch (err) {
    throw new StudioError(
      'ANNOTATIONS_UNREADABLE',
      `Cannot read ${file}: ${(err as Error).message}.`,
    );
  }
  return set;
}

/** Largest annotations file read (a person marking calls writes kilobytes; a million marks are ~300 MiB). */
export const MAX_ANNOTATIONS_BYTES = 512 * 2 ** 20;

/**
 * The studio reads and writes annotations only in a regular file of its own beside the trace, never
 * through a link (which could point at a device that never ends, or at a file outside the workspace).
 */
function notRegularFile(file: string, link: boolean): StudioError {
  return new StudioError(
    'ANNOTATIONS_NOT_A_FILE',
    `${file} is ${link ? 'a symbolic link' : 'not a regular file'}; annotations are kept only in a regular file beside the trace. Move it aside (the trace is not affected) and mark again.`,
  );
}

// One append at a time per file, so that concurrent marks never interleave their bytes.
const queues = new Map<string, Promise<void>>();

/**
 * Appends one event to an annotations file (created with its folder if needed) and resolves once it
 * is on disk. A torn last line left by a crash is ended first, so that it stays one skipped line.
 * Invalid events are refused with a coded error.
 */
export function appendAnnotationEvent(
  file: string,
  event: NewAnnotationEvent,
): Promise<AnnotationEvent> {
  const full = {
    v: ANNOTATION_SCHEMA_VERSION,
    ts: event.ts ?? new Date().toISOString(),
    ...event,
  } as AnnotationEvent;
  const checked = validateAnnotationEvent(full);
  if (!checked.ok)
    return Promise.reject(
      new StudioError(
        'INVALID_ANNOTATION',
        `Refusing to write an invalid ${full.type} annotation: ${checked.reason}`,
      ),
    );
  const line = serializeAnnotationEvent(full) + '\n';
  const previous = queues.get(file) ?? Promise.resolve();
  const next = previous
    .catch(() => undefined)
    .then(async () => {
      try {
        // O_NOFOLLOW: a link in the file's place is refused, not followed; so is a folder on the
        // way that links out of the `.rehearsal` the run lies in.
        let handle;
        try {
          handle = await openForWrite(writeRootOf(path.dirname(file)), file, 'a+');
        } catch (err) {
          if (err instanceof StudioError && err.details?.['link']) throw notRegularFile(file, true);
          throw err;
        }
        try {
          const stat = await handle.stat();
          if (!stat.isFile()) throw notRegularFile(file, false);
          const { size } = stat;
          let prefix = '';
          if (size > 0) {
            const last = Buffer.alloc(1);
            await handle.read(last, 0, 1, size - 1);
            if (last[0] !== 0x0a) prefix = '\n';
          }
          await handle.appendFile(prefix + line, 'utf8');
          await handle.datasync();
        } finally {
          await handle.close();
        }
      } catch (err) {
        if (err instanceof StudioError) throw err;
        throw new StudioError(
          'ANNOTATION_WRITE_FAILED',
          `Could not write to ${file}: ${(err as Error).message}. Annotations already written are kept.`,
        );
      }
    });
  queues.set(file, next);
  void next
    .finally(() => {
      if (queues.get(file) === next) queues.delete(file);
    })
    .catch(() => undefined);
  return next.then(() => full);
}

/** How long `withAnnotationsLock` waits for another holder before it gives up. */
const LOCK_WAIT_MS = 60_000;

/**
 * Runs `work` while holding `<annotations file>.lock` (created exclusively, holding this process's id),
 * so that two commands that read the annotations and then mark (two `rehearse annotate --mismatches`
 * on one run) do so one after the other instead of both marking every call. A lock whose process is
 * gone is taken over; one held longer than a minute is an error that names the holder.
 */
export async function withAnnotationsLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const root = writeRootOf(path.dirname(file));
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await writeFileInside(root, lock, `${process.pid}\n`, { flags: 'wx' });
      break;
    } catch (err) {
      if (err instanceof StudioError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST')
        throw new StudioError(
          'ANNOTATION_WRITE_FAILED',
          `Could not create ${lock}: ${(err as Error).message}.`,
        );
    }
    const holder = Number((await fs.readFile(lock, 'utf8').catch(() => '')).trim());
    const alive =
      Number.isInteger(holder) &&
      holder > 0 &&
      (() => {
        try {
          process.kill(holder, 0);
          return true;
        } catch (e) {
          return (e as NodeJS.ErrnoException).code === 'EPERM';
        }
      })();
    if (!alive) {
      await removeInside(root, lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new StudioError(
        'ANNOTATIONS_BUSY',
        `Another command (process ${holder}) is marking calls of this run (${lock}); wait for it, or delete the lock file if no such process runs.`,
      );
    }
    await delayMs(100);
  }
  try {
    return await work();
  } finally {
    await removeInside(root, lock, { force: true });
  }
}

const HEADER_KEYS = ['v', 'type', 'ts', 'id', 'author', 'callId', 'episodeId', 'tool'] as const;

/** Serialises an event as one line, header keys first (as trace lines are). */
export function serializeAnnotationEvent(event: AnnotationEvent): string {
  return jsonLineKeysFirst(event, HEADER_KEYS);
}
