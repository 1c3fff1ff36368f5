import * as path from 'node:path';
import { StudioError, errorMessage } from '../base/errors';
import { runPythonGrader } from './checks/pythonGrader';
import type { Tau2User } from './format/taskFile';
import type {
  ConversationUser,
  OpenUser,
  UserAsk,
  UserExchange,
  UserReply,
  UserToolCall,
} from './taskUser';
import { absentUser, scriptedUser } from './taskUser';

/** How long τ²'s user simulator may take on one message (it imports litellm, then asks the endpoint). */
const USER_TIMEOUT_MS = 180_000;

/** The OpenAI-compatible endpoint that plays τ²'s user simulator (`--user-endpoint`, `--user-model`). */
export interface UserEndpoint {
  /** Base URL, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: string;
  model: string;
  /** The environment variable that holds its API key (read by the simulator's process, never stored). */
  apiKeyEnv?: string;
}

/** What `python -m trainer.tau2.user` answers (trainer/tau2/user.py). */
interface UserAnswer {
  message?: unknown;
  tool_calls?: unknown;
  error?: { code?: unknown; message?: unknown };
}

/** A message of the conversation as `python -m trainer.tau2.user` reads it. */
function simulatorMessage(m: UserExchange): unknown {
  if (m.role === 'tool')
    return { role: 'tool', id: m.id, content: m.content, ...(m.error ? { error: true } : {}) };
  if ('calls' in m)
    return {
      role: 'user',
      ...(m.content ? { content: m.content } : {}),
      tool_calls: m.calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })),
    };
  return m;
}

/**
 * τ²'s own user simulator for a task (docs/tau2.md, A user in the loop): each next message, or the
 * calls of its own tools it makes first (telecom's phone: the tools `ask.tools` names), from
 * `python -m trainer.tau2.user`, one process per answer, on `endpoint`. An endpoint that cannot be
 * reached is `USER_UNREACHABLE`; any other failure `USER_FAILED`.
 */
export function tau2User(
  spec: Tau2User,
  options: { python: () => string; baseDir: string; endpoint: UserEndpoint },
): ConversationUser {
  const { endpoint } = options;
  return {
    opens: spec.opens === true,
    next: async (ask: UserAsk) => {
      const input = JSON.stringify({
        domain: spec.domain,
        task: spec.task,
        ...(spec.tasks ? { tasks: path.resolve(options.baseDir, spec.tasks) } : {}),
        conversation: ask.conversation.map(simulatorMessage),
        ...(ask.tools.length ? { user_tools: ask.tools } : {}),
        endpoint: {
          base_url: endpoint.baseUrl,
          model: endpoint.model,
          ...(endpoint.apiKeyEnv ? { api_key_env: endpoint.apiKeyEnv } : {}),
        },
      });
      let out: string;
      try {
        out = await runPythonGrader(
          options.python(),
          'trainer.tau2.user',
          input,
          'τ² user',
          USER_TIMEOUT_MS,
          ask.signal,
        );
      } catch (err) {
        throw new StudioError('USER_FAILED', `τ²'s user simulator failed: ${errorMessage(err)}`);
      }
      return replyOf(out, endpoint);
    },
  };
}

/** The simulator's answer as a reply, or its coded error. */
function replyOf(out: string, endpoint: UserEndpoint): UserReply {
  let answer: UserAnswer;
  try {
    answer = JSON.parse(out) as UserAnswer;
  } catch {
    throw new StudioError('USER_FAILED', `τ²'s user simulator answered ${out.slice(0, 200)}`);
  }
  const calls = toolCallsOf(answer.tool_calls);
  if (calls?.length)
    return {
      kind: 'calls',
      calls,
      ...(typeof answer.message === 'string' ? { text: answer.message } : {}),
    };
  if (typeof answer.message === 'string') return { kind: 'message', text: answer.message };
  const code = answer.error?.code === 'USER_UNREACHABLE' ? 'USER_UNREACHABLE' : 'USER_FAILED';
  const said = typeof answer.error?.message === 'string' ? answer.error.message : out.slice(0, 200);
  throw new StudioError(
    code,
    code === 'USER_UNREACHABLE'
      ? `The user endpoint ${endpoint.baseUrl} cannot be reached (${said}): start the server or fix --user-endpoint.`
      : `τ²'s user simulator on ${endpoint.baseUrl} (model ${endpoint.model}) failed: ${typeof answer.error?.code === 'string' ? `${answer.error.code}: ` : ''}${said}`,
  );
}

/** The simulator's tool calls, when it answered well-formed ones. */
function toolCallsOf(value: unknown): UserToolCall[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const calls: UserToolCall[] = [];
  for (const c of value as unknown[]) {
    const call = c as { id?: unknown; name?: unknown; arguments?: unknown };
    if (typeof call?.name !== 'string') return undefined;
    calls.push({
      id: typeof call.id === 'string' ? call.id : `user_call_${calls.length + 1}`,
      name: call.name,
      arguments: (call.arguments ?? {}) as UserToolCall['arguments'],
    });
  }
  return calls;
}

/**
 * The users of a run's tasks: a `script` plays its messages, a `tau2` one is τ²'s user simulator on
 * `endpoint` (not asked when the run names none: the conversation ends after the task's turns).
 */
export function openTaskUser(options: { python: () => string; endpoint?: UserEndpoint }): OpenUser {
  const { python, endpoint } = options;
  return (spec, baseDir) =>
    spec.kind === 'script'
      ? scriptedUser(spec)
      : endpoint
        ? tau2User(spec, { python, endpoint, baseDir })
        : absentUser;
}
