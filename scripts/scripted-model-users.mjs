// Prints the compiled end-to-end test files that use the scripted test model: those whose relative
// imports reach out/test/support/scriptedModel.js, directly or through other support files. The slow
// tier (scripts/test-seeds.sh) runs them with the model trained from several seeds.
// Usage: node scripts/scripted-model-users.mjs   (after npx tsc -p .)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', 'out', 'test');
const target = path.join(root, 'support', 'scriptedModel.js');
const tier = path.join(root, 'e2e');
if (!existsSync(tier)) {
  console.error('out/test/e2e is missing: run npx tsc -p . first');
  process.exit(1);
}
const reaches = new Map();

/** Whether `file` imports the scripted model, following relative requires inside out/. */
function usesModel(file, seen = new Set()) {
  if (file === target) return true;
  if (reaches.has(file)) return reaches.get(file);
  if (seen.has(file) || !existsSync(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  let found = false;
  for (const [, spec] of text.matchAll(/require\("(\.{1,2}\/[^"]+)"\)/g)) {
    const resolved = path.resolve(path.dirname(file), spec);
    const candidate = resolved.endsWith('.js') ? resolved : `${resolved}.js`;
    if (usesModel(candidate, seen)) {
      found = true;
      break;
    }
  }
  reaches.set(file, found);
  return found;
}

for (const name of readdirSync(tier).sort())
  if (name.endsWith('.test.js') && usesModel(path.join(tier, name)))
    console.log(path.relative(process.cwd(), path.join(tier, name)));
