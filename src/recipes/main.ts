// The recipes' entry (bundled to dist/recipes.js): `node dist/recipes.js <recipe> [arguments]`.
// The npm scripts train:default and measure:* run it after a build; nothing imports src/recipes/.
import { errorMessage } from '../core/base/errors';
import { RECIPES } from './recipes';
import { sayError } from './shared/terminal';

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  const recipe = name === undefined ? undefined : RECIPES[name];
  if (!recipe) {
    sayError(`usage: node dist/recipes.js <${Object.keys(RECIPES).join('|')}> [arguments]`);
    return 2;
  }
  try {
    await recipe.run(process.env, args);
    return 0;
  } catch (err) {
    sayError(`${recipe.script ?? name} failed: ${errorMessage(err)}`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  () => process.exit(1),
);
