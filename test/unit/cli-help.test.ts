import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { rehearse } from '../support/cli';
import { assertGolden } from '../support/golden';
import { fromRoot } from '../support/paths';

const GOLDEN_FOLDER = 'cli-help';

/** The subcommand names a help text lists under `Commands:` (without `help`). */
function listedCommands(help: string): string[] {
  const section = help.split('\nCommands:\n')[1];
  if (section === undefined) return [];
  const names: string[] = [];
  for (const line of section.split('\n')) {
    if (!line.startsWith('  ')) break;
    const match = /^ {2}([a-z][\w-]*)/.exec(line);
    if (match && match[1] !== 'help') names.push(match[1]);
  }
  return names;
}

/** The golden file of a command path: `root.txt`, `import_envace.txt`. */
function goldenName(command: string[]): string {
  return `${command.length === 0 ? 'root' : command.join('_')}.txt`;
}

describe('rehearse --help', () => {
  // Commander wraps help at the terminal's width when stdout is a TTY; the goldens are at its
  // default of 80 columns, as a pipe gets them.
  let wasTTY: boolean | undefined;
  before(() => {
    wasTTY = process.stdout.isTTY;
    Object.defineProperty(process.stdout, 'isTTY', { value: false, configurable: true });
  });
  after(() => {
    Object.defineProperty(process.stdout, 'isTTY', { value: wasTTY, configurable: true });
  });

  it('prints the help of every command and subcommand as its golden file says', async () => {
    const seen: string[] = [];
    const walk = async (command: string[]): Promise<void> => {
      const r = await rehearse(...command, '--help');
      assert.equal(r.code, 0, `${command.join(' ')} --help: ${r.err}`);
      assert.equal(r.err, '', `${command.join(' ')} --help wrote to stderr`);
      seen.push(goldenName(command));
      await assertGolden(`${GOLDEN_FOLDER}/${goldenName(command)}`, `${r.out}\n`);
      for (const sub of listedCommands(r.out)) await walk([...command, sub]);
    };
    await walk([]);
    assert.ok(seen.includes('import_envace.txt'), `nested commands walked: ${seen.join(', ')}`);
    // A command that was removed leaves a golden behind: the goldens are exactly the commands.
    const goldens = await fs.readdir(fromRoot('test', 'golden', GOLDEN_FOLDER));
    assert.deepEqual(goldens.sort(), seen.sort());
  });
});
