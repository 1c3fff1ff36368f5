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
    private readonly hooks: { onActToken?: (delta: string) => void } = {},
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
    return this.inner.act(
      this.hooks.onActToken ? { ...request, onToken: this.hooks.onActToken } : request,
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
