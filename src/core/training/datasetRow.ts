import type { AnnotationKind, AnnotationSeverity, AnnotationVerdict } from '../annotations/schema';
import type { ChatMessage } from '../protocol/types';

/** A person's annotation of a rehearse row's call, as exported (docs/annotation-format.md). */
export interface RowAnnotation {
  verdict: AnnotationVerdict;
  kind?: AnnotationKind;
  severity?: AnnotationSeverity;
  path?: string;
  note?: string;
  author: string;
}

/** Where a row's target comes from (docs/dataset-format.md). */
export type RowSource = 'demonstration' | 'rollout' | 'actual';

/** One training row, as the trainer reads it (schemas/dataset-row.schema.json). */
export interface DatasetRow {
  v: 1;
  id: string;
  role: 'act' | 'rehearse';
  messages: ChatMessage[];
  /** OpenAI function schemas (act rows). */
  tools?: {
    type: 'function';
    function: { name: string; description: string; parameters: unknown };
  }[];
  target: string;
  reward: number | null;
  group: string | null;
  /**
   * Rollout rows: whether the episode finished on its own (`completed`), rather than on a failure,
   * a parse error or a limit. The trainer reports GRPO's signal among finished episodes by it.
   */
  finished?: boolean;
  /**
   * Rollout rows: the temperature their role sampled the target at. The trainer scores the row's
   * log-probs at it (logits / temperature), so each role may sample at its own.
   */
  temperature?: number;
  /**
   * False when the target is trained without the end token: the policy's sample stopped on a stop
   * string or the token limit, so it never sampled one (default true).
   */
  eos?: boolean;
  /**
   * Rollout rows of a served model (`rollout --record-tokens`): the token ids it sampled for the
   * target, the end token included when it sampled one; the trainer trains them as they are.
   */
  target_ids?: number[];
  /** With `target_ids`: each token's log-prob under the sampler's distribution (truncated IS). */
  target_logprobs?: number[];
  weight: number;
  source: RowSource;
  task?: string;
  episode?: string;
  call?: string;
  /** Act rows: also train on every earlier assistant turn in `messages` (one row per episode). */
  train_history?: boolean;
  /** Rehearse rows: the call's fidelity annotations, from the run's `annotations.jsonl`. */
  annotations?: RowAnnotation[];
}
