import type { CheckVerdict, EpisodeStatus, RunEvent } from '../trace/format/schema';
import { readTraceEvents } from '../trace/format/reader';

/** A committed episode with an item of the kind a benchmark's report reads. */
export interface GradedEpisode {
  taskId: string;
  status: EpisodeStatus;
  /** The episode's first item of that kind. */
  item: CheckVerdict;
  /** The first event of the episode's run (its policy, who played its users). */
  run?: RunEvent;
}

/** The episodes of recorded runs that a benchmark's report counts, and how many it leaves out. */
export interface GradedEpisodes {
  episodes: GradedEpisode[];
  /** Committed episodes with no item of the kind (other tasks). */
  otherEpisodes: number;
}

/**
 * Every committed episode of the traces (private rehearsal's imagined ones are not answers) whose
 * task has an item of `kind`, in trace order, with its run.
 */
export async function gradedEpisodes(
  files: readonly string[],
  kind: string,
): Promise<GradedEpisodes> {
  const episodes: GradedEpisode[] = [];
  let otherEpisodes = 0;
  for (const file of files) {
    const { events } = await readTraceEvents(file);
    let run: RunEvent | undefined;
    const tasks = new Map<string, { taskId: string; imagined: boolean }>();
    for (const e of events) {
      if (e.type === 'run') run = e;
      if (e.type === 'episode')
        tasks.set(e.episodeId, { taskId: e.taskId, imagined: e.role === 'imagined' });
      if (e.type !== 'episode.end') continue;
      const episode = tasks.get(e.episodeId);
      if (!episode || episode.imagined) continue;
      const item = e.checks?.find((c) => c.kind === kind);
      if (item) episodes.push({ taskId: episode.taskId, status: e.status, item, run });
      else otherEpisodes++;
    }
  }
  return { episodes, otherEpisodes };
}
