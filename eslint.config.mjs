// Layering is enforced here, as Jupyter's zones do: only src/extension may import `vscode`.
import tseslint from 'typescript-eslint';

const noVscode = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        {
          name: 'vscode',
          message: 'Only src/extension/ may import vscode (see DESIGN.md, Layers).',
        },
      ],
      patterns: [
        {
          group: ['**/extension/**', '**/extension'],
          message: 'The core, CLI, servers and webviews must not depend on the extension layer.',
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
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
