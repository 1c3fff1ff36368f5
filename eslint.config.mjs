// Layering is enforced here, as Jupyter's zones do: only src/extension may import `vscode`.
import tseslint from 'typescript-eslint';

const noVscode = {
  'no-restricted-imports': ['error', {
    paths: [{ name: 'vscode', message: 'Only src/extension/ may import vscode (see DESIGN.md, Layers).' }],
    patterns: [{ group: ['**/extension/**', '**/extension'], message: 'The core, CLI, servers and webviews must not depend on the extension layer.' }],
  }],
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'out/**', 'dist/**', '.vscode-test/**', '.device/**', '.rehearsal/**', 'test-results/**', 'test/fixtures/**', 'trainer/**', 'models/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'eqeqeq': ['error', 'always', { null: 'ignore' }],
    },
  },
  { files: ['src/core/**/*.ts', 'src/cli/**/*.ts', 'src/servers/**/*.ts', 'webview/**/*.ts'], rules: noVscode },
  {
    // Type-aware: a promise nobody awaits, returns or marks with `void` is a lint error, not a habit.
    files: ['src/**/*.ts', 'webview/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error', '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }] },
  },
  { files: ['**/*.mjs', '**/*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
