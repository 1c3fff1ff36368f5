// `npm run package [-- --target <platform-arch>] [--out <file.vsix>]`: the .vsix for one platform (default: this one),
// with the extension, CLI and policy-host bundles, the built-in servers, and onnxruntime-node's CPU
// binaries for that platform only (its CUDA providers are never in the npm package; DirectML and
// other GPU libraries are left out too; the webgpu provider is inside the CPU library).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const args = process.argv.slice(2);
const target =
  args[args.indexOf('--target') + 1] && args.includes('--target')
    ? args[args.indexOf('--target') + 1]
    : `${process.platform === 'win32' ? 'win32' : process.platform}-${process.arch}`;
const [platform, arch] = target.split('-');
const BIN = {
  'linux-x64': 'linux/x64',
  'linux-arm64': 'linux/arm64',
  'darwin-arm64': 'darwin/arm64',
  'win32-x64': 'win32/x64',
  'win32-arm64': 'win32/arm64',
}[target];
if (!BIN) {
  console.error(
    `No onnxruntime-node binaries for ${target}; targets: linux-x64, linux-arm64, darwin-arm64, win32-x64, win32-arm64.`,
  );
  process.exit(2);
}
const base = readFileSync('.vscodeignore', 'utf8');
const runtime = [
  '!node_modules/onnxruntime-node/package.json',
  '!node_modules/onnxruntime-node/dist/**',
  '!node_modules/onnxruntime-node/lib/**',
  `!node_modules/onnxruntime-node/bin/napi-v6/${BIN}/**`,
  `node_modules/onnxruntime-node/bin/napi-v6/${BIN}/DirectML.dll`,
  `node_modules/onnxruntime-node/bin/napi-v6/${BIN}/dx*.dll`,
  '!node_modules/onnxruntime-common/**',
].join('\n');
const ignoreFile = path.join(os.tmpdir(), `rehearsal-vscodeignore-${target}`);
writeFileSync(ignoreFile, `${base}\n# onnxruntime-node for ${platform}-${arch}\n${runtime}\n`);
const out = args.includes('--out')
  ? args[args.indexOf('--out') + 1]
  : `rehearsal-studio-${target}.vsix`;
rmSync(out, { force: true });
// Dependencies are bundled by esbuild, except onnxruntime-node (native) which the ignore file selects.
const result = spawnSync(
  process.execPath,
  [
    path.join('node_modules', '@vscode', 'vsce', 'vsce'),
    'package',
    '--target',
    target,
    '--ignoreFile',
    ignoreFile,
    '--out',
    out,
    '--allow-missing-repository',
    '--no-rewrite-relative-links',
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
