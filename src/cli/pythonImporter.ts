import { spawn } from 'node:child_process';
import { studioRoot } from '../core/base/studioRoot';
import type { CliIO } from './io';

/** The JSON summary an importer prints as its last line (trainer/bfcl, trainer/tau2). */
export interface ImporterSummary {
  tasks?: number;
  skipped?: number;
  out?: string;
}

/**
 * Runs a Python importer (`python <argv>`, from the studio's folder), passing each line of its stderr
 * on as it comes (skipped records, coded errors); resolves its exit code and the JSON summary of its
 * last stdout line (empty when that line is not one).
 */
export async function runPythonImporter(
  python: string,
  argv: string[],
  io: CliIO,
): Promise<{ code: number | null; summary: ImporterSummary }> {
  const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>(
    (resolve, reject) => {
      const child = spawn(python, argv, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, PYTHONPATH: studioRoot() },
      });
      let text = '';
      let partial = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        text = (text + d).slice(-100_000);
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        const lines = (partial + d).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) io.err(line);
      });
      child.on('error', reject);
      child.on('close', (c) => {
        if (partial.trim()) io.err(partial);
        resolve({ code: c, stdout: text });
      });
    },
  );
  const last = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return { code, summary: JSON.parse(last) as ImporterSummary };
  } catch {
    return { code, summary: {} };
  }
}
