// Every parse-error path end to end: the scripted test model (real ONNX inference in the policy host)
// writes each malformed act and each malformed rehearsal of the protocol for real tasks against a
// real MCP server; the runner must record each one as data, with its code, on its turn or call, and
// then either end the episode (EnvACE's rule) or feed the error back and go on.
import * as assert from 'node:assert/strict';
import { ACT_PARSE_ERROR_CODES, REHEARSAL_PARSE_ERROR_CODES } from '../../src/core/protocol/codes';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import { parseErrorToolText, simulatorErrorText } from '../../src/core/runner/toolMessages';
import {
  ACT_ERROR_CASES,
  FINAL_ANSWER,
  REHEARSAL_ERROR_CASES,
  probeCall,
  probeTask,
} from '../support/scriptedModel';
import { RecordingPolicy } from '../support/recordingPolicy';
import { useRuns, useScriptedPolicy } from '../support/runnerFixture';

const ACT_CASES = ACT_PARSE_ERROR_CODES.map((code) => ({ code, ...ACT_ERROR_CASES[code] }));
const REHEARSAL_CASES = REHEARSAL_PARSE_ERROR_CODES.map((code) => ({
  code,
  ...REHEARSAL_ERROR_CASES[code],
}));

function feedbackText(text: string, kind: 'act' | 'rehearsal'): string {
  const parse = kind === 'act' ? parseActOutput(text) : parseRehearsalOutput(text);
  const error = 'error' in parse && parse.error ? parse.error : undefined;
  assert.ok(error, `${JSON.stringify(text)} parses`);
  // An act's error as EnvACE's tool_parser.py words it; a rehearsal's as its simulator does.
  return kind === 'act'
    ? parseErrorToolText(error.code, error.message, text)
    : simulatorErrorText(error.code, error.message);
}

describe('runner: every parse error of the protocol, written by a real model, is data on its turn or call', function () {
  this.timeout(120_000);
  const scripted = useScriptedPolicy();
  const { run } = useRuns();

  it('each of the five act codes is recorded on its turn and ends the episode (on-parse-error "end")', async () => {
    const { summary, trace } = await run(
      scripted(),
      ACT_CASES.map((c) => probeTask(c.case)),
      { onParseError: 'end' },
    );
    assert.equal(summary.status, 'completed', 'a parse error ends its episode, not the run');
    assert.equal(trace.episodes.length, ACT_CASES.length);
    ACT_CASES.forEach(({ code, text }, i) => {
      const events = trace.of(`e${i + 1}`);
      assert.deepEqual(
        events.map((e) => e.type),
        ['episode', 'turn', 'episode.end'],
        code,
      );
      const [, turn, end] = events;
      assert.ok(turn.type === 'turn' && end.type === 'episode.end');
      assert.equal(turn.text, text, code);
      assert.equal(turn.parse.kind === 'error' && turn.parse.code, code);
      assert.deepEqual([end.status, end.error?.code], ['failed', code]);
      assert.equal(end.success, false, 'the episode is still graded');
    });
  });

  it('each act code is fed back as a tool message (on-parse-error "feedback"); the policy answers and the episode completes', async () => {
    const policy = new RecordingPolicy(scripted());
    const { trace } = await run(
      policy,
      ACT_CASES.map((c) => probeTask(c.case)),
      { onParseError: 'feedback' },
    );
    ACT_CASES.forEach(({ code, text }, i) => {
      const episode = `e${i + 1}`;
      const events = trace.of(episode);
      assert.deepEqual(
        events.map((e) => e.type),
        ['episode', 'turn', 'turn', 'episode.end'],
        code,
      );
      const [, first, second, end] = events;
      assert.ok(first.type === 'turn' && second.type === 'turn' && end.type === 'episode.end');
      assert.equal(first.parse.kind === 'error' && first.parse.code, code);
      assert.deepEqual(second.parse, { kind: 'final', answer: FINAL_ANSWER }, code);
      assert.deepEqual(
        [end.status, end.answer, end.error],
        ['completed', FINAL_ANSWER, undefined],
        code,
      );
      const retry = policy.acts.filter((a) => a.session === `${episode}:act`)[1];
      assert.deepEqual(
        retry.messages.slice(-2),
        [
          { role: 'assistant', content: text },
          { role: 'tool', name: 'error_tool_call', content: feedbackText(text, 'act') },
        ],
        code,
      );
    });
  });

  it('each of the five rehearsal codes is recorded on its call in shadow mode; the actual response is compared as not comparable, and the episode goes on with it', async () => {
    const { summary, trace } = await run(
      scripted(),
      REHEARSAL_CASES.map((c) => probeTask(c.case)),
      { onParseError: 'end' },
    );
    assert.equal(summary.status, 'completed');
    REHEARSAL_CASES.forEach(({ code, text, case: probeCase }, i) => {
      const events = trace.of(`e${i + 1}`);
      assert.deepEqual(
        events.map((e) => e.type),
        ['episode', 'turn', 'call.rehearsal', 'call.actual', 'fidelity', 'turn', 'episode.end'],
        code,
      );
      const rehearsal = trace.rehearsals[i];
      assert.equal(rehearsal.text, text, code);
      assert.equal(!rehearsal.result.ok && rehearsal.result.code, code);
      assert.deepEqual(trace.actuals[i].response, {
        text: [JSON.stringify({ case: probeCase, ok: true })],
      });
      assert.equal(trace.fidelities[i].comparable, 'none', code);
      assert.deepEqual([trace.ends[i].status, trace.ends[i].success], ['completed', true], code);
    });
  });

  it('in imagine mode each rehearsal code ends the episode with that code (on-parse-error "end")', async () => {
    const { trace } = await run(
      scripted(),
      REHEARSAL_CASES.map((c) => probeTask(c.case)),
      { mode: 'imagine', onParseError: 'end' },
    );
    REHEARSAL_CASES.forEach(({ code, case: probeCase }, i) => {
      const events = trace.of(`e${i + 1}`);
      assert.deepEqual(
        events.map((e) => e.type),
        ['episode', 'turn', 'call.rehearsal', 'episode.end'],
        code,
      );
      assert.equal(events[1].type === 'turn' && events[1].text, probeCall(probeCase));
      assert.equal(!trace.rehearsals[i].result.ok && trace.rehearsals[i].result.code, code);
      assert.deepEqual([trace.ends[i].status, trace.ends[i].error?.code], ['failed', code]);
    });
  });

  it("in imagine mode with feedback the rehearsal's parse error is the imagined tool response; the episode goes on and is graded on it", async () => {
    const policy = new RecordingPolicy(scripted());
    const { trace } = await run(
      policy,
      REHEARSAL_CASES.map((c) => probeTask(c.case)),
      { mode: 'imagine', onParseError: 'feedback' },
    );
    REHEARSAL_CASES.forEach(({ code, text }, i) => {
      const episode = `e${i + 1}`;
      assert.deepEqual(
        trace.of(episode).map((e) => e.type),
        ['episode', 'turn', 'call.rehearsal', 'turn', 'episode.end'],
        code,
      );
      const second = policy.acts.filter((a) => a.session === `${episode}:act`)[1];
      assert.deepEqual(
        second.messages.at(-1),
        { role: 'tool', name: 'probe', content: feedbackText(text, 'rehearsal') },
        code,
      );
      const end = trace.ends[i];
      assert.deepEqual([end.status, end.answer], ['completed', FINAL_ANSWER], code);
      // The imagined response was an error, so the required successful call is not there.
      assert.equal(end.checks!.find((c) => c.id === 'called')!.passed, false, code);
    });
  });
});
