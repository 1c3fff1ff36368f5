// Bundles the extension, the CLI, the recipes, the webviews and the built-in MCP
// servers with esbuild.
// `--watch` rebuilds on change; `--servers` builds only the servers (dist/servers/<domain>.js);
// `--policy-host` only the policy host (dist/policy-host.js). Tests use both to need no full build.
import { build, context } from 'esbuild';
import { readFileSync, readdirSync, existsSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url)));
const watch = process.argv.includes('--watch');
const serversOnly = process.argv.includes('--servers');
const policyHostOnly = process.argv.includes('--policy-host');
const common = {
  bundle: true,
  sourcemap: true,
  logLevel: 'warning',
  define: { STUDIO_VERSION: JSON.stringify(pkg.version) },
  // jsonc-parser's default (UMD) build loads its parts with dynamic requires that esbuild cannot follow.
  alias: { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' },
};
// Native and very large packages stay outside the bundles and load from node_modules.
const nodeExternals = ['vscode', 'onnxruntime-node', '@huggingface/transformers', 'sharp'];

const webviews = existsSync('webview')
  ? readdirSync('webview', { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(`webview/${d.name}/main.ts`))
      .map((d) => d.name)
  : [];

// Each built-in domain (src/servers/<domain>/main.ts) is its own stdio server process.
const servers = existsSync('src/servers')
  ? readdirSync('src/servers', { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(`src/servers/${d.name}/main.ts`))
      .map((d) => d.name)
  : [];
const serverConfigs = servers.map((name) => ({
  ...common,
  entryPoints: [`src/servers/${name}/main.ts`],
  outfile: `dist/servers/${name}.js`,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
}));

// The reference MCP servers the sample tasks use (`{ "builtin": "filesystem" }`, `"memory"`), bundled
// from their npm packages so that the CLI and the installed extension carry them: ES modules (they
// read import.meta.url), with a `require` for the CommonJS parts of their dependencies.
const referenceServers = [
  ['filesystem', '@modelcontextprotocol/server-filesystem'],
  ['memory', '@modelcontextprotocol/server-memory'],
].filter(([, pkgName]) => existsSync(`node_modules/${pkgName}/dist/index.js`));
serverConfigs.push(
  ...referenceServers.map(([name, pkgName]) => ({
    ...common,
    define: {},
    alias: {},
    entryPoints: [`node_modules/${pkgName}/dist/index.js`],
    outfile: `dist/servers/${name}.mjs`,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    banner: {
      js: "import { createRequire as __studioRequire } from 'node:module'; const require = __studioRequire(import.meta.url);",
    },
  })),
);

// The policy host bundles transformers.js (tokenizer and chat template); only onnxruntime-node
// (native) stays outside, and sharp (images, never used here) is replaced by a stub.
const policyHostConfig = {
  ...common,
  entryPoints: ['src/core/policy/hostMain.ts'],
  outfile: 'dist/policy-host.js',
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  external: ['onnxruntime-node'],
  alias: { ...common.alias, sharp: './scripts/stubs/sharp.cjs' },
};

const configs =
  serversOnly || policyHostOnly
    ? [...(serversOnly ? serverConfigs : []), ...(policyHostOnly ? [policyHostConfig] : [])]
    : [
        {
          ...common,
          entryPoints: ['src/extension/extension.ts'],
          outfile: 'dist/extension.js',
          platform: 'node',
          format: 'cjs',
          target: 'node20',
          external: nodeExternals,
        },
        {
          ...common,
          entryPoints: ['src/cli/main.ts'],
          outfile: 'dist/cli.js',
          platform: 'node',
          format: 'cjs',
          target: 'node20',
          external: nodeExternals,
          banner: { js: '#!/usr/bin/env node' },
        },
        policyHostConfig,
        // The recipes (src/recipes/: train:default, measure:*), `node dist/recipes.js <recipe>`.
        {
          ...common,
          entryPoints: ['src/recipes/main.ts'],
          outfile: 'dist/recipes.js',
          platform: 'node',
          format: 'cjs',
          target: 'node20',
          external: nodeExternals,
        },
        ...webviews.map((name) => ({
          ...common,
          entryPoints: [`webview/${name}/main.ts`],
          outfile: `dist/webview/${name}.js`,
          platform: 'browser',
          format: 'iife',
          target: 'es2022',
        })),
        ...serverConfigs,
      ];

if (watch) {
  for (const c of configs) await (await context(c)).watch();
  console.log('watching', configs.length, 'bundles');
} else {
  await Promise.all(configs.map((c) => build(c)));
}
