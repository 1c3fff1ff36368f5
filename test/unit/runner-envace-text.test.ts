// The tool messages a policy reads after a parse error, as EnvACE writes them (issue 18, row 7):
// EnvACE 173e941, agent_system/environments/env_package/checklist/tool_parser.py (the payloads of
// parse_tool_calls), envs.py (`json.dumps(payload, ensure_ascii=True)` in a tool message named
// "error_tool_call") and simulate_core/_error.py (format_tool_error). The expected strings are what
// those Python lines print for the same inputs.
import * as assert from 'node:assert/strict';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { pythonJsonDumps, pythonStr } from '../../src/core/runner/envaceText';
import { parseErrorToolText, simulatorErrorText } from '../../src/core/runner/toolMessages';

const feedback = (text: string) => {
  const parse = parseActOutput(text);
  assert.equal(parse.kind, 'error', text);
  return parse.kind === 'error'
    ? parseErrorToolText(parse.error.code, parse.error.message, text)
    : '';
};

describe("EnvACE's words for parse errors", () => {
  it("writes each act code's payload as tool_parser.py does, serialised as json.dumps(ensure_ascii=True)", () => {
    assert.equal(
      feedback('I will look.\n<tool_call>\n{"name": "x", "arguments": {}}'),
      '{"error_tool_call": "No tool call found. Please check your output format. The correct (<tool_call>\\n{\\"name\\": ..., \\"arguments\\": { ... }}\\n</tool_call>)."}',
    );
    assert.equal(
      feedback('\n<tool_call>\n{"name": "get_order", "arguments": {"id": "é"\n</tool_call>'),
      '{"error_tool_call": "One tool call can not be parsed as JSON: {\\"name\\": \\"get_order\\", \\"arguments\\": {\\"id\\": \\"\\u00e9\\""}',
    );
    assert.equal(
      feedback('\n<tool_call>\n{"name": "get_order"}\n</tool_call>'),
      '{"error_tool_call": "No argumets found in one tool call. Use empty dict if no argument."}',
    );
    assert.equal(
      feedback(
        '\n<tool_call>\n{"name": "  ", "arguments": {"a": [1, "b", null, true]}}\n</tool_call>',
      ),
      '{"error_tool_call": "INVALID_TOOL_NAME in one tool call", "raw_name": "  ", "arguments": "{\'a\': [1, \'b\', None, True]}"}',
    );
    assert.equal(
      feedback('\n<tool_call>\n{"arguments": {}}\n</tool_call>'),
      '{"error_tool_call": "INVALID_TOOL_NAME in one tool call", "raw_name": "None", "arguments": "{}"}',
    );
  });

  it('writes a simulator error as format_tool_error does', () => {
    assert.equal(
      simulatorErrorText('SIMULATOR_JSON_DECODE_ERROR', 'not JSON: “x”'),
      '{"error_tool_call": {"code": "SIMULATOR_JSON_DECODE_ERROR", "message": "not JSON: \\u201cx\\u201d"}}',
    );
  });

  it("has Python's json.dumps and str for the values they see", () => {
    assert.equal(
      pythonJsonDumps({ a: [1, 2.5, 'x', null, false], b: { c: '\u0000\n😀' } }),
      '{"a": [1, 2.5, "x", null, false], "b": {"c": "\\u0000\\n\\ud83d\\ude00"}}',
    );
    assert.equal(
      pythonStr({ k: "it's", q: 'say "hi"', n: null }),
      "{'k': \"it's\", 'q': 'say \"hi\"', 'n': None}",
    );
    assert.equal(pythonStr(undefined), 'None');
  });
});
