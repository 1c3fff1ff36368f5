import { execFile, spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../base/errors';

/** One thing CUDA inference needs, and whether it was found. */
export interface GpuRequirement {
  name: string;
  found: boolean;
  detail: string;
}

/** What is present for the `cuda` device, and what is missing. */
export interface GpuSupportReport {
  ready: boolean;
  requirements: GpuRequirement[];
}

function ortBinaryDir(): string {
  const pkg = require.resolve('onnxruntime-node/package.json');
  return path.join(path.dirname(pkg), 'bin', 'napi-v6', process.platform, process.arch);
}

function sharedLibraries(): Promise<string> {
  return new Promise((resolve) => {
    execFile('ldconfig', ['-p'], { timeout: 5000 }, (err, stdout) => resolve(err ? '' : stdout));
  });
}

async function findLibrary(names: string[], ldcache: string): Promise<string | undefined> {
  const dirs = (process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean);
  for (const name of names) {
    const line = ldcache.split('\n').find((l) => l.trim().startsWith(name));
    if (line) return line.split('=>').pop()?.trim();
    for (const d of dirs) if (existsSync(path.join(d, name))) return path.join(d, name);
  }
  return undefined;
}

/** Checks the driver, CUDA 12, cuDNN 9 and onnxruntime's CUDA provider libraries. */
export async function checkGpuSupport(): Promise<GpuSupportReport> {
  const requirements: GpuRequirement[] = [];
  let driver: string | undefined;
  try {
    driver = (await fs.readFile('/proc/driver/nvidia/version', 'utf8')).split('\n')[0];
  } catch {
    /* no NVIDIA kernel driver */
  }
  requirements.push({
    name: 'NVIDIA driver',
    found: !!driver,
    detail: driver ?? 'not found (/proc/driver/nvidia/version is absent)',
  });
  const ldcache = await sharedLibraries();
  const cudart = await findLibrary(['libcudart.so.12'], ldcache);
  const cublas = await findLibrary(['libcublas.so.12'], ldcache);
  requirements.push({
    name: 'CUDA 12 runtime',
    found: !!cudart && !!cublas,
    detail:
      cudart && cublas
        ? `${cudart}, ${cublas}`
        : 'libcudart.so.12 / libcublas.so.12 not found (install CUDA 12, or add its lib folder to LD_LIBRARY_PATH)',
  });
  const cudnn = await findLibrary(['libcudnn.so.9'], ldcache);
  requirements.push({
    name: 'cuDNN 9',
    found: !!cudnn,
    detail: cudnn ?? 'libcudnn.so.9 not found (install cuDNN 9 for CUDA 12)',
  });
  const dir = ortBinaryDir();
  const providers = ['libonnxruntime_providers_cuda.so', 'libonnxruntime_providers_shared.so'].map(
    (f) => path.join(dir, f),
  );
  const have = providers.filter((f) => existsSync(f));
  requirements.push({
    name: 'onnxruntime CUDA provider',
    found: have.length === providers.length,
    detail:
      have.length === providers.length
        ? dir
        : `missing in ${dir}: run "Rehearsal: Install GPU Support" or \`rehearse gpu install\``,
  });
  return { ready: requirements.every((r) => r.found), requirements };
}

/**
 * Runs onnxruntime-node's own installer with `--onnxruntime-node-install=cuda12`, which downloads the
 * CUDA provider libraries (they are too large for the npm package). Progress lines go to `onOutput`.
 */
export async function installGpuSupport(
  onOutput: (line: string) => void,
  signal?: AbortSignal,
): Promise<GpuSupportReport> {
  const script = path.join(
    path.dirname(require.resolve('onnxruntime-node/package.json')),
    'script',
    'install.js',
  );
  if (!existsSync(script))
    throw new StudioError(
      'GPU_INSTALLER_MISSING',
      `onnxruntime-node's installer is missing (${script}); reinstall the studio.`,
    );
  const env = { ...process.env };
  // A project .npmrc may say "skip"; the flag below must win.
  delete env.ONNXRUNTIME_NODE_INSTALL;
  delete env.npm_config_onnxruntime_node_install;
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, [script, '--onnxruntime-node-install=cuda12'], {
      cwd: path.dirname(path.dirname(script)),
      env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
      signal,
    });
    const forward = (chunk: Buffer) =>
      chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim())
        .forEach(onOutput);
    child.stdout.on('data', forward);
    child.stderr.on('data', forward);
    child.on('error', reject);
    child.on('exit', resolve);
  });
  const report = await checkGpuSupport();
  if (code !== 0) {
    throw new StudioError(
      'GPU_INSTALL_FAILED',
      `The CUDA provider download failed (exit ${code}); it needs access to the onnxruntime release feed. Missing now: ${
        report.requirements
          .filter((r) => !r.found)
          .map((r) => r.name)
          .join(', ') || 'nothing'
      }.`,
    );
  }
  return report;
}
