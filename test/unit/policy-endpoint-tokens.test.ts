// What a served model sampled, as `rollout --record-tokens` records it: the choice's `token_ids`
// (vLLM's return_token_ids) beside one log-prob per id. Anything else is not recorded, so a row never
// trains ids that do not match the log-probs the trainer's importance weights divide by.
import * as assert from 'node:assert/strict';
import type OpenAI from 'openai';
import { sampledTokensOf } from '../../src/core/policy/endpointPolicy';

type Choice = OpenAI.Chat.Completions.ChatCompletion.Choice & { token_ids?: unknown };

function choice(tokenIds: unknown, logprobs: number[] | null): Choice {
  return {
    index: 0,
    finish_reason: 'stop',
    message: { role: 'assistant', content: 'hi', refusal: null },
    logprobs:
      logprobs === null
        ? null
        : {
            content: logprobs.map((logprob) => ({
              token: 'x',
              logprob,
              bytes: null,
              top_logprobs: [],
            })),
            refusal: null,
          },
    token_ids: tokenIds,
  };
}

describe('endpoint policy: sampled tokens of a served model', () => {
  it('records the ids and one log-prob per id', () => {
    assert.deepEqual(sampledTokensOf(choice([5, 9, 2], [-0.5, -1.25, -0.01])), {
      ids: [5, 9, 2],
      logprobs: [-0.5, -1.25, -0.01],
    });
  });

  it('records nothing a server gave in part or broken', () => {
    const cases: [unknown, number[] | null][] = [
      [undefined, [-0.5]], // a server without return_token_ids (OpenAI's)
      [[5, 9], null], // no log-probs
      [[5, 9], [-0.5]], // one log-prob short
      [
        [5, -1],
        [-0.5, -0.5],
      ], // not a token id
      [
        [5, 1.5],
        [-0.5, -0.5],
      ],
      [
        [5, 9],
        [-0.5, 0.3],
      ], // a log-prob above 0
      [
        [5, 9],
        [-0.5, Number.NaN],
      ],
      ['5,9', [-0.5, -0.5]],
    ];
    for (const [ids, logprobs] of cases)
      assert.equal(
        sampledTokensOf(choice(ids, logprobs)),
        undefined,
        JSON.stringify([ids, logprobs]),
      );
  });
});
