import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { repoRoot } from '../support/paths';

/** The source trees whose import graph must stay acyclic (STYLE.md: no cycle between files or folders). */
const ROOTS = ['src', 'webview'];

/** A directed graph: each node (a repository-relative path) and the nodes it imports. */
type Graph = Map<string, Set<string>>;

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) files.push(...sourceFiles(full));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) files.push(full);
  }
  return files;
}

/** The `.ts` file a relative specifier names (`./x`, `./x.js`, `./dir` for `./dir/index.ts`), if any. */
function resolveRelative(fromFile: string, specifier: string): string | undefined {
  const base = path.resolve(path.dirname(fromFile), specifier);
  const stem = base.replace(/\.(js|ts)$/, '');
  for (const candidate of [`${stem}.ts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** Every file's relative imports (`import`, `import type`, `export ... from`, `require`, `import()`). */
function fileGraph(root: string): Graph {
  const graph: Graph = new Map();
  for (const top of ROOTS) {
    for (const file of sourceFiles(path.join(root, top))) {
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      const targets = new Set<string>();
      for (const imported of info.importedFiles) {
        if (!imported.fileName.startsWith('.')) continue;
        const target = resolveRelative(file, imported.fileName);
        if (target !== undefined) targets.add(path.relative(root, target));
      }
      graph.set(path.relative(root, file), targets);
    }
  }
  return graph;
}

/**
 * The composition roots: a root's own files register its parts (`program.ts` the commands,
 * `extension.ts` the features) and the parts use the root's shared files, so a root and its
 * subfolders are one room. Everywhere else a folder and its subfolders are rooms of their own.
 */
const COMPOSITION_ROOTS = [path.join('src', 'cli'), path.join('src', 'extension')];

/** Both folders are the same room: the same folder, or inside one composition root. */
function sameRoom(a: string, b: string): boolean {
  const root = (f: string) =>
    COMPOSITION_ROOTS.find((r) => f === r || f.startsWith(r + path.sep)) ?? f;
  return root(a) === root(b);
}

/**
 * The same graph between folders: a folder imports another when one of its files does. No two
 * rooms may import each other, in either direction, nested or not.
 */
function folderGraph(files: Graph): Graph {
  const graph: Graph = new Map();
  for (const [file, targets] of files) {
    const from = path.dirname(file);
    const edges = graph.get(from) ?? new Set<string>();
    for (const target of targets) {
      const to = path.dirname(target);
      if (!sameRoom(from, to)) edges.add(to);
    }
    graph.set(from, edges);
  }
  return graph;
}

/** The strongly connected components with more than one node (Tarjan). */
function tangles(graph: Graph): string[][] {
  let counter = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    order.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) as number, order.get(next) as number));
      }
    }
    if (low.get(node) === order.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!order.has(node)) visit(node);
  return found;
}

/** The shortest cycle through `start` that stays inside `component`, as a path `a → b → a`. */
function shortestCycle(graph: Graph, component: Set<string>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head];
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (!component.has(next)) continue;
      if (next === start) {
        const cycle = [start];
        for (
          let back: string | undefined = node;
          back !== start && back !== undefined;
          back = previous.get(back)
        )
          cycle.splice(1, 0, back);
        return [...cycle, start];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start];
}

/** Cycles that together pass through every node of every tangle, one line each. */
function cycles(graph: Graph): string[] {
  const lines: string[] = [];
  for (const component of tangles(graph)) {
    const members = new Set(component);
    const covered = new Set<string>();
    for (const node of component) {
      if (covered.has(node)) continue;
      const cycle = shortestCycle(graph, members, node);
      for (const step of cycle) covered.add(step);
      lines.push(cycle.join(' → '));
    }
  }
  return lines;
}

describe('import graph', () => {
  const files = fileGraph(repoRoot());

  it('reads the sources it guards', () => {
    assert.ok(files.size > 100, `only ${files.size} files found under ${ROOTS.join(', ')}`);
    const edges = [...files.values()].reduce((sum, targets) => sum + targets.size, 0);
    assert.ok(edges > files.size, `only ${edges} relative imports resolved`);
  });

  it('has no cycle between files', () => {
    const found = cycles(files);
    assert.deepEqual(found, [], `import cycles between files:\n  ${found.join('\n  ')}`);
  });

  it('keeps the recipes a layer above the core: they import only the core, only their entry starts them', () => {
    const recipes = path.join('src', 'recipes');
    const core = path.join('src', 'core');
    const inside = (file: string, dir: string) => file.startsWith(dir + path.sep);
    const recipeFiles = [...files.keys()].filter((f) => inside(f, recipes));
    assert.ok(recipeFiles.length > 5, `only ${recipeFiles.length} recipe files found`);
    const wrong: string[] = [];
    for (const [file, targets] of files)
      for (const target of targets) {
        if (inside(file, recipes) && !inside(target, recipes) && !inside(target, core))
          wrong.push(`${file} → ${target} (a recipe imports only the core)`);
        if (!inside(file, recipes) && inside(target, recipes))
          wrong.push(`${file} → ${target} (only the recipes' entry starts them)`);
      }
    assert.deepEqual(wrong, [], `imports across the recipes' layer:\n  ${wrong.join('\n  ')}`);
  });

  it('has no cycle between folders', () => {
    const found = cycles(folderGraph(files));
    assert.deepEqual(found, [], `import cycles between folders:\n  ${found.join('\n  ')}`);
  });
});
