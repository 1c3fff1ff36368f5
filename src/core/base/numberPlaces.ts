import { isJsonObject } from './json';

/** `[i]` in a number's name: every item of an array (`$.checks[i].weight`). */
export const EVERY_ITEM = '[i]';

/**
 * The steps of a number's name as a file's JSONPath (`$.checks[i].weight` is `checks`, `[i]`,
 * `weight`), or undefined for a name that is not one (a flag, a setting, a config key).
 */
export function numberNameSteps(name: string): string[] | undefined {
  if (!name.startsWith('$.')) return undefined;
  const steps: string[] = [];
  for (const part of name.slice(2).split('.')) {
    const m = /^([A-Za-z_][\w]*)((?:\[i\])*)$/.exec(part);
    if (!m) return undefined;
    steps.push(m[1], ...Array<string>(m[2].length / EVERY_ITEM.length).fill(EVERY_ITEM));
  }
  return steps;
}

/** One value found at a number's name: its path (array indexes filled in) and what is there. */
export interface NumberPlace {
  at: (string | number)[];
  value: unknown;
}

/**
 * The values `value` holds where a number's name points (`$.checks[i].weight`: each check's
 * weight), in document order; a missing field, or a step through something that is not an object
 * or an array, yields nothing (the schema says what is wrong with those).
 */
export function valuesAtNumberName(value: unknown, name: string): NumberPlace[] {
  const steps = numberNameSteps(name);
  if (!steps) return [];
  let places: NumberPlace[] = [{ at: [], value }];
  for (const step of steps) {
    const next: NumberPlace[] = [];
    for (const p of places) {
      if (step === EVERY_ITEM) {
        if (Array.isArray(p.value))
          p.value.forEach((item: unknown, i) => next.push({ at: [...p.at, i], value: item }));
      } else if (isJsonObject(p.value) && p.value[step] !== undefined)
        next.push({ at: [...p.at, step], value: p.value[step] });
    }
    places = next;
  }
  return places;
}
