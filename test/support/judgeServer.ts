import { startChatServer } from './chatServer';

/** A deterministic judge behind a real OpenAI-compatible HTTP endpoint, for tests. */
export interface JudgeServer {
  /** Base URL, `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** What it was asked, in order: the model and the item's question of each verdict. */
  asked: { model: string; question: string }[];
  close(): Promise<void>;
}

/** How the judge answers. */
export interface JudgeServerOptions {
  /** The verdict for an item's question, given the whole judge prompt. */
  answer: (question: string, prompt: string) => boolean;
  /** The reasoning it gives (default: the verdict as text). */
  reasoning?: (question: string, answer: boolean) => string;
  /** A key the requests must carry as a bearer token (else 401). */
  key?: string;
  /** The models `GET /v1/models` lists (default: one, `judge`). */
  models?: () => string[];
}

/** Starts a judge on a free local port: chat completions whose content is `{"reasoning", "answer"}`. */
export async function startJudgeServer(options: JudgeServerOptions): Promise<JudgeServer> {
  const asked: JudgeServer['asked'] = [];
  const server = await startChatServer(
    (request) => {
      const prompt = request.messages[0].content ?? '';
      const question = /^Question: (.*)$/m.exec(prompt)?.[1] ?? '';
      asked.push({ model: request.model, question });
      const answer = options.answer(question, prompt);
      const reasoning = options.reasoning?.(question, answer) ?? String(answer);
      return JSON.stringify({ reasoning, answer });
    },
    { key: options.key, models: options.models ?? (() => ['judge']) },
  );
  return { url: server.url, asked, close: () => server.close() };
}
