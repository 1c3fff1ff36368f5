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

/** A short, actionable reason from onnxruntime's long error text. */
export function explainDeviceFailure(device: Device, message: string): string {
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
  const firstLine = message.split('\n').find((l) => l.trim()) ?? message;
  return firstLine.length > 200 ? firstLine.slice(0, 199) + '…' : firstLine;
}
