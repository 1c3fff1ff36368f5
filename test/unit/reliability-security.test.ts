// Security promises: nothing runs that should not. Workspace trust gates every command that starts a
// process, sends a key or writes; each webview page has a strict CSP with a nonce; ids cannot name a
// path outside .rehearsal/; child processes get argument vectors, never a shell; an endpoint key
// lives in secret storage and never reaches a trace; the training preview is exactly what runs.
// The editor tier checks trust in a real untrusted workspace (test/editor/uiChecks.ts, "untrusted:
// ..."); what needs real MCP servers or a launched process is an end-to-end test
// (test/e2e/reliability-security-processes.test.ts).
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import ts from 'typescript';
import { appendAnnotationEvent, readAnnotations } from '../../src/core/annotations/store';
import { StudioError } from '../../src/core/base/errors';
import { isValidId } from '../../src/core/trace/format/ids';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { serializeTraceEvent } from '../../src/core/trace/format/writer';
import { buildMessageHtml, buildWebviewHtml, newNonce } from '../../src/extension/webviewHtml';
import { sampleShadowRun } from '../builders/samples';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

const REPO = repoRoot();
const read = (...p: string[]) => readFileSync(path.join(REPO, ...p), 'utf8');

/** Every .ts/.mjs/.js file under the given repository folders. */
function sourceFiles(...folders: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full);
      else if (/\.(ts|mjs|js)$/.test(e.name)) out.push(full);
    }
  };
  for (const f of folders) if (existsSync(path.join(REPO, f))) walk(path.join(REPO, f));
  return out;
}

/** The text of the handler registered for `command` in `file`, with the bodies of local helpers it calls by name. */
function handlerText(file: string, command: string): string {
  const text = read(file);
  const at = text.indexOf(`registerCommand('${command}'`);
  assert.ok(at >= 0, `${file} registers ${command}`);
  const next = text.indexOf('registerCommand(', at + 1);
  const handler = text.slice(at, next < 0 ? undefined : next);
  const helper = /registerCommand\('[^']+',\s*(\w+)\(/.exec(handler)?.[1];
  if (!helper) return handler;
  const def = text.indexOf(`const ${helper} =`);
  assert.ok(def >= 0, `${file} defines ${helper}`);
  return handler + text.slice(def, text.indexOf('\n  };', def));
}

describe('security: workspace trust', () => {
  it('every command that starts a process, stores a key or writes annotations is refused in an untrusted workspace', () => {
    const gated: [string, string[]][] = [
      [
        'src/extension/features/runs/registerRuns.ts',
        [
          'rehearsal.runTask',
          'rehearsal.runTaskPrivate',
          'rehearsal.replayTrace',
          'rehearsal.selectPolicy',
          'rehearsal.setEndpointApiKey',
        ],
      ],
      [
        'src/extension/features/annotations/registerAnnotations.ts',
        [
          'rehearsal.markFidelityError',
          'rehearsal.acceptRehearsal',
          'rehearsal.editAnnotation',
          'rehearsal.deleteAnnotation',
        ],
      ],
      ['src/extension/features/runs/registerGpu.ts', ['rehearsal.installGpuSupport']],
      ['src/extension/features/runs/registerJudge.ts', ['rehearsal.setJudgeApiKey']],
    ];
    for (const [file, commands] of gated) {
      for (const command of commands)
        assert.match(
          handlerText(file, command),
          /ensureTrusted\(|workspace\.isTrusted/,
          `${command} is not gated on workspace trust`,
        );
    }
  });

  it('the settings that name a program or an endpoint are restricted configurations', () => {
    const manifest = JSON.parse(read('package.json')) as {
      capabilities: {
        untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] };
      };
      contributes: { configuration: { properties: Record<string, unknown> } };
    };
    const trust = manifest.capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, 'limited');
    const namesAProgram = Object.keys(manifest.contributes.configuration.properties).filter((k) =>
      /servers|policy\.(kind|modelFolder|endpoint)|judge\.(endpoint|model)|trainer\.python/.test(k),
    );
    assert.deepEqual([...trust.restrictedConfigurations].sort(), namesAProgram.sort());
  });
});

describe('security: webview pages', () => {
  /** Every page the extension renders into a webview, built as the extension builds it. */
  const pages = () => [
    buildWebviewHtml({
      title: 'Trajectory e1 · <run>',
      cspSource: 'https://webview.example',
      nonce: newNonce(),
      scriptUri: 'https://webview.example/dist/webview/trajectory.js',
      styleUris: ['https://webview.example/media/webview/trajectory.css'],
    }),
    buildMessageHtml(
      'Trajectory',
      'This Trajectory panel cannot be restored. <script>alert(1)</script>',
    ),
  ];

  it('the extension sets webview HTML only through the CSP page builders', () => {
    const assignments = sourceFiles('src/extension').flatMap((f) =>
      [...read(path.relative(REPO, f)).matchAll(/\.html\s*=\s*([^;]+);/g)].map((m) => [
        path.relative(REPO, f),
        m[1],
      ]),
    );
    assert.ok(assignments.length >= 2);
    for (const [file, rhs] of assignments)
      assert.match(
        rhs,
        /^build(Webview|Message)Html\(/,
        `${file} sets webview HTML directly: ${rhs.slice(0, 80)}`,
      );
  });

  it('each rendered page: default-src none, scripts only by nonce, no eval or inline code, every script tag carries the nonce', () => {
    for (const html of pages()) {
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/
        .exec(html)?.[1]
        ?.replace(/&#39;/g, "'");
      assert.ok(csp, 'a CSP meta tag');
      assert.equal(html.match(/Content-Security-Policy/g)?.length, 1);
      const directives = new Map(
        csp
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .map(([n, ...v]) => [n, v]),
      );
      assert.deepEqual(directives.get('default-src'), ["'none'"]);
      const nonce = /'nonce-([^']+)'/.exec(directives.get('script-src')?.join(' ') ?? '')?.[1];
      assert.ok(
        !directives.has('script-src') || (directives.get('script-src')!.length === 1 && nonce),
        `scripts by nonce only: ${csp}`,
      );
      assert.ok(!/unsafe-eval|unsafe-inline|\*/.test(csp), csp);
      for (const [, attrs, body] of html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)) {
        assert.ok(
          nonce && attrs.includes(`nonce="${nonce}"`),
          `a script tag without the page's nonce: ${attrs}`,
        );
        assert.equal(body.trim(), '', 'no inline script');
      }
      assert.ok(!html.includes('<script>alert'), 'text is escaped, not markup');
    }
  });
});

describe('security: ids never name a path outside .rehearsal/', () => {
  const tmp = useTempDir('rehearsal-ids-');
  const NASTY = [
    '..',
    '../x',
    '../../etc/passwd',
    '/etc/passwd',
    'C:\\x',
    'a/b',
    'a\\b',
    '.rehearsal',
    '~',
    '%2e%2e%2f',
    'e1\u2215x',
    'e1\uff0fx',
    '\u202ee1',
    'e1\u200b',
    'é',
    'e\u0301',
    'ｅ1',
    'e1\u0000',
    'e1\n',
    '-rf',
    ' e1',
  ];

  it('a valid id is one path segment inside its folder, for generated and hostile strings', () => {
    const root = path.join(tmp(), '.rehearsal', 'runs');
    const unitText = fc.string({
      unit: fc.constantFrom(
        '.',
        '/',
        '\\',
        ':',
        '-',
        '_',
        'a',
        'Z',
        '0',
        '\u2215',
        '\uff0f',
        '\u202e',
        '\u0000',
        'é',
        '~',
        '%',
        ' ',
      ),
      maxLength: 12,
    });
    fc.assert(
      fc.property(fc.oneof(unitText, fc.constantFrom(...NASTY), fc.string()), (id) => {
        if (!isValidId(id)) return;
        const resolved = path.resolve(root, id);
        assert.equal(path.dirname(resolved), root, id);
        assert.equal(path.basename(resolved), id);
      }),
      { numRuns: 5000 },
    );
    for (const id of NASTY) assert.equal(isValidId(id), false, JSON.stringify(id));
  });

  it('trace and annotation lines whose ids could name paths are skipped by the readers; `rehearse diff --call` refuses them', async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    const events = sampleShadowRun().events;
    const hostile = events
      .filter((e) => e.type === 'call.actual')
      .map((e) => ({ ...e, callId: '../../etc/passwd' }));
    await fs.writeFile(
      file,
      [...events, ...hostile].map((e) => serializeTraceEvent(e) + '\n').join(''),
    );
    const read = await readTraceEvents(file);
    assert.equal(read.events.length, events.length);
    assert.equal(read.skipped.length, hostile.length);
    assert.ok(
      read.skipped.every((s) => /callId must match pattern/.test(s.reason)),
      JSON.stringify(read.skipped[0]),
    );

    const annotations = path.join(tmp(), 'annotations.jsonl');
    await assert.rejects(
      appendAnnotationEvent(annotations, {
        type: 'accept',
        id: 'a1',
        author: 'x',
        callId: '/etc/passwd',
      }),
      (e: unknown) => e instanceof StudioError && e.code === 'INVALID_ANNOTATION',
    );
    await fs.writeFile(
      annotations,
      JSON.stringify({
        v: 1,
        type: 'accept',
        ts: '2026-11-29T12:00:00Z',
        id: '../a1',
        author: 'x',
        callId: 'e1.t1.c1',
      }) + '\n',
    );
    assert.equal((await readAnnotations(annotations)).size, 0);

    for (const call of ['../e1.t1.c1', '/etc/passwd', 'e1\u2215t1']) {
      const r = await rehearse('diff', file, '--call', call);
      assert.notEqual(r.code, 0);
      assert.match(r.err, /Invalid call id/);
    }
  });
});

describe('security: child processes', () => {
  const CHILD_PROCESS_CALLS = new Set([
    'spawn',
    'spawnSync',
    'execFile',
    'execFileSync',
    'exec',
    'execSync',
    'fork',
  ]);

  it('every child process of src/ and scripts/ is started with an argument vector, never a shell or a command string', () => {
    let calls = 0;
    for (const file of sourceFiles('src', 'scripts')) {
      const text = readFileSync(file, 'utf8');
      if (!/child_process/.test(text)) continue;
      const source = ts.createSourceFile(
        file,
        text,
        ts.ScriptTarget.Latest,
        true,
        file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS,
      );
      const imported = new Set<string>();
      source.forEachChild((node) => {
        if (
          ts.isImportDeclaration(node) &&
          /child_process/.test((node.moduleSpecifier as ts.StringLiteral).text)
        ) {
          const clause = node.importClause;
          if (!clause || clause.isTypeOnly) return;
          const bindings = clause.namedBindings;
          assert.ok(
            !clause.name && bindings && ts.isNamedImports(bindings),
            `${file}: import child_process by name, so that its calls can be checked`,
          );
          for (const el of bindings.elements) if (!el.isTypeOnly) imported.add(el.name.text);
        }
      });
      const where = (n: ts.Node) =>
        `${path.relative(REPO, file)}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
      const visit = (node: ts.Node): void => {
        if (
          ts.isCallExpression(node) &&
          ts.isIdentifier(node.expression) &&
          imported.has(node.expression.text) &&
          CHILD_PROCESS_CALLS.has(node.expression.text)
        ) {
          calls++;
          const name = node.expression.text;
          assert.ok(
            !['exec', 'execSync'].includes(name),
            `${where(node)}: ${name} runs a shell command string`,
          );
          const [program, args, options] = node.arguments;
          assert.ok(
            program && !(ts.isStringLiteralLike(program) && /\s/.test(program.text)),
            `${where(node)}: the program is a command line`,
          );
          // An array, or a name holding one (a wrapper's parameter); never text for a shell to split.
          assert.ok(
            args &&
              !ts.isStringLiteralLike(args) &&
              !ts.isTemplateExpression(args) &&
              !ts.isBinaryExpression(args) &&
              !ts.isObjectLiteralExpression(args),
            `${where(node)}: arguments are not an argument vector: ${args?.getText()}`,
          );
          for (const o of [options, ...node.arguments.slice(3)]) {
            if (o && ts.isObjectLiteralExpression(o)) {
              const shell = o.properties.find((p) => p.name && p.name.getText() === 'shell');
              assert.ok(
                !shell || /shell:\s*false/.test(shell.getText()),
                `${where(node)}: ${shell?.getText()}`,
              );
            }
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    assert.ok(calls >= 5, `found ${calls} child process calls`);
  });

  it('MCP stdio servers are started by the SDK without a shell', () => {
    const stdio = read(
      'node_modules',
      '@modelcontextprotocol',
      'sdk',
      'dist',
      'cjs',
      'client',
      'stdio.js',
    );
    assert.match(stdio, /shell:\s*false/);
    assert.ok(!/shell:\s*true/.test(stdio));
  });
});

describe('security: the endpoint key', () => {
  it('no setting holds a key, token or password: the key lives in secret storage (or the environment)', () => {
    const manifest = JSON.parse(read('package.json')) as {
      contributes: { configuration: { properties: Record<string, unknown> } };
    };
    assert.deepEqual(
      Object.keys(manifest.contributes.configuration.properties).filter((k) =>
        /key|token|secret|password|credential/i.test(k),
      ),
      [],
    );
    const runs =
      read('src', 'extension', 'features', 'runs', 'registerRuns.ts') +
      read('src', 'extension', 'features', 'runs', 'policyPicker.ts');
    for (const m of runs.matchAll(/secrets\.(store|get|delete)\(([^,)]+)/g))
      assert.match(m[2], /^apiKeySecret\(/, `secret storage used under another key: ${m[0]}`);
    assert.ok(
      !/getConfiguration\([^)]*\)\.update\([^)]*[Kk]ey/.test(runs),
      'a key is never written to settings',
    );
    // The judge's key: under its own name, per endpoint, never in a setting.
    const judge = read('src', 'extension', 'features', 'runs', 'registerJudge.ts');
    const judgeKeys = [...judge.matchAll(/secrets\.(store|get|delete)\(([^,)]+)/g)];
    assert.equal(judgeKeys.length, 2, 'Set Judge API Key stores and deletes the key');
    for (const m of judgeKeys)
      assert.match(m[2], /^judgeApiKeySecret\(/, `secret storage used under another key: ${m[0]}`);
    assert.ok(!/\.update\(/.test(judge), 'the judge key is never written to settings');
  });
});
