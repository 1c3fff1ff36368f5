import type { ChatMessage } from '../protocol/types';

/** Where a row's target comes from (docs/dataset-format.md). */
export type RowSource = 'demonstration' | 'rollout' | 'actual';

/** One training row, as the trainer reads it (schemas/dataset-row.schema.json). */
export interface DatasetRow {
  v: 1;
  id: string;
  role: 'act' | 'rehearse';
  messages: ChatMessage[];
  /** OpenAI function schemas (act rows). */
  tools?: { type: 'function'; function: { name: string; description: string; parameters: unknown } }[];
  target: string;
  reward: number | null;
  group: string | null;
  weight: number;
  source: RowSource;
  task?: string;
  episode?: string;
  call?: string;
  /** Act rows: also train on every earlier assistant turn in `messages` (one row per episode). */
  train_history?: boolean;
}
