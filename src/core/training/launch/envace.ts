import * as path from 'node:path';
import { StudioError } from '../../base/errors';
import { DEFAULT_POLICY_WORD } from '../../base/studioRoot';
import type { LaunchPlan } from './launchPlan';
import { shellQuote } from './launchPlan';
import type { RunSpec } from './runSpec';

/** EnvACE's two agents (its checklist orchestra's ids). */
export const ENVACE_AGENT_IDS = ['Tool Caller Agent', 'Tool Simulator Agent'] as const;

/** A Hydra list of strings: `["a","b"]`. */
const hydraStrings = (items: readonly string[]) =>
  `[${items.map((s) => JSON.stringify(s)).join(',')}]`;

/**
 * EnvACE's joint caller/simulator GRPO on a Ray cluster, as its checklist launcher starts it:
 * `python -m verl.trainer.main_ppo` with Hydra overrides (option names from EnvACE's
 * examples/drmas_trainer/run_checklist_share.sh and verl's ppo_trainer.yaml). Generated, never run
 * here: the studio writes the data (rehearse export --format envace), the cluster trains. The judge's
 * API key is read on the cluster from $JUDGE_API_KEY through OmegaConf's `oc.env` resolver, so it is
 * never part of the command line.
 */
export function envaceLaunch(spec: RunSpec): LaunchPlan {
  const s = envaceSettings(spec);
  const overrides = [
    ...dataOverrides(s),
    ...actorRolloutOverrides(s),
    ...envOverrides(s),
    ...agentTrainerOverrides(s),
    ...(s.e.overrides ?? []),
  ];
  const python = s.e.python ?? 'python3';
  const argv = [python, '-m', 'verl.trainer.main_ppo', ...overrides];
  const env: Record<string, string> = {
    ENABLE_CHECKLIST: '1',
    ENVACE_ROOT: s.root,
    PYTHONPATH: s.root,
  };
  return {
    backend: 'envace',
    argv,
    env,
    cwd: s.root,
    outDir: spec.out_dir,
    script: launchScript(s, argv, env),
    runsHere: false,
  };
}

/** The envace block of a run file, checked, with EnvACE's defaults filled in. */
interface EnvaceSettings {
  spec: RunSpec;
  e: NonNullable<RunSpec['envace']>;
  root: string;
  judgeBackend: string;
  judgeModel: string;
  judgeUrls: string[];
  caller: string;
  simulator: string;
  lr: number;
  groupSize: number;
  maxResponse: number;
  checkpointDir: string;
}

/** Checks that the run file names what EnvACE needs on the cluster, and fills in EnvACE's defaults. */
function envaceSettings(spec: RunSpec): EnvaceSettings {
  const e = spec.envace ?? {};
  const missing = [
    ['root', e.root],
    ['tool_dataset', e.tool_dataset],
    ['train_files', e.train_files],
    ['judge.urls', e.judge?.urls],
  ]
    .filter(([, v]) => v === undefined)
    .map(([k]) => `$.envace.${k as string}`);
  if (missing.length) {
    throw new StudioError(
      'RUN_SPEC_INVALID',
      `${spec.file}: the envace backend needs ${missing.join(', ')} (paths on the cluster; see docs/training-runs.md).`,
    );
  }
  if (spec.baseAsWritten === DEFAULT_POLICY_WORD)
    throw new StudioError(
      'RUN_SPEC_INVALID',
      `${spec.file}: $.base "${DEFAULT_POLICY_WORD}" is the studio's own small policy, which EnvACE's cluster does not have: name the model as the cluster sees it (a Hugging Face id such as Qwen/Qwen3-8B, or a path there).`,
    );
  const root = e.root!;
  const judgeBackend = e.judge?.backend ?? 'sglang';
  const judgeModel =
    e.judge?.model ?? (judgeBackend === 'openai' ? 'gpt-4.1' : 'Qwen/Qwen3-30B-A3B');
  const caller = spec.baseAsWritten;
  const simulator = e.simulator_model ?? caller;
  const lr = e.lr ?? 1e-6;
  const groupSize = e.group_size ?? 4;
  const maxResponse = e.max_response_length ?? 8000;
  const checkpointDir = e.checkpoint_dir ?? `checkpoints/drmas-checklist/${spec.name}`;
  return {
    spec,
    e,
    root,
    judgeBackend,
    judgeModel,
    judgeUrls: e.judge!.urls!,
    caller,
    simulator,
    lr,
    groupSize,
    maxResponse,
    checkpointDir,
  };
}

/** verl's algorithm (GRPO by agent) and the checklist dataset. */
function dataOverrides(s: EnvaceSettings): string[] {
  const { e } = s;
  return [
    'algorithm.adv_estimator=grpo',
    'algorithm.norm_adv_by_std_in_grpo=False',
    'algorithm.use_kl_in_reward=False',
    'algorithm.group_by_agent_id=True',
    `data.train_files=${e.train_files}`,
    `data.val_files=${e.val_files ?? e.train_files}`,
    `data.train_batch_size=${e.train_batch_size ?? 16}`,
    `data.val_batch_size=${e.train_batch_size ?? 16}`,
    `data.max_prompt_length=${e.max_prompt_length ?? 4000}`,
    `data.max_response_length=${s.maxResponse}`,
    'data.filter_overlong_prompts=True',
    'data.prompt_key=messages',
    'data.truncation=error',
    'data.return_raw_chat=True',
    'data.shuffle=True',
    `data.custom_cls.path=${path.posix.join(s.root, 'agent_system/dataset/checklist_dataset.py')}`,
    'data.custom_cls.name=ChecklistDataset',
    '+data.max_num_checklist=1',
    // Read as attributes by tool_caller_agent.py (not in ppo_trainer.yaml: without them Hydra's struct
    // mode stops the launch at the first tool-call step), and the rest of run_checklist_share.sh's
    // settings, with its defaults.
    '+data.rollout_max_prompt_length=12000',
    '+data.rollout_truncation=left',
    '+data.apply_chat_template_kwargs.enable_thinking=True',
  ];
}

/** The reward manager, the actor's optimiser and FSDP, and the rollout engine, as run_checklist_share.sh sets them. */
function actorRolloutOverrides(s: EnvaceSettings): string[] {
  const { e } = s;
  return [
    'reward_model.reward_manager=checklist',
    'actor_rollout_ref.model.path=null',
    'actor_rollout_ref.actor.optim.lr=null',
    `+agent.agent_specific_parameters.actor.optim.lr=[${s.lr},${s.lr}]`,
    'actor_rollout_ref.model.use_remove_padding=True',
    'actor_rollout_ref.actor.use_adaptive_ppo_mini_batch_size=True',
    'actor_rollout_ref.actor.ppo_mini_update_num=1',
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=null',
    '+agent.agent_specific_parameters.actor.ppo_micro_batch_size_per_gpu=[1,1]',
    'actor_rollout_ref.actor.loss_agg_mode=token-mean',
    'actor_rollout_ref.actor.kl_loss_coef=0.0001',
    'actor_rollout_ref.actor.kl_loss_type=low_var_kl',
    'actor_rollout_ref.actor.use_kl_loss=False',
    'actor_rollout_ref.actor.fsdp_config.param_offload=False',
    'actor_rollout_ref.actor.fsdp_config.optimizer_offload=True',
    'actor_rollout_ref.ref.fsdp_config.param_offload=True',
    'actor_rollout_ref.actor.entropy_coeff=0.0',
    'actor_rollout_ref.model.enable_gradient_checkpointing=True',
    'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=8',
    'actor_rollout_ref.rollout.tensor_model_parallel_size=1',
    `actor_rollout_ref.rollout.name=${e.rollout_engine ?? 'sglang'}`,
    'actor_rollout_ref.rollout.gpu_memory_utilization=0.5',
    'actor_rollout_ref.rollout.enable_chunked_prefill=True',
    'actor_rollout_ref.rollout.enforce_eager=False',
    'actor_rollout_ref.rollout.free_cache_engine=False',
    'actor_rollout_ref.rollout.val_kwargs.do_sample=True',
    'actor_rollout_ref.rollout.val_kwargs.top_k=-1',
    'actor_rollout_ref.rollout.val_kwargs.top_p=0.95',
    'actor_rollout_ref.rollout.val_kwargs.temperature=0.6',
    'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=8',
  ];
}

/** The checklist environment: group size, steps, the tool dataset, the judge and the caller's and simulator's sampling. */
function envOverrides(s: EnvaceSettings): string[] {
  const { e, spec } = s;
  return [
    'env.env_name=checklist',
    `env.seed=${spec.seed ?? 0}`,
    `env.rollout.n=${s.groupSize}`,
    `env.rollout.val_n=${s.groupSize}`,
    // EnvACE's default of 50 micro-steps cuts the multi-turn episodes the script allows 200 for.
    'env.max_steps=200',
    `+env.checklist.tool_return_mode=${e.tool_return_mode ?? 'agent'}`,
    `+env.checklist.dataset_path=${e.tool_dataset}`,
    `+env.checklist.judge_backend=${s.judgeBackend}`,
    `+env.checklist.sglang_url=${hydraStrings(s.judgeUrls)}`,
    `+env.checklist.sglang_model=${s.judgeModel}`,
    s.judgeBackend === 'openai'
      ? "+env.checklist.judge_api_key='${oc.env:JUDGE_API_KEY}'"
      : '+env.checklist.judge_api_key=',
    `+env.checklist.max_response_length=${s.maxResponse}`,
    '+env.checklist.max_assistant_turns=30',
    '+env.checklist.max_user_turns=30',
    '+env.checklist.max_parallel_calls=20',
    '+env.checklist.retry_times=5',
    `+env.checklist.semaphore_size=${s.judgeBackend === 'openai' ? 8 : 500}`,
    '+env.checklist.timeout=120',
    '+env.checklist.temperature=0.6',
    '+env.checklist.top_p=0.8',
    '+env.checklist.max_new_tokens=6000',
    '+env.checklist.max_tokens=6000',
    '+env.checklist.tool_temperature=0.6',
    '+env.checklist.tool_top_p=0.8',
    '+env.checklist.tool_max_new_tokens=8000',
    '+env.checklist.tool_max_tokens=8000',
    '+env.checklist.tool_retry_attempts=5',
    '+env.checklist.tool_semaphore_size=8',
    '+env.checklist.tool_timeout=120',
    '+env.checklist.use_caller_incremental=true',
    '+env.checklist.max_model_len=20000',
  ];
}

/** The two agents (caller and simulator) and the trainer's run, checkpoints and rollout dumps. */
function agentTrainerOverrides(s: EnvaceSettings): string[] {
  const { e, spec } = s;
  return [
    `agent.agent_ids=${hydraStrings(ENVACE_AGENT_IDS)}`,
    `agent.model_ids=${hydraStrings([s.caller, s.simulator])}`,
    `agent.model_sharing=${(e.model_sharing ?? true) ? 'True' : 'False'}`,
    `agent.frozen_agent_ids=${hydraStrings(e.caller_frozen ? [ENVACE_AGENT_IDS[0]] : [])}`,
    'agent.orchestra_type=checklist',
    'trainer.critic_warmup=0',
    "trainer.logger=['console']",
    'trainer.project_name=drmas-checklist',
    `trainer.experiment_name=${spec.name}`,
    `trainer.n_gpus_per_node=${spec.hardware.processes ?? 8}`,
    `trainer.nnodes=${spec.hardware.nodes ?? 1}`,
    `trainer.save_freq=${e.save_freq ?? 50}`,
    'trainer.resume_mode=auto',
    'trainer.val_before_train=False',
    'trainer.total_epochs=1',
    `trainer.default_local_dir=${s.checkpointDir}`,
    'trainer.test_freq=10',
    'trainer.val_only=False',
    // What EnvACE's rollouts were, for reading them back later.
    `trainer.rollout_data_dir=${s.checkpointDir}/rollout_dumps`,
  ];
}

/** The bash script that starts the run on the Ray head node. */
function launchScript(s: EnvaceSettings, argv: string[], env: Record<string, string>): string {
  const { spec, root, judgeBackend } = s;
  return [
    '#!/bin/bash',
    `# EnvACE joint caller/simulator training of "${spec.name}", generated by \`rehearse train --backend envace\`.`,
    '# Run it on the Ray head node (ray start --head first), with the checklist judge serving.',
    ...(judgeBackend === 'openai'
      ? [': "${JUDGE_API_KEY:?set JUDGE_API_KEY (the judge endpoint\'s key) first}"']
      : []),
    'set -euo pipefail',
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shellQuote(v)}`),
    `cd ${shellQuote(root)}`,
    `exec ${argv.slice(0, 3).map(shellQuote).join(' ')} \\\n    ${argv.slice(3).map(shellQuote).join(' \\\n    ')}`,
    '',
  ].join('\n');
}
