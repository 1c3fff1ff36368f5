import { checkGpuSupport, installGpuSupport } from '../../core/policy/gpuSupport';
import type { GpuSupportReport } from '../../core/policy/gpuSupport';
import type { CliIO } from '../io';

function render(report: GpuSupportReport): string {
  const lines = report.requirements.map(
    (r) => `${r.found ? 'found  ' : 'MISSING'}  ${r.name}: ${r.detail}`,
  );
  lines.push(
    report.ready
      ? 'The cuda device is ready.'
      : 'The cuda device is not ready; the policy runs on webgpu or cpu meanwhile (rehearsal.policy.device = auto).',
  );
  return lines.join('\n');
}

/** `rehearse gpu check`: what CUDA inference needs, found or missing. */
export async function gpuCheckCommand(io: CliIO): Promise<number> {
  const report = await checkGpuSupport();
  io.out(render(report));
  return report.ready ? 0 : 1;
}

/** `rehearse gpu install`: runs onnxruntime-node's CUDA 12 installer, then checks again. */
export async function gpuInstallCommand(io: CliIO): Promise<number> {
  io.err('Downloading the onnxruntime CUDA 12 provider libraries (onnxruntime-node installer)...');
  const report = await installGpuSupport((line) => io.err(`  ${line}`));
  io.out(render(report));
  return report.ready ? 0 : 1;
}
