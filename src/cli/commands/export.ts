import { StudioError } from '../../core/base/errors';
import type { ExportArgs } from '../../core/training/datasetExport';
import { exportDataset } from '../../core/training/datasetExport';
import { writeTrlDataset } from '../../core/training/launch/trlDataset';
import type { CliIO } from '../io';
import { outFileArg } from '../outArg';
import { exportOtlpCommand } from './exportOtlp';

export type { ExportArgs } from '../../core/training/datasetExport';

/**
 * `rehearse export <trace...> --out rows.jsonl`: training rows for the trainer from recorded runs, or
 * with `--format envace` EnvACE's tool dataset JSON, or with `--format otlp` the runs as OTLP GenAI
 * spans (`exportOtlpCommand`); filters by run, tool and mismatch, an optional
 * split by task into train and held-out files, and a summary of what was exported.
 */
export async function exportCommand(
  traces: string[],
  args: ExportArgs,
  io: CliIO,
): Promise<number> {
  if (!args.out)
    throw new StudioError(
      'USAGE',
      'Missing --out <file>: where to write the rows (JSONL) or, with --format envace, the tool dataset (JSON).',
    );
  outFileArg(
    args.out,
    '--out',
    'the rows, JSONL, with --format envace the tool dataset, JSON, or with --format otlp OTLP JSON',
  );
  if (args.format === 'otlp') return exportOtlpCommand(traces, args.out, io);
  const { summaryText, summaryJson, written, format, heldOutFraction, seed } = await exportDataset(
    traces,
    args,
    writeTrlDataset,
  );
  if (args.json) {
    io.out(
      JSON.stringify(
        {
          ...summaryJson,
          files: written,
          split: heldOutFraction !== undefined ? { heldOutFraction, seed } : null,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  io.out(`exported ${summaryText}`);
  const unit = format === 'envace' ? 'records' : 'rows';
  for (const w of written)
    io.out(`wrote ${w.items} ${unit} of ${w.tasks.length} tasks to ${w.file}`);
  if (heldOutFraction !== undefined)
    io.out(`held-out tasks (seed ${seed}): ${written[1].tasks.join(', ') || '(none)'}`);
  if (format === 'envace')
    io.out(
      'parquet for verl\'s data.train_files: python3 -c "import json,sys,pyarrow as pa,pyarrow.parquet as pq; pq.write_table(pa.Table.from_pylist(json.load(open(sys.argv[1]))), sys.argv[2])" <file.json> <file.parquet>',
    );
  return 0;
}
