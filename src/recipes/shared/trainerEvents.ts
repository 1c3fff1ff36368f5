import type { TrainerEvent } from '../../core/training/launch/supervisor';

// Progress lines for the trainer's events (docs/trainer-events.md), as the recipes print them.

type Figures = Record<string, number | undefined>;

const fixed = (value: unknown, digits: number) => Number(value).toFixed(digits);

/** `act 0.123 r=0.50, rehearse 0.456`: each role's loss (and reward mean in GRPO). */
function roleFigures(roles: unknown): string {
  return Object.entries((roles ?? {}) as Record<string, Figures>)
    .map(([role, v]) => {
      const reward = v.reward_mean !== undefined ? ` r=${v.reward_mean.toFixed(2)}` : '';
      return `${role} ${(v.loss ?? v.pg_loss ?? 0).toFixed(3)}${reward}`;
    })
    .join(', ');
}

function stepLine(e: TrainerEvent): string {
  const steps = e.steps ? `/${String(e.steps)}` : '';
  const iteration =
    e.iteration !== undefined
      ? ` (iteration ${Number(e.iteration) + 1}/${String(e.iterations)})`
      : '';
  const speed = Math.round(Number(e.tokens_per_s ?? 0));
  return `  ${String(e.command)} step ${String(e.step)}${steps}${iteration}: loss ${fixed(e.loss, 4)} [${roleFigures(e.roles)}] ${speed} tok/s`;
}

function probeLine(e: TrainerEvent): string {
  const figures = Object.entries(e)
    .filter(([k, v]) => typeof v === 'number' && k !== 'step' && k !== 't')
    .map(([k, v]) => `${k} ${fixed(v, 2)}`)
    .join(', ');
  return `  copy probe at step ${String(e.step)}: ${figures}`;
}

function validationLine(e: TrainerEvent): string {
  const scores = Object.entries((e.scores ?? {}) as Record<string, unknown>)
    .map(([k, v]) => `${k} ${fixed(v, 3)}`)
    .join(', ');
  return `  validation after ${String(e.iteration)} iterations: ${scores} (best: iteration ${String(e.best_iteration)}, ${String(e.metric)} ${fixed(e.best, 3)})`;
}

/** The progress line for one trainer event, or undefined for an event not worth a line. */
export function describeTrainerEvent(e: TrainerEvent): string | undefined {
  switch (e.event) {
    case 'step':
      return stepLine(e);
    case 'rollouts':
      return `  rollouts: ${JSON.stringify(e).slice(0, 200)}`;
    case 'probe':
      return probeLine(e);
    case 'validation':
      return validationLine(e);
    case 'best':
      return `  final policy: the best validated point, after ${String(e.iteration)} of ${String(e.iterations)} iterations`;
    case 'resume':
      return `  resumed from step ${String(e.step)} (${String(e.path)})`;
    case 'warning':
    case 'error':
      return `  ${e.event}: ${String(e.code)}: ${String(e.message)}`;
    default:
      return undefined;
  }
}
