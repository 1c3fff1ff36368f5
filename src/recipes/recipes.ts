import { groundingLoop, groundingSettings } from './groundingLoop';
import { grpoSanity } from './grpoSanity';
import { measureEnvace } from './measureEnvace';
import { measureSettings } from './measureEnvace/settings';
import { measureForesight } from './measureForesight';
import { foresightSettings } from './measureForesight/settings';
import { ROOT } from './shared/studio';
import { isModelFolder, trainDefault } from './trainDefault';
import { trainDefaultSettings } from './trainDefault/settings';
import { validatePolicy } from './validatePolicy';

type Env = Record<string, string | undefined>;

/** A recipe: what `npm run <script>` runs, from its environment and arguments. */
export interface RecipeEntry {
  /** The npm script that runs it (none: it is a command the trainer runs). */
  script?: string;
  run(env: Env, args: readonly string[]): Promise<void>;
}

/** Every recipe by the name `node dist/recipes.js <name>` takes. */
export const RECIPES: Record<string, RecipeEntry> = {
  'train-default': {
    script: 'train:default',
    run: (env, args) => trainDefault(trainDefaultSettings(env, args, ROOT)),
  },
  'measure-envace': {
    script: 'measure:envace',
    run: (env, args) => measureEnvace(measureSettings(env, args, ROOT, isModelFolder)),
  },
  'measure-foresight': {
    script: 'measure:foresight',
    run: (env, args) => measureForesight(foresightSettings(env, args, ROOT)),
  },
  'grounding-loop': {
    script: 'measure:grounding',
    run: (env, args) => groundingLoop(groundingSettings(env, args, ROOT)),
  },
  'grpo-sanity': { script: 'measure:grpo-sanity', run: (env) => grpoSanity(env) },
  'validate-policy': { run: (_env, args) => validatePolicy(args) },
};
