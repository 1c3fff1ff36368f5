import { runCli } from '../../src/cli/program';

/** What one `rehearse` invocation printed and returned. */
export interface CliRun {
  code: number;
  out: string;
  err: string;
  /** stderr as lines. */
  errLines: string[];
}

/** Runs the CLI in-process with colour off, capturing both streams. */
export async function rehearse(...argv: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    color: false,
  });
  const errText = err.join('\n');
  return {
    code,
    out: out.join('\n'),
    err: errText,
    errLines: errText === '' ? [] : errText.split('\n'),
  };
}
