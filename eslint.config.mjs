// Layering is enforced here, as Jupyter's zones do: only src/extension may import `vscode`, and
// nothing but the recipes' own entry imports src/recipes/.
import tseslint from 'typescript-eslint';

const vscodePath = {
  name: 'vscode',
  message: 'Only src/extension/ may import vscode (see ARCHITECTURE.md, Layers).',
};
const notExtension = {
  group: ['**/extension/**', '**/extension'],
  message: 'The core, CLI, servers, recipes and webviews must not depend on the extension layer.',
};
// The recipes (src/recipes/) are a layer above the core: only their entry (main.ts, bundled to
// dist/recipes.js) starts them, so nothing else in src/ or webview/ may import them (their unit
// test does).
const notRecipes = {
  group: ['**/recipes/**', '**/recipes'],
  message: 'Nothing imports src/recipes/ but its own entry (see ARCHITECTURE.md, Layers).',
};
const noVscode = {
  'no-restricted-imports': ['error', { paths: [vscodePath], patterns: [notExtension, notRecipes] }],
};
// The recipes may import the core and each other, never the CLI, the servers or the editor.
const recipeImports = {
  'no-restricted-imports': [
    'error',
    {
      paths: [vscodePath],
      patterns: [
        notExtension,
        {
          group: ['**/cli/**', '**/cli', '**/servers/**', '**/servers'],
          message:
            'The recipes import only the core; they drive the CLI as a program (dist/cli.js).',
        },
      ],
    },
  ],
};

// The studio's own commands run through registerCommand.ts's executeCommand, typed by commands.ts;
// VS Code's (setContext, workbench.*, vscode.*) stay raw. test/editor drives the editor as a user does.
const rawCommand =
  "CallExpression[callee.object.property.name='commands'][callee.property.name=/^(execute|register)Command$/]";
const typedCommands = {
  'no-restricted-syntax': [
    'error',
    {
      selector: `${rawCommand}[arguments.0.value=/^rehearsal\\./]`,
      message:
        'Run and register rehearsal.* commands through src/extension/registerCommand.ts (typed by commands.ts).',
    },
    {
      selector: `${rawCommand}[arguments.0.quasis.0.value.raw=/^rehearsal\\./]`,
      message:
        'Run and register rehearsal.* commands through src/extension/registerCommand.ts (typed by commands.ts).',
    },
  ],
};

// One write path (docs/reliability.md, "One write path"): every file the studio writes goes through
// src/core/base/writePath.ts, which keeps it inside the workspace's .rehearsal/ or the folder the
// user named. Anywhere else in src/, an fs call that writes, makes, moves or removes is an error;
// opens are allowed for reading only ('r').
const FS_MODULES = new Set(['fs', 'node:fs', 'fs/promises', 'node:fs/promises']);
const FS_WRITES = new Set(
  [
    'writeFile',
    'appendFile',
    'createWriteStream',
    'mkdir',
    'mkdtemp',
    'rename',
    'rm',
    'rmdir',
    'unlink',
    'copyFile',
    'cp',
    'symlink',
    'link',
    'truncate',
    'ftruncate',
    'write',
    'writev',
    'chmod',
    'lchmod',
    'fchmod',
    'chown',
    'lchown',
    'fchown',
    'utimes',
    'lutimes',
    'futimes',
  ].flatMap((n) => [n, `${n}Sync`]),
);
const WRITE_PATH_MESSAGE =
  'Write files through src/core/base/writePath.ts (openForWrite, writeFileInside, mkdirInside, ...): it keeps writes inside .rehearsal/ or the --out the user named.';
const readOnlyOpen = (call) => {
  const flags = call.arguments[1];
  return (
    call.arguments.length < 2 ||
    (flags.type === 'Literal' && typeof flags.value === 'string' && /^rs?$/.test(flags.value))
  );
};
const oneWritePath = {
  meta: { type: 'problem', schema: [], messages: { write: WRITE_PATH_MESSAGE } },
  create(context) {
    const fsObjects = new Set();
    const openNames = new Set();
    return {
      ImportDeclaration(node) {
        if (!FS_MODULES.has(node.source.value) || node.importKind === 'type') return;
        for (const s of node.specifiers) {
          if (s.type !== 'ImportSpecifier') fsObjects.add(s.local.name);
          else if (s.importKind === 'type') continue;
          else if (s.imported.name === 'promises') fsObjects.add(s.local.name);
          else if (FS_WRITES.has(s.imported.name)) context.report({ node: s, messageId: 'write' });
          else if (s.imported.name === 'open' || s.imported.name === 'openSync')
            openNames.add(s.local.name);
        }
      },
      MemberExpression(node) {
        let object = node.object;
        // fs.promises.writeFile
        if (object.type === 'MemberExpression' && object.property.name === 'promises')
          object = object.object;
        if (object.type !== 'Identifier' || !fsObjects.has(object.name)) return;
        const name = node.property.type === 'Identifier' ? node.property.name : node.property.value;
        if (FS_WRITES.has(name)) context.report({ node, messageId: 'write' });
        else if (
          (name === 'open' || name === 'openSync') &&
          !(
            node.parent.type === 'CallExpression' &&
            node.parent.callee === node &&
            readOnlyOpen(node.parent)
          )
        )
          context.report({ node, messageId: 'write' });
      },
      CallExpression(node) {
        if (
          node.callee.type === 'Identifier' &&
          openNames.has(node.callee.name) &&
          !readOnlyOpen(node)
        )
          context.report({ node, messageId: 'write' });
      },
    };
  },
};

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.venv/**',
      'out/**',
      'dist/**',
      '.vscode-test/**',
      '.device/**',
      '.rehearsal/**',
      'test-results/**',
      'test/fixtures/**',
      'trainer/**',
      'models/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    files: ['src/core/**/*.ts', 'src/cli/**/*.ts', 'src/servers/**/*.ts', 'webview/**/*.ts'],
    rules: noVscode,
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [notRecipes] }] },
  },
  { files: ['src/recipes/**/*.ts'], rules: recipeImports },
  {
    // Type-aware: a promise nobody awaits, returns or marks with `void` is a lint error, not a habit.
    files: ['src/**/*.ts', 'webview/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
    },
  },
  { files: ['src/**/*.ts'], rules: typedCommands },
  {
    // One command wrapper: registerCommand.ts shows what a command throws (a StudioError with the
    // action its code names, anything else logged), so no command registers around it.
    files: ['src/extension/**/*.ts'],
    ignores: ['src/extension/registerCommand.ts'],
    rules: {
      'no-restricted-syntax': [
        ...typedCommands['no-restricted-syntax'],
        ...["[callee.object.name='commands']", "[callee.object.property.name='commands']"].map(
          (object) => ({
            selector: `CallExpression${object}[callee.property.name=/^register(TextEditor)?Command$/]`,
            message:
              'Register commands through registerCommand of src/extension/registerCommand.ts: it shows a StudioError with its action and logs any other error.',
          }),
        ),
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
  {
    // Numbers from outside: one timer helper (docs/reliability.md, "Numbers from outside"). Node
    // fires a delay past 2^31 - 1 ms, a negative or a NaN one at once; every timer of src/ is set
    // through safeTimeout/safeInterval/delayMs of src/core/base/timers.ts, which clamp the delay.
    // A rule of its own (not no-restricted-syntax, which other config objects set) and no
    // exemption but the helper itself.
    files: ['src/**/*.ts'],
    ignores: ['src/core/base/timers.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...['setTimeout', 'setInterval'].map((name) => ({
          name,
          message: `Set timers through safeTimeout/safeInterval/delayMs (src/core/base/timers.ts): Node fires a delay past 2^31 - 1 ms, negative or NaN at once.`,
        })),
      ],
    },
  },
  {
    // A function does one thing (STYLE.md, Code): none of src/ runs past 80 lines of code.
    files: ['src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    // One write path: fs writes only in src/core/base/writePath.ts (see oneWritePath above).
    files: ['src/**/*.ts'],
    ignores: ['src/core/base/writePath.ts'],
    plugins: { rehearsal: { rules: { 'one-write-path': oneWritePath } } },
    rules: { 'rehearsal/one-write-path': 'error' },
  },
  // Terminal text: the CLI and the core reach a terminal only through src/cli/io.ts, the recipes
  // only through src/recipes/shared/terminal.ts; every line passes through terminalText (controls
  // shown escaped). Exempt: src/cli/io.ts itself, and
  // what writes a protocol rather than terminal text: the policy host (JSON-RPC on stdout, its
  // console sent to stderr, which the client reads as log lines) and src/servers (MCP servers,
  // outside these globs: their stdio is MCP, their stderr a log the studio reads line by line).
  {
    files: ['src/cli/**/*.ts', 'src/core/**/*.ts', 'src/recipes/**/*.ts'],
    ignores: ['src/cli/io.ts', 'src/core/policy/hostMain.ts', 'src/recipes/shared/terminal.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['stdout', 'stderr'].map((property) => ({
          object: 'process',
          property,
          message: 'Write to the terminal through the CliIO of src/cli/io.ts (terminalText).',
        })),
        {
          object: 'console',
          message: 'Write to the terminal through the CliIO of src/cli/io.ts (terminalText).',
        },
      ],
      'no-restricted-syntax': [
        ...typedCommands['no-restricted-syntax'],
        {
          selector:
            'ImportDeclaration[source.value=/^(node:)?process$/] > ImportSpecifier[imported.name=/^std(out|err)$/]',
          message: 'Write to the terminal through the CliIO of src/cli/io.ts (terminalText).',
        },
      ],
    },
  },
);
