import OpenAI from 'openai';
import { clip } from '../../base/clip';
import { StudioError, errorMessage } from '../../base/errors';
import { EndpointJudge } from './judge';

/** The environment variable that holds the judge endpoint's API key (never a flag or a setting). */
export const JUDGE_API_KEY_ENV = 'REHEARSAL_JUDGE_API_KEY';

/** Limit of one verdict: a judge that hangs costs an item, not the run. */
export const JUDGE_TIMEOUT_MS = 60_000;

/** Limit of asking the endpoint which models it serves (when no model is named). */
export const JUDGE_MODELS_TIMEOUT_MS = 15_000;

/** How a host names its judge settings in messages (the CLI's flags, the editor's settings). */
export interface JudgeSettingNames {
  endpoint: string;
  model: string;
  key: string;
}

/** The CLI's names. */
export const CLI_JUDGE_NAMES: JudgeSettingNames = {
  endpoint: '--judge',
  model: '--judge-model',
  key: JUDGE_API_KEY_ENV,
};

/** A judge to open: an OpenAI-compatible endpoint, its model (when named) and its key. */
export interface JudgeSetting {
  endpoint: string;
  model?: string;
  apiKey?: string;
  names: JudgeSettingNames;
}

/**
 * The judge endpoint's base URL, checked: an `http:` or `https:` URL without credentials in it (a
 * key belongs in the environment or the editor's secret storage, not in shell history or settings).
 */
export function judgeEndpointUrl(value: string, names: JudgeSettingNames): string {
  const text = value.trim();
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  const fix = `give ${names.endpoint} the base URL of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1`;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new StudioError(
      'INVALID_JUDGE_ENDPOINT',
      `The judge endpoint ${names.endpoint} "${clip(text, 200)}" is not an http(s) URL; ${fix}.`,
    );
  if (url.username || url.password)
    throw new StudioError(
      'INVALID_JUDGE_ENDPOINT',
      `The judge endpoint ${names.endpoint} holds credentials; ${fix} without them, and put its key in ${names.key}.`,
    );
  return text;
}

/**
 * Opens the judge a setting names: checks the URL, and when no model is named takes the one model
 * the endpoint lists (GET /models, bounded by {@link JUDGE_MODELS_TIMEOUT_MS}); an endpoint with
 * several models, or none listed, needs one named. Each verdict is bounded by {@link JUDGE_TIMEOUT_MS}.
 */
export async function openJudge(
  setting: JudgeSetting,
): Promise<{ judge: EndpointJudge; model: string }> {
  const baseURL = judgeEndpointUrl(setting.endpoint, setting.names);
  const model = setting.model?.trim() || (await onlyModel(baseURL, setting));
  return {
    judge: new EndpointJudge({
      baseURL,
      model,
      apiKey: setting.apiKey,
      timeoutMs: JUDGE_TIMEOUT_MS,
    }),
    model,
  };
}

/** The one model an endpoint lists. */
async function onlyModel(baseURL: string, setting: JudgeSetting): Promise<string> {
  const { names } = setting;
  const client = new OpenAI({
    baseURL,
    apiKey: setting.apiKey || 'none',
    timeout: JUDGE_MODELS_TIMEOUT_MS,
    maxRetries: 1,
  });
  let ids: string[];
  try {
    const page = await client.models.list();
    ids = page.data.map((m) => m.id);
  } catch (err) {
    if (err instanceof OpenAI.AuthenticationError || err instanceof OpenAI.PermissionDeniedError)
      throw new StudioError(
        'ENDPOINT_AUTH',
        `The judge at ${baseURL} refused the API key (${err.status}): set it in ${names.key}.`,
      );
    if (err instanceof OpenAI.APIConnectionError)
      throw new StudioError(
        'ENDPOINT_UNREACHABLE',
        `Cannot reach the judge at ${baseURL} (${errorMessage(err)}): start the server or fix ${names.endpoint}.`,
      );
    throw new StudioError(
      'JUDGE_MODEL_REQUIRED',
      `The judge at ${baseURL} did not list its models (${clip(errorMessage(err), 200)}): name the model with ${names.model}.`,
    );
  }
  if (ids.length === 1) return ids[0];
  throw new StudioError(
    'JUDGE_MODEL_REQUIRED',
    ids.length
      ? `The judge at ${baseURL} serves ${ids.length} models (${clip(ids.join(', '), 200)}): name one with ${names.model}.`
      : `The judge at ${baseURL} lists no model: name one with ${names.model}.`,
  );
}
