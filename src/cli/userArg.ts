import { StudioError } from '../core/base/errors';
import type { UserEndpoint } from '../core/tasks/tau2User';
import { openTaskUser } from '../core/tasks/tau2User';
import type { OpenUser } from '../core/tasks/taskUser';
import type { UserPlayer } from '../core/trace/format/schema';
import { studioPython } from './studioPython';

/** Options that name the endpoint playing τ²'s user simulator (docs/tau2.md, A user in the loop). */
export interface UserArgs {
  userEndpoint?: string;
  userModel?: string;
  userApiKeyEnv?: string;
}

/** `--user-endpoint`'s help. */
export const USER_ENDPOINT_HELP =
  "an OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8000/v1) that plays τ²'s user simulator for tasks whose user is τ²'s (without it that user is not asked: the conversation ends after the task's own turns)";

/** `--user-model`'s help. */
export const USER_MODEL_HELP = "the user endpoint's model (required with --user-endpoint)";

/** `--user-api-key-env`'s help. */
export const USER_API_KEY_ENV_HELP =
  "the environment variable holding the user endpoint's API key (default: none is sent)";

/**
 * The user endpoint the options name, or none; `USAGE` for a URL that is not an http(s) one or holds
 * credentials, a model or key variable without an endpoint, or an endpoint without a model.
 */
export function userEndpointArg(args: UserArgs): UserEndpoint | undefined {
  if (args.userEndpoint === undefined) {
    if (args.userModel !== undefined || args.userApiKeyEnv !== undefined)
      throw new StudioError(
        'USAGE',
        '--user-model and --user-api-key-env go with --user-endpoint <url> (the endpoint that plays the user).',
      );
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(args.userEndpoint);
  } catch {
    throw new StudioError(
      'USAGE',
      `--user-endpoint must be an http(s) base URL, e.g. http://127.0.0.1:8000/v1, not "${args.userEndpoint}".`,
    );
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password)
    throw new StudioError(
      'USAGE',
      '--user-endpoint must be an http(s) base URL without credentials (name the variable that holds its key with --user-api-key-env).',
    );
  if (!args.userModel)
    throw new StudioError(
      'USAGE',
      '--user-endpoint needs --user-model <name> (the model that plays the user).',
    );
  if (args.userApiKeyEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(args.userApiKeyEnv))
    throw new StudioError(
      'USAGE',
      `--user-api-key-env must name an environment variable, not "${args.userApiKeyEnv}".`,
    );
  return {
    baseUrl: args.userEndpoint,
    model: args.userModel,
    ...(args.userApiKeyEnv ? { apiKeyEnv: args.userApiKeyEnv } : {}),
  };
}

/** The endpoint as a trace may record it: no query or fragment (where a key could hide). */
function shownEndpoint(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.origin}${url.pathname}`;
}

/**
 * The run's users (scripts, and τ²'s simulator on the endpoint the options name) and who plays the
 * simulator, as the trace records it.
 */
export function userOpenerArg(args: UserArgs): { openUser: OpenUser; user?: UserPlayer } {
  const endpoint = userEndpointArg(args);
  return {
    openUser: openTaskUser({ python: studioPython, endpoint }),
    ...(endpoint
      ? { user: { endpoint: shownEndpoint(endpoint.baseUrl), model: endpoint.model } }
      : {}),
  };
}
