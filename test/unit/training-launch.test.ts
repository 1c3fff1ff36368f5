// Training runs: the run file and its schema, and the exact commands of the three backends. Real
// trainer processes launched through the launcher are end-to-end tests
// (test/e2e/training-launch-processes.test.ts).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { planExport, planLaunch } from '../../src/core/training/launch/backends';
import { parseRunSpec } from '../../src/core/training/launch/runSpec';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';

function specError(text: string): string {
  try {
    parseRunSpec(text, '/w/run.json');
  } catch (err) {
    assert.ok(err instanceof StudioError);
    return err.message;
  }
  assert.fail('the spec was accepted');
}

/**
 * Every override key of EnvACE 173e941's reference launch, examples/drmas_trainer/run_checklist_share.sh
 * (the `key=value` arguments of its `python3 -m verl.trainer.main_ppo` line).
 */
const ENVACE_REFERENCE_KEYS = [
  '+agent.agent_specific_parameters.actor.optim.lr',
  '+agent.agent_specific_parameters.actor.ppo_micro_batch_size_per_gpu',
  '+data.apply_chat_template_kwargs.enable_thinking',
  '+data.max_num_checklist',
  '+data.rollout_max_prompt_length',
  '+data.rollout_truncation',
  '+env.checklist.dataset_path',
  '+env.checklist.judge_api_key',
  '+env.checklist.judge_backend',
  '+env.checklist.max_assistant_turns',
  '+env.checklist.max_model_len',
  '+env.checklist.max_new_tokens',
  '+env.checklist.max_parallel_calls',
  '+env.checklist.max_response_length',
  '+env.checklist.max_tokens',
  '+env.checklist.max_user_turns',
  '+env.checklist.retry_times',
  '+env.checklist.semaphore_size',
  '+env.checklist.sglang_model',
  '+env.checklist.sglang_url',
  '+env.checklist.temperature',
  '+env.checklist.timeout',
  '+env.checklist.tool_max_new_tokens',
  '+env.checklist.tool_max_tokens',
  '+env.checklist.tool_retry_attempts',
  '+env.checklist.tool_return_mode',
  '+env.checklist.tool_semaphore_size',
  '+env.checklist.tool_temperature',
  '+env.checklist.tool_timeout',
  '+env.checklist.tool_top_p',
  '+env.checklist.top_p',
  '+env.checklist.use_caller_incremental',
  'actor_rollout_ref.actor.entropy_coeff',
  'actor_rollout_ref.actor.fsdp_config.optimizer_offload',
  'actor_rollout_ref.actor.fsdp_config.param_offload',
  'actor_rollout_ref.actor.kl_loss_coef',
  'actor_rollout_ref.actor.kl_loss_type',
  'actor_rollout_ref.actor.loss_agg_mode',
  'actor_rollout_ref.actor.optim.lr',
  'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu',
  'actor_rollout_ref.actor.ppo_mini_update_num',
  'actor_rollout_ref.actor.use_adaptive_ppo_mini_batch_size',
  'actor_rollout_ref.actor.use_kl_loss',
  'actor_rollout_ref.model.enable_gradient_checkpointing',
  'actor_rollout_ref.model.path',
  'actor_rollout_ref.model.use_remove_padding',
  'actor_rollout_ref.ref.fsdp_config.param_offload',
  'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu',
  'actor_rollout_ref.rollout.enable_chunked_prefill',
  'actor_rollout_ref.rollout.enforce_eager',
  'actor_rollout_ref.rollout.free_cache_engine',
  'actor_rollout_ref.rollout.gpu_memory_utilization',
  'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu',
  'actor_rollout_ref.rollout.name',
  'actor_rollout_ref.rollout.tensor_model_parallel_size',
  'actor_rollout_ref.rollout.val_kwargs.do_sample',
  'actor_rollout_ref.rollout.val_kwargs.temperature',
  'actor_rollout_ref.rollout.val_kwargs.top_k',
  'actor_rollout_ref.rollout.val_kwargs.top_p',
  'agent.agent_ids',
  'agent.frozen_agent_ids',
  'agent.model_ids',
  'agent.model_sharing',
  'agent.orchestra_type',
  'algorithm.adv_estimator',
  'algorithm.group_by_agent_id',
  'algorithm.norm_adv_by_std_in_grpo',
  'algorithm.use_kl_in_reward',
  'data.custom_cls.name',
  'data.custom_cls.path',
  'data.filter_overlong_prompts',
  'data.max_prompt_length',
  'data.max_response_length',
  'data.prompt_key',
  'data.return_raw_chat',
  'data.shuffle',
  'data.train_batch_size',
  'data.train_files',
  'data.truncation',
  'data.val_batch_size',
  'data.val_files',
  'env.env_name',
  'env.max_steps',
  'env.rollout.n',
  'env.rollout.val_n',
  'env.seed',
  'reward_model.reward_manager',
  'trainer.critic_warmup',
  'trainer.default_local_dir',
  'trainer.experiment_name',
  'trainer.logger',
  'trainer.n_gpus_per_node',
  'trainer.nnodes',
  'trainer.project_name',
  'trainer.rollout_data_dir',
  'trainer.save_freq',
  'trainer.test_freq',
  'trainer.total_epochs',
  'trainer.val_before_train',
  'trainer.val_only',
];

describe('training runs: run file and backends', () => {
  it('names an unknown field, and a wrong hyperparameter, by its JSON path', () => {
    assert.match(
      specError('{"objective":"sft","base":"m","data":{"train":["r"]},"hardware":{"procs":2}}'),
      /\$\.hardware\.procs: unknown field/,
    );
    const spec = parseRunSpec(
      '{"objective":"sft","base":"m","data":{"train":["r"]},"hyperparameters":{"optim":{"lrr":0.1}}}',
      '/w/run.json',
    );
    assert.throws(
      () => planLaunch(spec, 'local'),
      /\$\.hyperparameters\.optim\.lrr: unknown field/,
    );
    assert.match(
      specError('{"objective":"sft","base":"m"}'),
      /\$\.data\.train: sft needs at least one rows file/,
    );
    assert.match(
      specError('{"objective":"ppo","base":"m"}'),
      /\$\.objective: must be equal to one of the allowed values: "sft", "grpo"/,
    );
  });

  it('a run file with many faults is one line on stderr: the first three named, the rest counted', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-run-'));
    const file = path.join(dir, 'bad.run.json');
    await fs.writeFile(
      file,
      JSON.stringify({
        objective: 'sft',
        base: 'm',
        data: { train: ['r'] },
        a: 1,
        b: 2,
        c: 3,
        d: 4,
        e: 5,
      }),
    );
    const r = await rehearse('train', '--config', file, '--dry-run');
    assert.equal(r.code, 2);
    assert.equal(r.errLines.length, 1, r.err);
    assert.match(
      r.errLines[0],
      /^rehearse: \S+bad\.run\.json is not a valid training run: \$\.a: unknown field.*; \$\.c: unknown field[^;]*; and 2 more\.$/,
    );
    await fs.writeFile(file, '{"objective":\n');
    const j = await rehearse('train', '--config', file, '--dry-run');
    assert.equal(j.errLines.length, 1, j.err);
    assert.match(j.errLines[0], /is not valid JSON: /);
    await fs.rm(dir, { recursive: true });
  });

  it("envace: the launch sets every key of EnvACE's reference script (issue 18, row 4)", async () => {
    // tool_caller_agent.py reads +data.rollout_max_prompt_length and +data.rollout_truncation as
    // attributes; missing, Hydra's struct mode stops the launch at the first tool-call step.
    const r = await rehearse(
      'train',
      '--config',
      path.join(repoRoot(), 'examples', 'training', 'envace.run.json'),
      '--backend',
      'envace',
      '--dry-run',
      '--json',
    );
    assert.equal(r.code, 0, r.err);
    const argv = (JSON.parse(r.out) as { plan: { argv: string[] } }).plan.argv;
    const keys = new Set(
      argv.filter((a) => a.includes('=')).map((a) => a.slice(0, a.indexOf('='))),
    );
    assert.deepEqual(
      ENVACE_REFERENCE_KEYS.filter((k) => !keys.has(k)),
      [],
      'keys of the reference launch missing',
    );
    assert.ok(
      argv.includes('env.max_steps=200') &&
        argv.includes('+data.rollout_truncation=left') &&
        argv.includes('+data.apply_chat_template_kwargs.enable_thinking=True'),
    );
  });

  it('local and torchrun: the exact argv, environment and generated trainer config', () => {
    const spec = parseRunSpec(
      JSON.stringify({
        objective: 'sft',
        base: 'models/base',
        data: { train: ['rows.jsonl'] },
        seed: 3,
        hardware: { device: 'cpu', processes: 2, threads: 1 },
        hyperparameters: { train: { steps: 5 }, optim: { lr: 0.01 } },
      }),
      '/w/ws/run.json',
    );
    assert.throws(
      () => planLaunch(spec, 'local', { trainerRoot: '/studio' }),
      /the local backend runs one process\. Use --backend torchrun/,
    );
    const plan = planLaunch(spec, 'torchrun', {
      trainerRoot: '/studio',
      python: '/usr/bin/python3',
      masterPort: 29511,
    });
    assert.deepEqual(plan.argv, [
      '/usr/bin/python3',
      '-m',
      'torch.distributed.run',
      '--nproc_per_node',
      '2',
      '--master_port',
      '29511',
      '--redirects',
      '1',
      '--tee',
      '1',
      '--monitor_interval',
      '0.5',
      '-m',
      'trainer',
      'sft',
      '--config',
      '/w/ws/.rehearsal/training/run/trainer-config.json',
    ]);
    assert.deepEqual(plan.env, { PYTHONPATH: '/studio', OMP_WAIT_POLICY: 'PASSIVE' });
    assert.deepEqual(plan.trainerConfig, {
      seed: 3,
      device: 'cpu',
      threads: 1,
      out_dir: '/w/ws/.rehearsal/training/run',
      model: { path: '/w/ws/models/base' },
      data: { train: ['/w/ws/rows.jsonl'] },
      optim: { lr: 0.01 },
      train: { steps: 5 },
    });
  });

  it("probe and validation pass through to the trainer config, the probe's rows next to the run file", () => {
    const spec = parseRunSpec(
      JSON.stringify({
        objective: 'sft',
        base: 'm',
        data: { train: ['r'] },
        hyperparameters: {
          probe: { every: 5, rows: ['rows/probe.jsonl'] },
          validation: { every: 2, metric: 'success' },
        },
      }),
      '/w/ws/run.json',
    );
    const config = planLaunch(spec, 'local', { python: '/usr/bin/python3' }).trainerConfig!;
    assert.deepEqual(config['probe'], { every: 5, rows: ['/w/ws/rows/probe.jsonl'] });
    assert.deepEqual(config['validation'], { every: 2, metric: 'success' });
    const bad = parseRunSpec(
      JSON.stringify({
        objective: 'sft',
        base: 'm',
        data: { train: ['r'] },
        hyperparameters: { probe: { evry: 5 } },
      }),
      '/w/ws/run.json',
    );
    assert.throws(
      () => planLaunch(bad, 'local'),
      /\$\.hyperparameters\.probe\.evry: unknown field/,
    );
  });

  it("export after the run: the trainer's export of the final model in place, with the spec's export settings", () => {
    const spec = parseRunSpec(
      JSON.stringify({
        objective: 'sft',
        base: 'm',
        data: { train: ['r'] },
        hardware: { threads: 2 },
        hyperparameters: { train: { export_at_end: false }, export: { opset: 17 } },
      }),
      '/w/ws/run.json',
    );
    const plan = planExport(spec, '/w/ws/.rehearsal/training/run/final', {
      trainerRoot: '/studio',
      python: '/usr/bin/python3',
    });
    assert.deepEqual(plan.argv, [
      '/usr/bin/python3',
      '-m',
      'trainer',
      'export',
      '--config',
      '/w/ws/.rehearsal/training/run/export-config.json',
    ]);
    assert.deepEqual(plan.trainerConfig, {
      device: 'cpu',
      threads: 2,
      model: { path: '/w/ws/.rehearsal/training/run/final' },
      export: { opset: 17 },
    });
    assert.deepEqual(plan.env, { PYTHONPATH: '/studio', OMP_WAIT_POLICY: 'PASSIVE' });
    const bad = parseRunSpec(
      JSON.stringify({
        objective: 'sft',
        base: 'm',
        data: { train: ['r'] },
        hyperparameters: { export: { opset: 'new' } },
      }),
      '/w/ws/run.json',
    );
    assert.throws(
      () => planExport(bad, '/f'),
      /\$\.hyperparameters\.export\.opset: must be integer/,
    );
  });

  it('envace: EnvACE launcher options by their real names, the key read on the cluster, nothing run here', async () => {
    const spec = parseRunSpec(
      JSON.stringify({
        name: 'retail-joint',
        objective: 'grpo',
        base: '/cluster/models/Qwen3-8B',
        hardware: { processes: 8, nodes: 2 },
        envace: {
          root: '/opt/EnvACE',
          tool_dataset: '/data/retail.json',
          train_files: '/data/retail.parquet',
          judge: { backend: 'openai', urls: ['https://judge/v1/chat/completions'] },
        },
      }),
      '/w/run.json',
    );
    const plan = planLaunch(spec, 'envace');
    assert.equal(plan.runsHere, false);
    assert.deepEqual(plan.argv.slice(0, 3), ['python3', '-m', 'verl.trainer.main_ppo']);
    for (const option of [
      'data.custom_cls.path=/opt/EnvACE/agent_system/dataset/checklist_dataset.py',
      'data.custom_cls.name=ChecklistDataset',
      'data.prompt_key=messages',
      'data.train_files=/data/retail.parquet',
      '+env.checklist.dataset_path=/data/retail.json',
      'env.env_name=checklist',
      'agent.orchestra_type=checklist',
      'agent.agent_ids=["Tool Caller Agent","Tool Simulator Agent"]',
      'agent.model_ids=["/cluster/models/Qwen3-8B","/cluster/models/Qwen3-8B"]',
      'trainer.n_gpus_per_node=8',
      'trainer.nnodes=2',
      'trainer.experiment_name=retail-joint',
      'trainer.resume_mode=auto',
      "+env.checklist.judge_api_key='${oc.env:JUDGE_API_KEY}'",
    ])
      assert.ok(plan.argv.includes(option), `missing ${option}`);
    assert.equal(plan.env['ENABLE_CHECKLIST'], '1');
    assert.match(
      plan.script!,
      /^#!\/bin\/bash\n[\s\S]*JUDGE_API_KEY:\?[\s\S]*exec python3 -m verl\.trainer\.main_ppo/,
    );
    const r = await rehearse(
      'train',
      '--config',
      path.join(repoRoot(), 'examples', 'training', 'envace.run.json'),
      '--backend',
      'envace',
      '--dry-run',
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^command: ENABLE_CHECKLIST=1 /);
    assert.match(r.out, /Not started here: EnvACE trains on a Ray cluster/);
    assert.ok(!r.out.includes('launch script written'));
  });
});
