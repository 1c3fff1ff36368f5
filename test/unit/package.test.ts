import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type ParseError, parse as parseJsonc } from 'jsonc-parser';
import { COMMAND_CATEGORY, COMMANDS, VIEWS } from '../../src/extension/commands';
import { fromRoot } from '../support/paths';

interface Manifest {
  main: string;
  contributes: {
    commands: { command: string; title: string; category?: string; icon?: string }[];
    viewsContainers: { activitybar: { id: string }[] };
    views: Record<string, { id: string }[]>;
    viewsWelcome?: { view: string }[];
    menus: Record<string, { command: string; when?: string }[]>;
  };
}

const manifest = JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as Manifest;
const contributed = manifest.contributes.commands;

describe('package.json contributions match src/extension/commands.ts', () => {
  it('contributes every command of COMMANDS with its title, icon and the Rehearsal category', () => {
    for (const [id, spec] of Object.entries(COMMANDS)) {
      const c = contributed.find((x) => x.command === id);
      assert.ok(c, `${id} is not contributed in package.json`);
      assert.equal(c.title, spec.title, `title of ${id}`);
      assert.equal(c.category, COMMAND_CATEGORY, `category of ${id}`);
      assert.equal(c.icon, spec.icon, `icon of ${id}`);
    }
    assert.equal(COMMAND_CATEGORY, 'Rehearsal');
  });

  it('contributes no command that COMMANDS does not know', () => {
    const known = new Set(Object.keys(COMMANDS));
    for (const c of contributed)
      assert.ok(known.has(c.command), `${c.command} is contributed but not in COMMANDS`);
    assert.equal(
      new Set(contributed.map((c) => c.command)).size,
      contributed.length,
      'a command is contributed twice',
    );
  });

  it('menus name only known commands and views', () => {
    const known = new Set(Object.keys(COMMANDS));
    const views = new Set<string>(Object.values(VIEWS));
    for (const [menu, items] of Object.entries(manifest.contributes.menus)) {
      for (const item of items) {
        assert.ok(known.has(item.command), `${menu}: unknown command ${item.command}`);
        for (const [, view] of (item.when ?? '').matchAll(/view == ([\w.]+)/g))
          assert.ok(views.has(view), `${menu}: unknown view ${view}`);
      }
    }
  });

  it('every view id in VIEWS exists', () => {
    const containers = manifest.contributes.viewsContainers.activitybar.map((c) => c.id);
    assert.ok(
      containers.includes(VIEWS.container),
      `view container ${VIEWS.container} is not contributed`,
    );
    const views = manifest.contributes.views[VIEWS.container]?.map((v) => v.id) ?? [];
    for (const [name, id] of Object.entries(VIEWS)) {
      if (name === 'container') continue;
      assert.ok(views.includes(id), `view ${id} is not contributed under ${VIEWS.container}`);
    }
    for (const w of manifest.contributes.viewsWelcome ?? [])
      assert.ok(views.includes(w.view), `welcome content for unknown view ${w.view}`);
  });

  it('points main at the bundled extension', () => {
    assert.equal(manifest.main, './dist/extension.js');
  });
});

describe('.vscode: F5 and the build tasks a contributor uses', () => {
  const jsonc = (file: string) => {
    const errors: ParseError[] = [];
    const value = parseJsonc(readFileSync(fromRoot(file), 'utf8'), errors) as unknown;
    assert.deepEqual(errors, [], `${file} does not parse`);
    return value;
  };
  const scripts = (
    JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const tasks = (
    jsonc('.vscode/tasks.json') as { tasks: { label: string; type: string; script: string }[] }
  ).tasks;
  const launches = (
    jsonc('.vscode/launch.json') as {
      configurations: {
        name: string;
        type: string;
        args?: string[];
        program?: string;
        preLaunchTask?: string;
      }[];
    }
  ).configurations;

  it('every task runs an npm script of package.json, and every preLaunchTask is one of the tasks', () => {
    for (const t of tasks)
      assert.ok(
        t.type === 'npm' && scripts[t.script],
        `task "${t.label}" runs no npm script of package.json`,
      );
    for (const c of launches)
      if (c.preLaunchTask)
        assert.ok(
          tasks.some((t) => t.label === c.preLaunchTask),
          `"${c.name}" needs the task "${c.preLaunchTask}"`,
        );
  });

  it('F5 starts an Extension Development Host on this folder, built first, with the bundle the manifest names', () => {
    const host = launches[0];
    assert.equal(host.type, 'extensionHost');
    assert.ok(host.args?.includes('--extensionDevelopmentPath=${workspaceFolder}'));
    assert.equal(tasks.find((t) => t.label === host.preLaunchTask)?.script, 'build');
    assert.match(
      readFileSync(fromRoot('scripts/build.mjs'), 'utf8'),
      new RegExp(`outfile: '${manifest.main.replace(/^\.\//, '')}'`),
      "the build writes the manifest's main",
    );
  });
});
