import type { OutsideNumberSpec } from './numbers';

/** A day in milliseconds: the longest limit a task may set on a call or an episode. */
const DAY_MS = 86_400_000;
/** 2^32 - 1: the sampler's seeds are 32-bit (mulberry32), as numpy's are. */
const MAX_SEED_32 = 0xffff_ffff;
/** The most episodes per task a run plays. */
const MAX_EPISODES = 10_000;
/** Private rehearsal's most imagined episodes before the committed one. */
const MAX_BUDGET = 64;
/** The most episodes in flight: each holds its own servers and KV cache. */
const MAX_IN_FLIGHT = 64;
/** The most samples of one request: each holds its own cache in the policy host. */
const MAX_SAMPLED = 16;
/** CPU threads a policy host or a trainer may ask for. */
const MAX_THREADS = 1024;
/** Positions (tokens) the largest model folder may declare. */
const MAX_POSITIONS = 10_000_000;

/**
 * Every number the studio takes from outside, with its documented range and the code of a value
 * out of range; read only through `readNumber` (core/base/numbers.ts). docs/reliability.md lists
 * each row ("Numbers from outside"); a unit test keeps the two in step.
 */
export const OUTSIDE_NUMBERS = {
  // Task files (TASK_INVALID, before anything runs).
  taskMaxTurns: {
    name: '$.limits.maxTurns',
    min: 1,
    max: 10_000,
    integer: true,
    code: 'TASK_INVALID',
  },
  taskUserMaxTurns: {
    name: '$.user.maxTurns',
    min: 1,
    max: 10_000,
    integer: true,
    code: 'TASK_INVALID',
  },
  taskUserMaxToolCalls: {
    name: '$.user.maxToolCalls',
    min: 1,
    max: 10_000,
    integer: true,
    code: 'TASK_INVALID',
  },
  taskMaxCallsPerTurn: {
    name: '$.limits.maxCallsPerTurn',
    min: 1,
    max: 1_000,
    integer: true,
    code: 'TASK_INVALID',
  },
  taskCallTimeoutMs: {
    name: '$.limits.callTimeoutMs',
    min: 1,
    max: DAY_MS,
    integer: true,
    unit: 'ms, 24 hours',
    code: 'TASK_INVALID',
  },
  taskEpisodeTimeoutMs: {
    name: '$.limits.episodeTimeoutMs',
    min: 1,
    max: DAY_MS,
    integer: true,
    unit: 'ms, 24 hours',
    code: 'TASK_INVALID',
  },
  taskSeed: { name: '$.seed', min: 0, max: MAX_SEED_32, integer: true, code: 'TASK_INVALID' },
  taskCheckWeight: { name: '$.checks[i].weight', min: 0, max: 1_000_000, code: 'TASK_INVALID' },
  taskCheckMin: {
    name: '$.checks[i].min',
    min: 1,
    max: 10_000,
    integer: true,
    code: 'TASK_INVALID',
  },
  taskCheckMax: {
    name: '$.checks[i].max',
    min: 1,
    max: 10_000,
    integer: true,
    code: 'TASK_INVALID',
  },
  // Training run files (RUN_SPEC_INVALID, every fault listed).
  runSeed: { name: '$.seed', min: 0, max: MAX_SEED_32, integer: true, code: 'RUN_SPEC_INVALID' },
  runProcesses: {
    name: '$.hardware.processes',
    min: 1,
    max: 1_024,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runNodes: {
    name: '$.hardware.nodes',
    min: 1,
    max: 10_000,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runNodeRank: {
    name: '$.hardware.node_rank',
    min: 0,
    max: 9_999,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runMasterPort: {
    name: '$.hardware.master_port',
    min: 1,
    max: 65_535,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runThreads: {
    name: '$.hardware.threads',
    min: 1,
    max: MAX_THREADS,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runMaxLength: {
    name: '$.hyperparameters.data.max_length',
    min: 1,
    max: MAX_POSITIONS,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runGroupSize: {
    name: '$.envace.group_size',
    min: 1,
    max: 1_024,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runTrainBatchSize: {
    name: '$.envace.train_batch_size',
    min: 1,
    max: 1_000_000,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runLr: { name: '$.envace.lr', min: 0, max: 1, minExcluded: true, code: 'RUN_SPEC_INVALID' },
  runMaxPromptLength: {
    name: '$.envace.max_prompt_length',
    min: 1,
    max: MAX_POSITIONS,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runMaxResponseLength: {
    name: '$.envace.max_response_length',
    min: 1,
    max: MAX_POSITIONS,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  runSaveFreq: {
    name: '$.envace.save_freq',
    min: 1,
    max: 1_000_000,
    integer: true,
    code: 'RUN_SPEC_INVALID',
  },
  // Editor settings (SETTING_INVALID when a run starts).
  settingThreads: {
    name: 'rehearsal.policy.threads',
    min: 0,
    max: MAX_THREADS,
    integer: true,
    code: 'SETTING_INVALID',
  },
  settingEpisodes: {
    name: 'rehearsal.run.episodesPerTask',
    min: 1,
    max: MAX_EPISODES,
    integer: true,
    code: 'SETTING_INVALID',
  },
  settingConcurrency: {
    name: 'rehearsal.run.concurrency',
    min: 1,
    max: MAX_IN_FLIGHT,
    integer: true,
    code: 'SETTING_INVALID',
  },
  settingTemperature: {
    name: 'rehearsal.run.temperature',
    min: 0,
    max: 2,
    code: 'SETTING_INVALID',
  },
  settingSeed: {
    name: 'rehearsal.run.seed',
    min: 0,
    max: MAX_SEED_32,
    integer: true,
    code: 'SETTING_INVALID',
  },
  settingBudget: {
    name: 'rehearsal.run.privateRehearsal.budget',
    min: 1,
    max: MAX_BUDGET,
    integer: true,
    code: 'SETTING_INVALID',
  },
  // Command-line flags (USAGE, exit 2, before anything starts).
  flagEpisodes: { name: '--episodes', min: 1, max: MAX_EPISODES, integer: true, code: 'USAGE' },
  flagRolloutEpisodes: {
    name: '--episodes',
    min: 2,
    max: MAX_EPISODES,
    integer: true,
    unit: 'a GRPO group',
    code: 'USAGE',
  },
  flagSamples: { name: '--samples', min: 1, max: MAX_SAMPLED, integer: true, code: 'USAGE' },
  flagRehearsalRetries: {
    name: '--rehearsal-retries',
    min: 0,
    max: 10,
    integer: true,
    code: 'USAGE',
  },
  flagBudget: { name: '--budget', min: 1, max: MAX_BUDGET, integer: true, code: 'USAGE' },
  flagConcurrency: {
    name: '--concurrency',
    min: 1,
    max: MAX_IN_FLIGHT,
    integer: true,
    code: 'USAGE',
  },
  flagTemperature: { name: '--temperature', min: 0, max: 2, code: 'USAGE' },
  flagRolloutTemperature: {
    name: '--temperature',
    min: 0,
    max: 2,
    minExcluded: true,
    unit: 'greedy rollouts teach nothing',
    code: 'USAGE',
  },
  flagRolloutRehearseTemperature: {
    name: '--rehearse-temperature',
    min: 0,
    max: 2,
    minExcluded: true,
    unit: 'greedy rollouts teach nothing',
    code: 'USAGE',
  },
  flagRehearsalTemperature: { name: '--rehearsal-temperature', min: 0, max: 2, code: 'USAGE' },
  flagSeed: { name: '--seed', min: 0, max: MAX_SEED_32, integer: true, code: 'USAGE' },
  flagThreads: { name: '--threads', min: 1, max: MAX_THREADS, integer: true, code: 'USAGE' },
  flagPort: {
    name: '--port',
    min: 0,
    max: 65_535,
    integer: true,
    unit: '0 picks a free one',
    code: 'USAGE',
  },
  flagCount: { name: '--count', min: 1, max: 10_000, integer: true, code: 'USAGE' },
  flagStart: { name: '--start', min: 0, max: 2 ** 31 - 1, integer: true, code: 'USAGE' },
  flagBatchSize: { name: '--batch-size', min: 1, max: 1_000_000, integer: true, code: 'USAGE' },
  flagBatch: { name: '--batch', min: 0, max: 1_000_000, integer: true, code: 'USAGE' },
  flagMaxExamples: {
    name: '--max-examples',
    min: 0,
    max: 1_000_000,
    integer: true,
    code: 'USAGE',
  },
  flagPlanGpus: { name: '--plan-gpus', min: 1, max: 1_024, integer: true, code: 'USAGE' },
  flagPlanGpuMemory: {
    name: '--plan-gpu-memory',
    min: 0,
    max: 100_000,
    minExcluded: true,
    unit: 'GiB',
    code: 'USAGE',
  },
  flagPlanLoraRank: { name: '--plan-lora-r', min: 1, max: 65_536, integer: true, code: 'USAGE' },
  flagPlanSeqLen: {
    name: '--plan-seq-len',
    min: 1,
    max: MAX_POSITIONS,
    integer: true,
    code: 'USAGE',
  },
  flagPlanMicroBatch: {
    name: '--plan-micro-batch',
    min: 1,
    max: 1_000_000,
    integer: true,
    code: 'USAGE',
  },
  flagHeldOut: {
    name: '--split-by-task',
    min: 0,
    max: 1,
    minExcluded: true,
    maxExcluded: true,
    code: 'USAGE',
  },
  // `rehearse serve`'s request bodies (HTTP 400 invalid_request_error).
  httpN: { name: '"n"', min: 1, max: MAX_SAMPLED, integer: true, code: 'REQUEST_INVALID' },
  httpMaxTokens: {
    name: '"max_tokens"',
    min: 1,
    max: MAX_POSITIONS,
    integer: true,
    code: 'REQUEST_INVALID',
  },
  /** vLLM's `min_tokens`: the end token does not end a sample before this many tokens. */
  httpMinTokens: {
    name: '"min_tokens"',
    min: 0,
    max: MAX_POSITIONS,
    integer: true,
    code: 'REQUEST_INVALID',
  },
  httpTemperature: { name: '"temperature"', min: 0, max: 2, code: 'REQUEST_INVALID' },
  httpTopP: { name: '"top_p"', min: 0, max: 1, minExcluded: true, code: 'REQUEST_INVALID' },
  httpSeed: { name: '"seed"', min: 0, max: MAX_SEED_32, integer: true, code: 'REQUEST_INVALID' },
  // A model folder's config.json and generation_config.json (before the graph is loaded).
  modelLayers: {
    name: 'num_hidden_layers',
    min: 1,
    max: 512,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelHiddenSize: {
    name: 'hidden_size',
    min: 1,
    max: 1_048_576,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelIntermediateSize: {
    name: 'intermediate_size, moe_intermediate_size',
    min: 1,
    max: 4_194_304,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelExperts: {
    name: 'num_experts, num_local_experts',
    min: 1,
    max: 65_536,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelExpertsPerToken: {
    name: 'num_experts_per_tok',
    min: 1,
    max: 65_536,
    integer: true,
    unit: 'at most the experts',
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelHeads: {
    name: 'num_attention_heads',
    min: 1,
    max: 1_024,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelKeyValueHeads: {
    name: 'num_key_value_heads',
    min: 1,
    max: 1_024,
    integer: true,
    unit: 'at most num_attention_heads',
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelHeadDim: {
    name: 'head_dim (or hidden_size / num_attention_heads)',
    min: 1,
    max: 4_096,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelVocab: {
    name: 'vocab_size',
    min: 2,
    max: 4_000_000,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelPositions: {
    name: 'max_position_embeddings',
    min: 1,
    max: MAX_POSITIONS,
    integer: true,
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
  modelTokenId: {
    name: 'eos_token_id, pad_token_id',
    min: 0,
    max: 3_999_999,
    integer: true,
    unit: 'below vocab_size',
    code: 'MODEL_FOLDER_INCONSISTENT',
  },
} as const satisfies Record<string, OutsideNumberSpec>;

/** The name of one of {@link OUTSIDE_NUMBERS}. */
export type OutsideNumberName = keyof typeof OUTSIDE_NUMBERS;
