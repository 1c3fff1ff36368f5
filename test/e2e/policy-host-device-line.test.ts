// Noise read as faults (issue 39): on a machine without a GPU, onnxruntime's provider bridge and
// Dawn print an error and a warning to the policy host's stderr each time it tries cuda and webgpu.
// The user sees one line saying which device runs the policy and why; what the probes printed is
// shown only when asked (--verbose, the output channel at Debug), and no crash message quotes it.
// Written for any machine: the device line's form is asserted, not that the device is the CPU.
import * as assert from 'node:assert/strict';
import { runCli } from '../../src/cli/program';
import { delayMs } from '../../src/core/base/timers';
import { PolicyHostClient } from '../../src/core/policy/hostClient';
import type { DeviceReport } from '../../src/core/policy/onnx/device';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { rejects } from '../support/errors';
import { ensurePolicyHostBundle } from '../support/servers';
import { randomTestModel } from '../support/testModels';

/** What onnxruntime's provider bridge and Dawn print while a provider is tried. */
const PROBE_NOISE =
  /provider_bridge_ort|ONNXRuntimeError|libonnxruntime_providers|Couldn't load Vulkan|BackendVk\.cpp|\u001b\[/;

/** The one device line: the device, then `as set` or auto's reasons for the devices before it. */
const DEVICE_LINE = /^device: (cpu|cuda|webgpu) \((as set|auto; .+)\)$/;

/** Reasons a failed device's probe printed something (here: the provider library, no Vulkan). */
const PRINTED_REASON = /CUDA provider libraries are not installed|no Vulkan loader/;

/** The devices whose failure reason says their probe printed why (none on a machine with CUDA). */
function noisyDevices(report: DeviceReport): string[] {
  return report.attempts
    .filter((a) => !a.ok && PRINTED_REASON.test(a.reason ?? ''))
    .map((a) => a.device);
}

describe('policy host: one device line, the probes out of sight', function () {
  this.timeout(120_000);
  let modelDir = '';

  before(async function () {
    this.timeout(300_000);
    ensurePolicyHostBundle();
    modelDir = await randomTestModel(1);
  });

  it("device auto: the host's log is one device line naming the devices not used, and no probe output", async () => {
    const log: string[] = [];
    const host = await PolicyHostClient.start({
      modelDir,
      device: 'auto',
      log: (l) => log.push(l),
    });
    try {
      assert.deepEqual(
        log.filter((l) => PROBE_NOISE.test(l)),
        [],
      );
      const lines = log.filter((l) => l.startsWith('device:'));
      assert.equal(lines.length, 1, log.join('\n'));
      assert.match(lines[0], DEVICE_LINE);
      assert.ok(lines[0].startsWith(`device: ${host.device.device} (auto`), lines[0]);
      for (const a of host.device.attempts.filter((x) => !x.ok))
        assert.ok(lines[0].includes(`${a.device} not used: ${a.reason}`), lines[0]);
    } finally {
      host.dispose();
    }
  });

  it('asked for the probes (verbose), each line is shown as `probe <device>: ...`, and a device not used for a missing library says so', async () => {
    const log: string[] = [];
    const probes: string[] = [];
    const host = await PolicyHostClient.start({
      modelDir,
      device: 'auto',
      log: (l) => log.push(l),
      probeLog: (l) => probes.push(l),
    });
    try {
      for (const line of probes) assert.match(line, /^probe (cuda|webgpu|cpu): .*\S/);
      assert.deepEqual(
        probes.filter((l) => /\u001b/.test(l)),
        [],
        'colour codes removed',
      );
      for (const device of noisyDevices(host.device))
        assert.ok(
          probes.some((l) => l.startsWith(`probe ${device}: `)),
          `${device}'s probe printed nothing: ${probes.join('\n')}`,
        );
      assert.deepEqual(
        log.filter((l) => PROBE_NOISE.test(l)),
        [],
      );
    } finally {
      host.dispose();
    }
  });

  it('a host killed after it started: the crash message quotes none of the probe output', async () => {
    const host = await PolicyHostClient.start({ modelDir, device: 'auto' });
    try {
      process.kill(host.pid!, 'SIGKILL');
      const err = await rejects(
        host.generate({
          messages: [{ role: 'user', content: 'Hello' }],
          tools: [],
          n: 1,
          maxTokens: 4,
          sampling: GREEDY,
        }),
      );
      assert.equal(err.code, 'POLICY_HOST_CRASHED');
      assert.match(err.message, /^The policy host exited \(signal SIGKILL\)/);
      assert.doesNotMatch(err.message, PROBE_NOISE);
    } finally {
      host.dispose();
    }
  });

  it('rehearse serve: stderr has the device line and no probe output; with --verbose the probe lines too', async () => {
    const serve = async (verbose: boolean) => {
      const out: string[] = [];
      const err: string[] = [];
      const argv = ['serve', '--policy', modelDir, '--port', '0', '--device', 'auto'];
      const serving = runCli(verbose ? [...argv, '--verbose'] : argv, {
        out: (s) => out.push(s),
        err: (s) => err.push(...s.split('\n')),
        color: false,
      });
      try {
        for (let i = 0; i < 1200 && out.length === 0; i++) await delayMs(50);
        const device = /^Serving .* on (cpu|cuda|webgpu) at /.exec(out[0] ?? '')?.[1];
        assert.ok(device, `serve printed: ${out.join('\n')}\n${err.join('\n')}`);
        return { device, err };
      } finally {
        process.emit('SIGINT');
        assert.equal(await serving, 0);
      }
    };
    const quiet = await serve(false);
    assert.deepEqual(
      quiet.err.filter((l) => PROBE_NOISE.test(l) || l.startsWith('probe ')),
      [],
    );
    assert.deepEqual(
      quiet.err.filter((l) => l.startsWith('device:')).map((l) => DEVICE_LINE.test(l)),
      [true],
      quiet.err.join('\n'),
    );
    const verbose = await serve(true);
    assert.equal(verbose.err.filter((l) => l.startsWith('device:')).length, 1);
    // Where a device was not used for want of a library, its probe said so, and --verbose shows it.
    const skipped = /^device: \S+ \(auto; (.*)\)$/.exec(
      verbose.err.find((l) => l.startsWith('device:'))!,
    )?.[1];
    for (const device of ['cuda', 'webgpu'])
      if (new RegExp(`${device} not used: [^;]*(${PRINTED_REASON.source})`).test(skipped ?? ''))
        assert.ok(
          verbose.err.some((l) => l.startsWith(`probe ${device}: `)),
          verbose.err.join('\n'),
        );
  });
});
