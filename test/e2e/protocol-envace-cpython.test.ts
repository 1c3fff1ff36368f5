// The envace parse dialect's primitives checked against CPython itself: EnvACE parses with
// `json.loads` and `str.strip()` (agent_system/environments/env_package/checklist/tool_parser.py
// lines 65-68, agent_system/agent/agents/checklist/tool_simulator_agent.py lines 95 and 128-131),
// so the oracle is the same Python run here. What needs no Python:
// test/unit/protocol-envace-dialect.test.ts.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { JsonValue } from '../../src/core/base/json';
import { jsonTextWithLiterals, parsePythonJson } from '../../src/core/protocol/pythonJsonLoads';
import {
  PYTHON_WHITESPACE_CODE_POINTS,
  sanitizeForTokenizer,
  stripPythonWhitespace,
} from '../../src/core/protocol/pythonText';
import { fromRoot } from '../support/paths';
import { trainerPython } from '../support/trainerPython';

/** Runs a Python snippet that reads JSON on stdin and prints JSON. */
function python(code: string, input: unknown): unknown {
  return JSON.parse(
    execFileSync(trainerPython(), ['-c', code], { input: JSON.stringify(input), encoding: 'utf8' }),
  ) as unknown;
}

/** Texts at the edges of Python's JSON grammar: literals in every position, glued, signed, quoted. */
const TRICKY = [
  'NaN',
  ' NaN ',
  '-NaN',
  'nan',
  'NaNx',
  '1NaN',
  'NaN1',
  '[NaN]',
  '[NaN,]',
  '[1,NaN]',
  'NaN NaN',
  '[NaN NaN]',
  'Infinity',
  '-Infinity',
  '--Infinity',
  '- Infinity',
  'Infinityy',
  '+Infinity',
  '[-Infinity,-1e999]',
  '1e999',
  '-1e999',
  '{"a":Infinity}',
  '{NaN:1}',
  '{"a":NaN,"b":[Infinity,{"c":-Infinity}]}',
  '"NaN"',
  '"\\"NaN"',
  '["a\\\\",NaN]',
  '{"$numberDouble":"NaN"}',
  '1e-999',
  '[1e309, 1.7976931348623157e308]',
  '{"a": 1e999e}',
  'Nan',
  'INFINITY',
];

describe('protocol: the envace dialect against CPython', () => {
  it("every envace expectation of act.json and rehearsal.json is what CPython's json.loads and str.strip give today", () => {
    // Exits 1, naming the file, when a vector's envace field no longer matches the Python steps.
    const report = execFileSync(
      trainerPython(),
      [fromRoot('test', 'vectors', 'protocol', 'envace_expected.py'), '--check'],
      { encoding: 'utf8' },
    );
    assert.match(report, /act\.json: \d+ cases/);
  });

  it("strips exactly the characters of Python's str.isspace() (every BMP code point, asked of Python)", () => {
    const fromPython = python(
      'import json,sys; print(json.dumps([c for c in range(0x110000) if chr(c).isspace()]))',
      null,
    ) as number[];
    assert.deepEqual([...PYTHON_WHITESPACE_CODE_POINTS], fromPython);
    const stripped: number[] = [];
    for (let c = 0; c < 0x10000; c++)
      if (stripPythonWhitespace(`${String.fromCharCode(c)}x${String.fromCharCode(c)}`) === 'x')
        stripped.push(c);
    assert.deepEqual(stripped, fromPython);
    // JavaScript's trim() strips U+FEFF and keeps U+001C and U+0085: neither is Python's.
    assert.equal(stripPythonWhitespace('\ufeffx'), '\ufeffx');
    assert.equal(stripPythonWhitespace('\x1c\x85x\u3000'), 'x');
  });

  it('parsePythonJson accepts and rejects what json.loads does, and reads the same values (non-finite ones encoded)', () => {
    const expected = python(
      [
        'import json,math,sys',
        'def enc(v):',
        '    if isinstance(v, float) and not math.isfinite(v): return {"$numberDouble": "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")}',
        '    if isinstance(v, list): return [enc(x) for x in v]',
        '    if isinstance(v, dict): return {k: enc(x) for k, x in v.items()}',
        '    return v',
        'out = []',
        'for t in json.load(sys.stdin):',
        '    try: out.append({"ok": True, "value": enc(json.loads(t))})',
        '    except json.JSONDecodeError: out.append({"ok": False})',
        'print(json.dumps(out))',
      ].join('\n'),
      TRICKY,
    ) as { ok: boolean; value?: JsonValue }[];
    TRICKY.forEach((text, i) => {
      const got = parsePythonJson(text);
      assert.equal(got.ok, expected[i].ok, `${text}: ${JSON.stringify(got)}`);
      if (got.ok) assert.deepEqual(got.value, expected[i].value, text);
    });
    assert.ok(
      expected.filter((e) => e.ok).length >= 10 && expected.filter((e) => !e.ok).length >= 10,
      'both kinds are exercised',
    );
  });

  it("EnvACE's tokenizer guard (mcp_tool.py lines 273-312): lone surrogates and noncharacters become U+FFFD, pairs stay", () => {
    const input = 'a\ud800b\udfffc\ufdd0d\ufffee\u{1fffe}f\u{1f680}g\u0000h';
    const fromPython = python(
      [
        'import json,sys',
        's = json.load(sys.stdin)',
        'print(json.dumps("".join("\\ufffd" if (0xD800 <= ord(c) <= 0xDFFF or 0xFDD0 <= ord(c) <= 0xFDEF or (ord(c) & 0xFFFE) == 0xFFFE) else c for c in s)))',
      ].join('\n'),
      input,
    ) as string;
    assert.equal(sanitizeForTokenizer(input), fromPython);
    assert.equal(
      sanitizeForTokenizer(input),
      'a\ufffdb\ufffdc\ufffdd\ufffde\ufffdf\u{1f680}g\u0000h',
    );
  });

  it("jsonTextWithLiterals writes encoded numbers back as the literals json.loads reads (the text of EnvACE's arguments strings)", () => {
    const value: JsonValue = {
      a: { $numberDouble: 'NaN' },
      b: [{ $numberDouble: 'Infinity' }, { $numberDouble: '-Infinity' }, 1.5],
      c: 'NaN',
      d: { $numberDouble: 'NaN', e: 1 },
    };
    const text = jsonTextWithLiterals(value);
    assert.equal(
      text,
      '{"a":NaN,"b":[Infinity,-Infinity,1.5],"c":"NaN","d":{"$numberDouble":"NaN","e":1}}',
    );
    const read = python(
      [
        'import json,math,sys',
        'v = json.loads(json.load(sys.stdin))',
        'print(json.dumps([type(v["a"]).__name__, math.isnan(v["a"]), v["b"][0] == math.inf, v["b"][1] == -math.inf, v["c"], v["d"]]))',
      ].join('\n'),
      text,
    );
    assert.deepEqual(read, ['float', true, true, true, 'NaN', { $numberDouble: 'NaN', e: 1 }]);
    assert.deepEqual(parsePythonJson(text), { ok: true, value });
  });
});
