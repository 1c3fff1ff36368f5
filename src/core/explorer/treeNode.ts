import type { NodeStatus } from '../fidelity/verdicts';

/**
 * One row of the Trace Explorer, as the core's tree functions shape it (explorer/tree.ts) and the
 * extension's tree provider renders it.
 */
export interface TraceTreeNode {
  /**
   * `message`: a line of text in place of children (a large trace being indexed); `more`: the
   * children of a run past its page (`entityId` is the run's file), shown on request. `memory`,
   * `memoryLine`, `attempt` and `memoryCall`: a committed episode's rehearsal memory, its lines, the
   * imagined attempts it was made from, and the imagined calls behind a line (explorer/memoryTree.ts).
   */
  kind:
    | 'run'
    | 'episode'
    | 'turn'
    | 'call'
    | 'problem'
    | 'message'
    | 'more'
    | 'memory'
    | 'memoryLine'
    | 'attempt'
    | 'memoryCall';
  /** Unique across the library: `<file>#<entity id>` (a memory's rows: `<file>#<episode id>/memory/...`). */
  id: string;
  file: string;
  /**
   * Episode, turn or call id; the file for runs and problems. Under a memory: the committed episode
   * (`memory`, `memoryLine`), the imagined one (`attempt`), the imagined call (`memoryCall`).
   */
  entityId: string;
  label: string;
  description: string;
  tooltip: string;
  status: NodeStatus;
  hasChildren: boolean;
  /** Calls: the number of fidelity errors marked on it, and whether its rehearsal was accepted. */
  annotations?: { errors: number; accepted: boolean };
  /** A memory's rows: the committed episode, and the memory's line (0-based) the row is or is under. */
  memory?: { episodeId: string; line?: number };
}
