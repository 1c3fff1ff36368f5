import type { Event } from '../../src/core/base/event';
import type {
  ActRequest,
  ActResult,
  Policy,
  RehearseRequest,
  RehearseResult,
} from '../../src/core/policy/types';
import type { PolicyInfo } from '../../src/core/trace/format/schema';

/**
 * A real policy seen from the runner's side: every act and rehearse request is kept (what the
 * policy was shown), then passed on unchanged. `onActToken` streams the act turns' tokens to the test
 * (the runner itself does not stream). Disposing it leaves the wrapped policy to the test.
 */
export class RecordingPolicy implements Policy {
  readonly acts: ActRequest[] = [];
  readonly rehearsals: RehearseRequest[] = [];

  constructor(
    private readonly inner: Policy,
    private readonly hooks: {
      onActToken?: (delta: string) => void;
      /**
       * What the wrapped model is shown of an act request (the recording keeps the request whole):
       * {@link withoutSystemMessages} keeps the scripted model on its script's rows where a test gives
       * the task a system prompt or private rehearsal adds one.
       */
      modelSees?: (request: ActRequest) => ActRequest;
    } = {},
  ) {}

  get info(): PolicyInfo {
    return this.inner.info;
  }
  get rehearses(): boolean | undefined {
    return this.inner.rehearses;
  }
  get onDidFail(): Event<Error> | undefined {
    return this.inner.onDidFail;
  }

  act(request: ActRequest): Promise<ActResult> {
    this.acts.push(request);
    const shown = this.hooks.modelSees ? this.hooks.modelSees(request) : request;
    return this.inner.act(
      this.hooks.onActToken ? { ...shown, onToken: this.hooks.onActToken } : shown,
    );
  }

  rehearse(request: RehearseRequest): Promise<RehearseResult> {
    this.rehearsals.push(request);
    return this.inner.rehearse(request);
  }

  endSession(session: string): void {
    this.inner.endSession(session);
  }

  dispose(): void {
    // The wrapped policy belongs to the test.
  }
}

/**
 * An act request without its system messages: the scripted model's rows have none, so a prompt that
 * differs from a row only by a system message (the task's, private rehearsal's attempts or memory)
 * becomes that row again, and the model's answer is its script whatever its weights (issue 39).
 */
export function withoutSystemMessages(request: ActRequest): ActRequest {
  return { ...request, messages: request.messages.filter((m) => m.role !== 'system') };
}
