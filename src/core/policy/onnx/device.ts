/** Where the policy runs. `auto` tries cuda, then webgpu, then cpu. */
export type DeviceSetting = 'auto' | 'cpu' | 'cuda' | 'webgpu';

/** A concrete device. */
export type Device = Exclude<DeviceSetting, 'auto'>;

/** One device tried while loading, and why it was not used. */
export interface DeviceAttempt {
  device: Device;
  ok: boolean;
  reason?: string;
}

/** Which device runs the policy, and why the others did not. */
export interface DeviceReport {
  device: Device;
  attempts: DeviceAttempt[];
}

/** The devices to try for a setting, in order. */
export function devicesToTry(setting: DeviceSetting): Device[] {
  return setting === 'auto' ? ['cuda', 'webgpu', 'cpu'] : [setting];
}

/** onnxruntime's execution provider for a device. */
export function executionProvider(device: Device): string {
  return device;
}

/**
 * The known cause in onnxruntime's or Dawn's text of a device that did not load (a missing library,
 * no Vulkan loader), as a short reason; undefined when the text names none of them.
 */
export function knownDeviceFailure(device: Device, message: string): string | undefined {
  if (device === 'cuda') {
    if (
      /Failed to load shared library|providers_shared|providers_cuda|cannot open shared object/i.test(
        message,
      )
    ) {
      return 'the CUDA provider libraries are not installed (run "Rehearsal: Install GPU Support" or `rehearse gpu install`)';
    }
    if (/CUDA driver|no CUDA-capable device|cudaGetDeviceCount/i.test(message))
      return 'no CUDA GPU or driver found';
    if (/libcudnn|libcublas|libcudart/i.test(message))
      return 'CUDA 12 or cuDNN 9 libraries are missing (see `rehearse gpu install`)';
  }
  if (device === 'webgpu') {
    if (/libvulkan/i.test(message)) return 'no Vulkan loader (libvulkan.so.1) on this machine';
    if (/adapter/i.test(message))
      return 'no WebGPU adapter (no GPU, or its driver offers no Vulkan)';
  }
  return undefined;
}

/** Called before and after each device is tried (the policy host marks its stderr so). */
export type DeviceProbeListener = (device: Device, phase: 'begin' | 'end') => void;

/** A short, actionable reason from onnxruntime's long error text. */
export function explainDeviceFailure(device: Device, message: string): string {
  const known = knownDeviceFailure(device, message);
  if (known) return known;
  const firstLine = message.split('\n').find((l) => l.trim()) ?? message;
  return firstLine.length > 200 ? firstLine.slice(0, 199) + '…' : firstLine;
}

/**
 * The report with each failed device's reason taken from what its probe printed, where that names a
 * cause (Dawn writes "Couldn't load Vulkan: libvulkan.so.1" to stderr, while the error it throws
 * says only that no adapter was found).
 */
export function withProbeReasons(
  report: DeviceReport,
  probeText: (device: Device) => string,
): DeviceReport {
  return {
    device: report.device,
    attempts: report.attempts.map((a) => {
      const known = a.ok ? undefined : knownDeviceFailure(a.device, probeText(a.device));
      return known ? { ...a, reason: known } : a;
    }),
  };
}

/**
 * The one line that says which device runs the policy and why:
 * `device: cpu (auto; cuda: the CUDA provider libraries are not installed ...; webgpu: ...)`.
 */
export function describeDeviceChoice(setting: DeviceSetting, report: DeviceReport): string {
  if (setting !== 'auto') return `device: ${report.device} (as set)`;
  const skipped = report.attempts
    .filter((a) => !a.ok)
    .map((a) => `${a.device} not used: ${a.reason ?? 'failed'}`);
  return `device: ${report.device} (auto; ${skipped.length ? skipped.join('; ') : 'the first it tries'})`;
}
