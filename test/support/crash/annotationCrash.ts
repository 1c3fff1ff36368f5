import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { appendAnnotationEvent, readAnnotations } from '../../../src/core/annotations/store';
import { errorMessage } from '../../../src/core/base/errors';
import type { CrashReport } from './kill';
import { checkOnlyTornLastLine, killDelays, killGroup, newCrashReport, startGroup } from './kill';

const MARKS = 400;
const WRITER = path.join(__dirname, 'annotationWriterMain.js');

/**
 * Kills a process that is appending annotations with SIGKILL at `kills` random moments, and checks
 * each file: it reads, every mark whose append had resolved is there, the marks kept are `a1..aN`
 * with no gap, only a torn last line is ever skipped, and a mark appended afterwards reads back.
 */
export async function crashAnnotations(options: {
  kills: number;
  seed: number;
  scratch: string;
}): Promise<CrashReport> {
  const report = newCrashReport();
  const delay = killDelays(options.seed);
  const t0 = performance.now();
  const full = startGroup(
    [process.execPath, WRITER, path.join(options.scratch, 'full.jsonl'), String(MARKS)],
    { cwd: options.scratch },
  );
  await full.exited;
  const fullMs = performance.now() - t0;

  for (let k = 0; k < options.kills; k++) {
    const file = path.join(options.scratch, `killed-${k}.jsonl`);
    const wait = delay(fullMs);
    const started = startGroup([process.execPath, WRITER, file, String(MARKS)], {
      cwd: options.scratch,
    });
    const acked: string[] = [];
    let partial = '';
    started.child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.startsWith('ack ')) acked.push(l.slice(4));
    });
    await new Promise((r) => setTimeout(r, wait));
    killGroup(started.child.pid);
    await started.exited;
    report.kills++;
    report.killDelaysMs.push(wait);
    const where = `kill ${k + 1} (after ${wait} ms, seed ${options.seed})`;
    try {
      await checkKilledAnnotations(file, acked, where, report);
    } catch (err) {
      report.violations.push(`${where}: ${errorMessage(err)}`);
    }
    await fs.rm(file, { force: true });
  }
  await fs.rm(path.join(options.scratch, 'full.jsonl'), { force: true });
  return report;
}

async function checkKilledAnnotations(
  file: string,
  acked: readonly string[],
  where: string,
  report: CrashReport,
): Promise<void> {
  const text = await fs.readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) {
    if (acked.length)
      report.violations.push(`${where}: ${acked.length} marks acknowledged, but no file`);
    else report.killedBeforeWriting++;
    return;
  }
  const set = await readAnnotations(file);
  const lines = text.split('\n').filter((l) => l.trim() !== '').length;
  checkOnlyTornLastLine(set.skipped, lines, where, report);
  const kept = new Set(set.all().map((a) => a.id));
  const lost = acked.filter((id) => !kept.has(id));
  if (lost.length)
    report.violations.push(`${where}: acknowledged marks lost: ${lost.slice(0, 5).join(', ')}`);
  // Three appends are in flight at a time, each alone in the file's queue: what is kept is a1..aN.
  for (let n = 1; n <= kept.size; n++)
    if (!kept.has(`a${n}`)) {
      report.violations.push(`${where}: a${n} is missing among ${kept.size} kept marks`);
      break;
    }
  report.recordsChecked += kept.size;

  await appendAnnotationEvent(file, {
    type: 'accept',
    id: 'after-crash',
    author: 'crash-test',
    callId: 'e1.t1.c1',
  });
  const after = await readAnnotations(file);
  if (after.size !== kept.size + 1 || !after.get('after-crash'))
    report.violations.push(`${where}: a mark appended after the crash is not read back`);
}
