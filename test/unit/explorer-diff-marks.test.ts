import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { canonicalJson } from '../../src/core/base/canonicalJson';
import type { Annotation } from '../../src/core/annotations/schema';
import {
  jsonPathRanges,
  lineAt,
  lineStartOffsets,
  pathAtOffset,
} from '../../src/core/fidelity/pathRanges';
import { loadCallView } from '../../src/core/trace/index/callView';
import type { CallView } from '../../src/core/trace/index/callView';
import { callSideDocument } from '../../src/core/explorer/callDocument';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import { annotationMarks, callDiffMarks } from '../../src/core/explorer/diffMarks';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

const pretty = (v: unknown) => canonicalJson(v as never, { indent: 2 }) + '\n';

describe("pathAtOffset (the cursor's JSON path)", () => {
  it("names the innermost path under an offset: a member from its key to its value's end, `$` between members", () => {
    const text = pretty({ status: 'pending', items: [{ id: 1, tags: ['a', 'b'] }] });
    const at = (needle: string, shift = 0) => pathAtOffset(text, text.indexOf(needle) + shift);
    assert.equal(at('"status"'), '$.status');
    assert.equal(at('"pending"', 3), '$.status');
    assert.equal(at('"b"'), '$.items[0].tags[1]');
    assert.equal(at('"tags"', 2), '$.items[0].tags');
    assert.equal(at('"id"'), '$.items[0].id');
    assert.equal(pathAtOffset(text, 0), '$');
    assert.equal(pathAtOffset('not json', 2), undefined);
  });

  it("names the line's path from its indentation or its trailing comma, where only a container holds the cursor (issue 27)", () => {
    const text = pretty({ status: 'pending', items: [{ id: 1, tags: ['a', 'b'] }] });
    const lineStart = (needle: string) => text.lastIndexOf('\n', text.indexOf(needle)) + 1;
    // A fresh diff puts the cursor at column 1 of its first changed line: it used to name `$`.
    assert.equal(pathAtOffset(text, lineStart('"status"')), '$.status');
    assert.equal(pathAtOffset(text, lineStart('"id"')), '$.items[0].id');
    assert.equal(pathAtOffset(text, lineStart('"b"') + 2), '$.items[0].tags[1]');
    // Past the value: the comma and the end of the line.
    assert.equal(pathAtOffset(text, text.indexOf('"a",') + 4), '$.items[0].tags[0]');
    // An array item's opening brace names the item; a closing brace only its container.
    assert.equal(pathAtOffset(text, lineStart('{\n      "id"')), '$.items[0]');
    assert.equal(pathAtOffset(text, text.lastIndexOf('}')), '$');
    // One-line JSON: the innermost path, as before.
    assert.equal(pathAtOffset('{"a":1,"b":{"c":2}}', 13), '$.b.c');
  });
});

describe('jsonPathRanges', () => {
  it('places every path of canonical pretty JSON on its lines, object members from their key', () => {
    const text = pretty({
      status: 'pending',
      items: [{ id: 1, tags: ['a', 'b'] }],
      'odd key': null,
    });
    // {                 0
    //   "items": [      1
    //     {             2
    //       "id": 1,    3
    //       "tags": [   4
    //         "a",      5
    //         "b"       6
    //       ]           7
    //     }             8
    //   ],              9
    //   "odd key": null,10
    //   "status": "pending" 11
    // }                 12
    const ranges = jsonPathRanges(text)!;
    const lines = (p: string) => [ranges.get(p)?.startLine, ranges.get(p)?.endLine];
    assert.deepEqual(lines('$'), [0, 12]);
    assert.deepEqual(lines('$.items'), [1, 9]);
    assert.deepEqual(lines('$.items[0]'), [2, 8]);
    assert.deepEqual(lines('$.items[0].id'), [3, 3]);
    assert.deepEqual(lines('$.items[0].tags[1]'), [6, 6]);
    assert.deepEqual(lines('$["odd key"]'), [10, 10]);
    assert.deepEqual(lines('$.status'), [11, 11]);
    const status = ranges.get('$.status')!;
    assert.equal(text.slice(status.start, status.end), '"status": "pending"');
    assert.equal(ranges.size, 9);
  });

  it('is undefined for text that is not JSON', () => {
    assert.equal(jsonPathRanges('The order was delivered.'), undefined);
  });

  it('finds the line of an offset', () => {
    const starts = lineStartOffsets('ab\ncd\n\nef');
    assert.deepEqual(starts, [0, 3, 6, 7]);
    assert.deepEqual(
      [0, 2, 3, 6, 7, 8].map((o) => lineAt(starts, o)),
      [0, 0, 1, 2, 3, 3],
    );
  });
});

describe('callDiffMarks', () => {
  const tmp = useTempDir();
  const indexOfSample = async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    await sampleShadowRun().write(file);
    return TraceIndex.build(file);
  };

  it('highlights a changed value on both sides and an added field on the actual side only, with one lens per path', async () => {
    const view = await loadCallView(await indexOfSample(), 'e1.t2.c1');
    const { documents, marks, lenses } = callDiffMarks(view);
    const at = (side: string, p: string) => marks.find((m) => m.side === side && m.path === p);
    const lineText = (side: 'rehearsal' | 'actual', line: number) =>
      documents[side].text.split('\n')[line];
    assert.match(
      lineText('rehearsal', at('rehearsal', '$.status')!.range.startLine),
      /"status": "pending"/,
    );
    assert.match(
      lineText('actual', at('actual', '$.status')!.range.startLine),
      /"status": "delivered"/,
    );
    assert.equal(at('actual', '$.status')!.kind, 'changed');
    const fulfillments = at('actual', '$.fulfillments')!;
    assert.equal(fulfillments.kind, 'added');
    assert.match(lineText('actual', fulfillments.range.startLine), /"fulfillments": \[/);
    assert.ok(
      fulfillments.range.endLine > fulfillments.range.startLine + 3,
      'the whole added subtree is covered',
    );
    assert.equal(at('rehearsal', '$.fulfillments'), undefined, 'the rehearsal has no such lines');
    assert.deepEqual(
      lenses.map((l) => [l.path, l.kind, l.side]),
      [
        ['$.fulfillments', 'added', 'actual'],
        ['$.status', 'changed', 'rehearsal'],
      ],
    );
  });

  it('has no marks for a call whose rehearsal did not parse', async () => {
    const view = await loadCallView(await indexOfSample(), 'e2.t3.c1');
    const m = callDiffMarks(view);
    assert.equal(m.documents.rehearsal.language, 'plaintext');
    assert.deepEqual(m.marks, []);
    assert.deepEqual(m.lenses, []);
  });

  it('places annotations at their path, at the nearest ancestor when the path is gone, and at the top for the whole call', async () => {
    const view = await loadCallView(await indexOfSample(), 'e1.t2.c1');
    const { documents } = callDiffMarks(view);
    const base = {
      callId: 'e1.t2.c1',
      verdict: 'error',
      kind: 'hallucinated_value',
      severity: 'major',
      note: '',
      author: 'a',
      createdAt: 't',
      updatedAt: 't',
      updatedBy: 'a',
    } as const;
    const anns: Annotation[] = [
      { ...base, id: 'a1', path: '$.status' },
      { ...base, id: 'a2', path: '$.fulfillments[0].tracking_id', kind: 'missing_field' },
      { ...base, id: 'a3', path: '$.items[0].options.size' },
      { ...base, id: 'a4' },
    ];
    const placed = annotationMarks(documents, anns);
    const text = (i: number) =>
      documents[placed[i].side].text.split('\n')[placed[i].range.startLine];
    assert.deepEqual(
      placed.map((p) => p.side),
      ['rehearsal', 'actual', 'rehearsal', 'rehearsal'],
    );
    assert.match(text(0), /"status": "pending"/);
    assert.match(text(1), /"tracking_id": \[/);
    assert.match(
      text(2),
      /"options": \{/,
      'a path the rehearsal lacks is shown at its nearest ancestor',
    );
    assert.equal(placed[3].range.startLine, 0);
  });
});

describe('callSideDocument: a rehearsal that did not parse (issue 27)', () => {
  const sideOf = (raw: string) => {
    const parsed = parseRehearsalOutput(raw);
    assert.ok(!parsed.ok);
    const view = {
      rehearsal: { text: raw, result: { ok: false as const, ...parsed.error } },
    } as unknown as CallView;
    return callSideDocument(view, 'rehearsal');
  };

  it('says where the JSON failed and points the error at that place in the raw output', () => {
    const raw =
      '<think>\nlooking up\n</think>\n<execution_result>\n{"user_id": "u1",\n "name": }\n</execution_result>';
    const doc = sideOf(raw);
    assert.equal(doc.language, 'plaintext');
    assert.match(
      doc.text,
      /^Rehearsal parse error SIMULATOR_JSON_DECODE_ERROR: .*\(raw output line 6, column 10\)\n/,
    );
    assert.ok(doc.parseError);
    assert.equal(doc.text.slice(doc.parseError.offset, doc.parseError.offset + 1), '}');
    assert.match(doc.parseError.message, /^SIMULATOR_JSON_DECODE_ERROR: /);
  });

  it('points at the output itself when it has no tag', () => {
    const doc = sideOf('The order was delivered.');
    assert.match(doc.text, /\(raw output line 1, column 1\)\n\nRaw rehearsal output:\nThe order/);
    assert.equal(doc.text.slice(doc.parseError!.offset), 'The order was delivered.\n');
  });
});
