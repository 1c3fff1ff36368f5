import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../base/errors';
import { parseRehearsePromptOptions } from '../protocol/rehearsePrompt';
import type { RehearsePromptOptions } from '../protocol/rehearsePrompt';

/** File in a model folder with the run settings its policy was trained for. */
export const POLICY_SETTINGS_FILE = 'rehearsal_config.json';

/**
 * The settings a model recommends: the rehearse prompt it was trained on and its token budgets, and
 * whether it reads identifiers as slots (`IdentifierSlots`; the policy applies it, it is not a run
 * setting).
 */
export interface PolicySettings {
  rehearsePrompt?: RehearsePromptOptions;
  maxTokens?: { act: number; rehearse: number };
  identifierSlots?: boolean;
}

/**
 * Reads `rehearsal_config.json` of a model folder, if any. A policy trained on a compact rehearse
 * prompt must be run with the same one; this file says which, so nobody has to remember.
 */
export async function readPolicySettings(modelDir: string): Promise<PolicySettings> {
  const file = path.join(modelDir, POLICY_SETTINGS_FILE);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const value = JSON.parse(text) as PolicySettings;
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new Error('not an object');
    const out: PolicySettings = {};
    if (value.rehearsePrompt) {
      const parsed = parseRehearsePromptOptions(value.rehearsePrompt);
      if (!parsed.ok) throw new Error(parsed.message);
      out.rehearsePrompt = parsed.options;
    }
    if (value.maxTokens) out.maxTokens = value.maxTokens;
    if (value.identifierSlots !== undefined) {
      if (typeof value.identifierSlots !== 'boolean')
        throw new Error(
          `identifierSlots must be true or false, not ${JSON.stringify(value.identifierSlots)}`,
        );
      out.identifierSlots = value.identifierSlots;
    }
    return out;
  } catch (err) {
    throw new StudioError(
      'MODEL_FILE_BROKEN',
      `${file} is not a valid JSON object (${(err as Error).message}); fix it or delete it.`,
    );
  }
}
