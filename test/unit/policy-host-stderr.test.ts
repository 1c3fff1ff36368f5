// Noise read as faults (issue 39): the policy host's stderr sorted into its own lines and what the
// device probes printed, and the one line that says which device runs the policy and why.
import * as assert from 'node:assert/strict';
import { PROBE_BEGIN, PROBE_END } from '../../src/core/policy/hostProtocol';
import { HostStderr } from '../../src/core/policy/hostStderr';
import type { DeviceReport } from '../../src/core/policy/onnx/device';
import { describeDeviceChoice, withProbeReasons } from '../../src/core/policy/onnx/device';

/** What a host without a GPU writes to stderr while it loads a model on device auto (as captured). */
const LOADING = [
  `${PROBE_BEGIN} cuda`,
  '\u001b[1;31m2026-12-06 18:41:40.736695536 [E:onnxruntime:onnxruntime-node, provider_bridge_ort.cc:2146 Create] Failed to load library libonnxruntime_providers_shared.so with error: libonnxruntime_providers_shared.so: cannot open shared object file: No such file or directory',
  '\u001b[m',
  `${PROBE_END} cuda`,
  `${PROBE_BEGIN} webgpu`,
  "Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file: No such file or directory",
  '    at operator() (/build/Release/_deps/dawn-src/src/dawn/native/vulkan/BackendVk.cpp:368)',
  '',
  `${PROBE_END} webgpu`,
  `${PROBE_BEGIN} cpu`,
  `${PROBE_END} cpu`,
];

const NO_GPU: DeviceReport = {
  device: 'cpu',
  attempts: [
    {
      device: 'cuda',
      ok: false,
      reason: 'the CUDA provider libraries are not installed (run `rehearse gpu install`)',
    },
    {
      device: 'webgpu',
      ok: false,
      reason: 'no WebGPU adapter (no GPU, or its driver offers no Vulkan)',
    },
    { device: 'cpu', ok: true },
  ],
};

function sorted(lines: string[], verbose: boolean) {
  const log: string[] = [];
  const probes: string[] = [];
  const stderr = new HostStderr({
    log: (l) => log.push(l),
    probeLog: verbose ? (l) => probes.push(l) : undefined,
  });
  for (const line of lines) stderr.line(line);
  return { stderr, log, probes };
}

describe("policy host's stderr: its own lines apart from the device probes'", () => {
  it('logs none of what the probes printed, nor the markers; quotes none of it when the host dies', () => {
    const { stderr, log, probes } = sorted([...LOADING, 'a line of the host'], false);
    assert.deepEqual(log, ['a line of the host']);
    assert.deepEqual(probes, []);
    assert.equal(stderr.lastWords('Segmentation fault'), 'a line of the host\nSegmentation fault');
  });

  it('verbose: each probe line once, named by its device, colour codes and blank lines dropped', () => {
    const { probes } = sorted(LOADING, true);
    assert.deepEqual(probes, [
      'probe cuda: 2026-12-06 18:41:40.736695536 [E:onnxruntime:onnxruntime-node, provider_bridge_ort.cc:2146 Create] Failed to load library libonnxruntime_providers_shared.so with error: libonnxruntime_providers_shared.so: cannot open shared object file: No such file or directory',
      "probe webgpu: Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file: No such file or directory",
      'probe webgpu:     at operator() (/build/Release/_deps/dawn-src/src/dawn/native/vulkan/BackendVk.cpp:368)',
    ]);
  });

  it('a host that dies while it tries a device is quoted with that probe: then it is what went wrong', () => {
    const { stderr } = sorted(
      [
        `${PROBE_BEGIN} cuda`,
        'libcudnn.so.9: cannot open',
        `${PROBE_END} cuda`,
        `${PROBE_BEGIN} webgpu`,
        'dawn: lost the device',
      ],
      false,
    );
    assert.equal(stderr.lastWords(), 'dawn: lost the device');
  });

  it('the device line: the device, and on auto why each device before it was not used', () => {
    const { stderr } = sorted(LOADING, false);
    const report = withProbeReasons(NO_GPU, (d) => stderr.probeText(d));
    // Dawn's error says only "no adapter"; what it printed names the missing Vulkan loader.
    assert.equal(report.attempts[1].reason, 'no Vulkan loader (libvulkan.so.1) on this machine');
    assert.equal(
      describeDeviceChoice('auto', report),
      'device: cpu (auto; cuda not used: the CUDA provider libraries are not installed (run "Rehearsal: Install GPU Support" or `rehearse gpu install`); webgpu not used: no Vulkan loader (libvulkan.so.1) on this machine)',
    );
    assert.equal(
      describeDeviceChoice('auto', { device: 'cuda', attempts: [{ device: 'cuda', ok: true }] }),
      'device: cuda (auto; the first it tries)',
    );
    assert.equal(
      describeDeviceChoice('cpu', { device: 'cpu', attempts: [{ device: 'cpu', ok: true }] }),
      'device: cpu (as set)',
    );
    // A probe that printed nothing known leaves the host's reason as it was.
    assert.deepEqual(
      withProbeReasons(NO_GPU, () => ''),
      NO_GPU,
    );
  });
});
