import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import type { StudioError } from '../../src/core/base/errors';
import {
  choiceRehearses,
  describePolicyChoice,
  openPolicyFor,
  policyChoiceFromSettings,
  settingsForPolicy,
} from '../../src/core/runner/policyChoice';
import { defaultModelFolder } from '../../src/core/base/studioRoot';
import { RunStatus } from '../../src/core/runner/runStatus';
import { fromRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

describe('policy choice', () => {
  const tmp = useTempDir();

  it('reads the choice from settings, resolving a relative model folder against the workspace', () => {
    assert.deepEqual(policyChoiceFromSettings({}), { kind: 'default' });
    assert.deepEqual(policyChoiceFromSettings({ kind: 'reference' }), { kind: 'reference' });
    assert.deepEqual(
      policyChoiceFromSettings({ kind: 'modelFolder', modelFolder: 'models/mine' }, '/w'),
      { kind: 'modelFolder', folder: '/w/models/mine' },
    );
    assert.deepEqual(
      policyChoiceFromSettings({
        kind: 'endpoint',
        endpointUrl: ' http://127.0.0.1:8000/v1 ',
        endpointModel: 'qwen',
      }),
      { kind: 'endpoint', url: 'http://127.0.0.1:8000/v1', model: 'qwen' },
    );
  });

  it('says which setting to fill when a choice cannot be used', () => {
    const fails = (values: Parameters<typeof policyChoiceFromSettings>[0], re: RegExp) =>
      assert.throws(
        () => policyChoiceFromSettings(values),
        (e: StudioError) => e.code === 'POLICY_NOT_CONFIGURED' && re.test(e.message),
      );
    fails({ kind: 'modelFolder' }, /rehearsal\.policy\.modelFolder is empty/);
    fails({ kind: 'endpoint', endpointUrl: 'http://x' }, /endpoint\.url or \.model is empty/);
    fails({ kind: 'gpt' }, /must be one of default, modelFolder, endpoint, reference/);
  });

  it('names choices for the status bar and knows which rehearse', () => {
    assert.equal(describePolicyChoice({ kind: 'default' }), 'default model');
    assert.equal(
      describePolicyChoice({ kind: 'modelFolder', folder: '/m/ckpt-7' }),
      'model ckpt-7',
    );
    assert.equal(
      describePolicyChoice({ kind: 'endpoint', url: 'http://x', model: 'qwen' }),
      'endpoint qwen',
    );
    assert.equal(choiceRehearses({ kind: 'reference' }), false);
    assert.equal(choiceRehearses({ kind: 'default' }), true);
    assert.equal(defaultModelFolder(), fromRoot('models', 'default'));
  });

  it('starts the reference policy in process, and refuses a model folder that does not exist', async () => {
    const policy = await openPolicyFor({ kind: 'reference' }, { tasks: [] });
    assert.equal(policy.info.kind, 'reference');
    policy.dispose();
    await assert.rejects(
      openPolicyFor({ kind: 'modelFolder', folder: path.join(tmp(), 'nope') }),
      (e: StudioError) => e.code === 'MODEL_NOT_FOUND' && /Select Policy/.test(e.message),
    );
  });

  it("brings a model folder's rehearsal_config.json under what was chosen", async () => {
    await fs.writeFile(
      path.join(tmp(), 'rehearsal_config.json'),
      JSON.stringify({
        rehearsePrompt: { profile: 'compact' },
        maxTokens: { act: 256, rehearse: 200 },
      }),
    );
    const merged = await settingsForPolicy(
      { kind: 'modelFolder', folder: tmp() },
      { episodesPerTask: 2, maxTokens: { act: 100, rehearse: 384 } },
    );
    assert.equal(merged.episodesPerTask, 2);
    assert.deepEqual(merged.rehearsePrompt, { profile: 'compact' });
    assert.deepEqual(merged.maxTokens, { act: 100, rehearse: 384 });
    assert.deepEqual(await settingsForPolicy({ kind: 'reference' }, { episodesPerTask: 1 }), {
      episodesPerTask: 1,
    });
    await fs.writeFile(
      path.join(tmp(), 'rehearsal_config.json'),
      JSON.stringify({ rehearsePrompt: { profile: 'envace', includeHistory: false } }),
    );
    assert.deepEqual(
      (await settingsForPolicy({ kind: 'modelFolder', folder: tmp() }, {})).rehearsePrompt,
      { profile: 'envace', includeHistory: false },
    );
  });

  it('refuses a rehearsal_config.json whose rehearse prompt names an unknown profile or option, saying which', async () => {
    const file = path.join(tmp(), 'rehearsal_config.json');
    await fs.writeFile(file, JSON.stringify({ rehearsePrompt: { profile: 'tiny' } }));
    await assert.rejects(
      settingsForPolicy({ kind: 'modelFolder', folder: tmp() }, {}),
      (e: StudioError) =>
        e.code === 'MODEL_FILE_BROKEN' &&
        e.message.includes(
          'rehearsePrompt.profile must be general, compact or envace, not "tiny"',
        ) &&
        e.message.includes(file),
    );
    await fs.writeFile(
      file,
      JSON.stringify({ rehearsePrompt: { profile: 'envace', maxExamples: 8 } }),
    );
    await assert.rejects(
      settingsForPolicy({ kind: 'modelFolder', folder: tmp() }, {}),
      (e: StudioError) =>
        e.code === 'MODEL_FILE_BROKEN' &&
        e.message.includes('rehearsePrompt.maxExamples does not apply to the envace profile'),
    );
    await fs.writeFile(file, JSON.stringify({ rehearsePrompt: { compactTools: true } }));
    await assert.rejects(
      settingsForPolicy({ kind: 'modelFolder', folder: tmp() }, {}),
      (e: StudioError) =>
        e.code === 'MODEL_FILE_BROKEN' &&
        /rehearsePrompt\.compactTools is not an option/.test(e.message),
    );
  });
});

describe('run status', () => {
  it('counts generation speed from acts and rehearsals, and the episodes done', () => {
    const status = new RunStatus('default model', 'cpu');
    assert.deepEqual(status.parts(), ['default model', 'cpu', '– tok/s', 'starting']);
    status.observe({
      v: 1,
      ts: 't',
      type: 'turn',
      episodeId: 'e1',
      turnId: 'e1.t1',
      index: 0,
      text: '',
      parse: { kind: 'final', answer: '' },
      tokens: { prompt: 100, completion: 40 },
      latencyMs: 1000,
    });
    status.observe({
      v: 1,
      ts: 't',
      type: 'call.rehearsal',
      episodeId: 'e1',
      turnId: 'e1.t1',
      callId: 'e1.t1.c1',
      tool: 'x',
      arguments: {},
      text: '',
      result: { ok: true, value: 1 },
      tokens: { prompt: 100, completion: 20 },
      latencyMs: 1000,
    });
    status.progress({ done: 1, total: 3, taskId: 'retail-0000' });
    assert.equal(status.tokensPerSecond, 30);
    assert.deepEqual(status.parts(), ['default model', 'cpu', '30.0 tok/s', '1/3 episodes']);
    assert.match(
      status.details(),
      /30\.0 tokens\/s \(60 tokens generated\)\n1 of 3 episodes done · task retail-0000/,
    );
  });
});
