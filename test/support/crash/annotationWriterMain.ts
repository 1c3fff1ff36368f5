import { appendAnnotationEvent } from '../../../src/core/annotations/store';

/**
 * A child process for the annotation crash test: appends `count` marks `a1`, `a2`, ... to `file`,
 * three in flight at a time (as quick clicks would), and prints `ack <id>` once each is on disk.
 * The parent kills it at a random moment and checks that every acknowledged mark was kept.
 */
async function main(): Promise<void> {
  const [file, countText] = process.argv.slice(2);
  const count = Number(countText);
  for (let i = 1; i <= count; i += 3) {
    const batch = [i, i + 1, i + 2]
      .filter((n) => n <= count)
      .map(async (n) => {
        await appendAnnotationEvent(file, {
          type: 'mark',
          id: `a${n}`,
          author: 'crash-test',
          callId: `e1.t${n}.c1`,
          episodeId: 'e1',
          tool: 'get_order_details',
          kind: 'hallucinated_value',
          severity: 'major',
          path: '$.status',
          note: `mark ${n} `.repeat(1 + (n % 200)),
        });
        process.stdout.write(`ack a${n}\n`);
      });
    await Promise.all(batch);
  }
}

void main();
