import { runCli } from '../../src/cli/program';

/** What one `rehearse` invocation printed and returned. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
  /** stderr as lines. */
  errLines: string[];
}

/** Runs the CLI in-process with colour off: its exit code and each write to either stream. */
export async function cliWrites(
  argv: string[],
): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    color: false,
  });
  return { code, out, err };
}

/** Runs the CLI in-process with colour off, capturing both streams. */
export async function rehearse(...argv: string[]): Promise<CliRun> {
  const { code, out, err } = await cliWrites(argv);
  const errText = err.join('\n');
  return {
    code,
    out: out.join('\n'),
    err: errText,
    errLines: errText === '' ? [] : errText.split('\n'),
  };
}
