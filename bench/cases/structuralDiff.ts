import { canonicalJson } from '../../src/core/base/canonicalJson';
import { jsonScores } from '../../src/core/fidelity/scores';
import { structuralDiff } from '../../src/core/fidelity/structuralDiff';
import { perturb, retailDocument } from '../data/retail';
import { benchSize, measure, registerBenchCase } from '../registry';

const BYTES = benchSize(1024 * 1024, 16 * 1024);

registerBenchCase({
  name: 'fidelity: structural diff of two 1 MB responses',
  description:
    'structuralDiff + jsonScores of a ~1 MB retail tool response against a rehearsal that got ~5% of its orders wrong; canonicalJson of the same document; JSON.stringify as the machine baseline',
  targets: [{ measurement: 'structuralDiff + jsonScores', stat: 'medianMs', belowMs: 100 }],
  async run(settings) {
    const actual = retailDocument(BYTES);
    const rehearsal = perturb(actual);
    const diff = structuralDiff(rehearsal, actual);
    const scores = jsonScores(rehearsal, actual, false, false);
    return {
      baseline: 'JSON.stringify (baseline)',
      measurements: {
        'structuralDiff + jsonScores': await measure(() => {
          structuralDiff(rehearsal, actual);
          jsonScores(rehearsal, actual, false, false);
        }, settings),
        structuralDiff: await measure(() => structuralDiff(rehearsal, actual), settings),
        jsonScores: await measure(() => jsonScores(rehearsal, actual, false, false), settings),
        canonicalJson: await measure(() => canonicalJson(actual), settings),
        'JSON.stringify (baseline)': await measure(() => JSON.stringify(actual), settings),
      },
      facts: {
        'document bytes': JSON.stringify(actual).length,
        'diff entries': diff.length,
        'field F1': Number(scores.fieldF1.toFixed(4)),
      },
    };
  },
});
