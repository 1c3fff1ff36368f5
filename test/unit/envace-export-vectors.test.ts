// Issue 39, part 2: the EnvACE export as EnvACE's own code reads it. The vectors were printed by
// EnvACE's code at 173e941 (get_messages_str_v2, verl's OpenAIFunctionToolSchema,
// MCPChecklistTool._load_dataset_data, ChecklistInteraction with a literal judge, _aggregate_turn_score
// and the reward manager's normalization) over the export of the runs in
// test/fixtures/envace/export-runs: test/fixtures/envace/export_vectors.py, whose docstring holds
// the command. The export of those runs must be the records the vectors were made from.
import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { envaceToolSchema, envaceToolSchemaFault } from '../../src/core/protocol/envaceTools';
import type { ToolDefinition } from '../../src/core/protocol/types';
import { loadTasks } from '../../src/core/tasks/format/loader';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import type { EnvaceRecord, EnvaceExportSummary } from '../../src/core/training/envaceExport';
import { exportEnvace } from '../../src/core/training/envaceExport';
import { envaceChecklist } from '../../src/core/training/envaceChecklist';
import { fromRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

interface ExportVectors {
  envace_commit: string;
  records: Record<string, EnvaceRecord[]>;
  outputs: Record<
    string,
    {
      task: string;
      messages_str: string;
      kept_by_dataset: boolean;
      loaded_by_mcp_tool: boolean | string;
      score: number;
    }
  >;
  schemas: {
    case: string;
    tool: ToolDefinition;
    exported: unknown;
    verl_accepts: boolean;
  }[];
}

const VECTORS = JSON.parse(
  readFileSync(fromRoot('test', 'fixtures', 'envace', 'export.vectors.json'), 'utf8'),
) as ExportVectors;
const RUNS = fromRoot('test', 'fixtures', 'envace', 'export-runs');

function traceOf(policy: string): string {
  const [run] = readdirSync(path.join(RUNS, policy));
  return path.join(RUNS, policy, run, 'trace.jsonl');
}

async function exampleTasks(): Promise<Map<string, TaskFile>> {
  const loaded = await loadTasks([fromRoot('examples', 'tasks')]);
  return new Map(loaded.map(({ task }) => [task.id, task]));
}

async function exportOf(
  trace: string,
  tasks: Map<string, TaskFile>,
): Promise<{ records: EnvaceRecord[]; summary: EnvaceExportSummary }> {
  const records: EnvaceRecord[] = [];
  const summary = await exportEnvace([trace], { tasks }, (r) => records.push(r));
  return { records, summary };
}

/** The studio's reward of each episode of a run, as its trace recorded it. */
function rewards(trace: string): Map<string, number | null | undefined> {
  const out = new Map<string, number | null | undefined>();
  for (const line of readFileSync(trace, 'utf8').split('\n').filter(Boolean)) {
    const e = JSON.parse(line) as { type: string; episodeId: string; reward?: number | null };
    if (e.type === 'episode.end') out.set(e.episodeId, e.reward);
  }
  return out;
}

describe("the EnvACE export as EnvACE's own code reads it (issue 39, vectors)", () => {
  const dir = useTempDir('envace-export-vectors-');

  for (const policy of ['default', 'reference']) {
    it(`${policy} policy: the export is the records the vectors were made from`, async () => {
      const { records } = await exportOf(traceOf(policy), await exampleTasks());
      assert.deepEqual(JSON.parse(JSON.stringify(records)), VECTORS.records[policy]);
    });

    it(`${policy} policy: EnvACE's formula with a literal judge gives each record the studio's reward, and its dataset keeps every record`, () => {
      const studio = rewards(traceOf(policy));
      for (const record of VECTORS.records[policy]) {
        const episode = record.extra_info.studio_episode;
        const out = VECTORS.outputs[`${policy}/${episode}`];
        assert.equal(out.kept_by_dataset, true, `${out.task}: verl's schema check drops it`);
        assert.equal(
          out.loaded_by_mcp_tool,
          true,
          `${out.task}: ${String(out.loaded_by_mcp_tool)}`,
        );
        // bank-0058: the add_payee of the first user turn is judged in that turn (before: 5.25 and
        // 3.25 by EnvACE against the studio's 6.25 and 4.25).
        assert.equal(out.score, studio.get(episode), `${out.task} (${episode})`);
      }
    });

    it(`${policy} policy: get_messages_str_v2 shows every final answer as the user-visible reply`, () => {
      for (const record of VECTORS.records[policy]) {
        const out = VECTORS.outputs[`${policy}/${record.extra_info.studio_episode}`];
        const answers = record.extra_info.messages.filter(
          (m) => m.role === 'assistant' && !m.tool_calls && m.name === undefined,
        );
        const next = (m: (typeof answers)[number]) =>
          record.extra_info.messages[record.extra_info.messages.indexOf(m) + 1];
        for (const answer of answers.filter((m) => next(m)?.name !== 'error_tool_call')) {
          const reply = answer.content.split('</think>').slice(1).join('</think>').trim();
          assert.ok(reply, `${out.task}: an empty final answer`);
          assert.ok(
            out.messages_str.includes(`content.user_visible_reply: ${reply}\n`),
            `${out.task}: the judge does not see "${reply}" as the reply`,
          );
        }
      }
    });
  }

  it('default policy: the episode whose first act did not parse is exported as EnvACE records it, with its error_tool_call, and said so', async () => {
    const { records, summary } = await exportOf(traceOf('default'), await exampleTasks());
    const record = records.find((r) => r.extra_info.studio_task === 'multi_turn_base_0');
    assert.ok(record, 'multi_turn_base_0 is exported');
    const messages = record.extra_info.messages;
    const at = messages.findIndex((m) => m.role === 'tool');
    assert.deepEqual(
      [messages[at - 1].role, messages[at - 1].tool_calls, messages[at].name],
      ['assistant', undefined, 'error_tool_call'],
    );
    assert.match(
      messages[at].content,
      /^\{"error_tool_call": "One tool call can not be parsed as JSON: /,
    );
    // Every user turn of the task stays, for interaction.py to read.
    assert.equal(messages.filter((m) => m.role === 'user').length, 4);
    assert.deepEqual(summary.unparsed, [
      { episode: 'e2', task: 'multi_turn_base_0', turn: 'e2.t1', code: 'JSON_DECODE_ERROR' },
    ]);
    assert.deepEqual(summary.skipped, []);
  });

  it("verl's verdict on each schema case: the export refuses exactly the schemas verl refuses", () => {
    for (const c of VECTORS.schemas) {
      assert.deepEqual(envaceToolSchema(c.tool), c.exported, c.case);
      const fault = envaceToolSchemaFault(c.tool);
      assert.equal(fault === undefined, c.verl_accepts, c.case);
    }
    assert.deepEqual(envaceToolSchemaFault(VECTORS.schemas[0].tool), {
      path: '$.properties.status.enum',
      problem: 'is "abc", not a list',
    });
  });

  it('a tool whose enum is "abc" stops the export with ENVACE_TOOL_SCHEMA_INVALID, naming the tool and the path', async () => {
    const lines = readFileSync(traceOf('reference'), 'utf8').split('\n').filter(Boolean);
    const bad = lines.map((line) => {
      const e = JSON.parse(line) as { type: string; tools?: ToolDefinition[] };
      if (e.type !== 'episode' || !e.tools) return line;
      e.tools = e.tools.map((t) =>
        t.name === 'pay_bill'
          ? {
              ...t,
              parameters: {
                type: 'object',
                properties: { account_id: { type: 'string', enum: 'abc' } },
              },
            }
          : t,
      );
      return JSON.stringify(e);
    });
    const trace = path.join(dir(), 'trace.jsonl');
    await fs.writeFile(trace, bad.join('\n') + '\n');
    await assert.rejects(exportOf(trace, await exampleTasks()), (e: unknown) => {
      assert.ok(e instanceof StudioError);
      assert.equal(e.code, 'ENVACE_TOOL_SCHEMA_INVALID');
      assert.match(
        e.message,
        /^Tool pay_bill \(task bank-0058, episode e1\): \$\.properties\.account_id\.enum of its input schema is "abc", not a list\./,
      );
      return true;
    });
  });
});

describe('envaceChecklist: where an untimed call item goes, and what no turn can express (issue 39)', () => {
  const ok = { response: { text: ['{}'] } };
  const call = (name: string, args: Record<string, string> = {}) => ({
    name,
    arguments: args,
    outcome: ok,
  });
  const task = (checks: TaskFile['checks']): TaskFile =>
    ({ turns: [{ user: 'one' }, { user: 'two' }], checks }) as unknown as TaskFile;

  it('a call check met in the first user turn is judged there; a forbidden call after the first step is reported', () => {
    const steps = [
      [[call('find')], [call('add_payee')], []],
      [[call('get')], [call('freeze_card')], []],
    ];
    const { checklist, unfaithful } = envaceChecklist(
      task([
        { id: 'added', kind: 'call', tool: 'add_payee', weight: 2 },
        { id: 'no-freeze', kind: 'no_call', tool: 'freeze_card', weight: 0.5 },
      ]),
      {
        steps,
        verdicts: new Map([
          ['added', true],
          ['no-freeze', false],
        ]),
      },
    );
    assert.deepEqual(
      checklist.map((t) => t.map((i) => i.id)),
      [['added'], ['no-freeze']],
    );
    // EnvACE's judge passes no-freeze at the turn's first step, before the freeze_card call.
    assert.deepEqual(unfaithful, [
      { item: 'no-freeze', weight: 0.5, studio: false, envace: true, turn: 1 },
    ]);
  });

  it('an item the studio could not grade stays at the last user turn', () => {
    const { checklist, unfaithful } = envaceChecklist(
      task([{ id: 'added', kind: 'call', tool: 'add_payee', weight: 2 }]),
      { steps: [[[call('add_payee')], []]], verdicts: new Map([['added', null]]) },
    );
    assert.deepEqual(
      checklist.map((t) => t.map((i) => i.id)),
      [['answered-t0'], ['added']],
    );
    assert.deepEqual(unfaithful, []);
  });
});
