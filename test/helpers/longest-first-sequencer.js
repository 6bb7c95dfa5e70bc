const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest's order, except that the files known to take longest start first (CI's log ends with the ten slowest): on a
 * fresh clone jest knows no file's duration and orders them by size, and the fuzz suite's few minutes, started last,
 * would leave the other worker idle for most of them.
 */
const LONGEST = [
  'test/fuzz/api-fuzz.test.ts',
  'test/integration/bench-smoke.test.ts',
  'test/integration/isolation.test.ts',
  'test/integration/isolation-within-company.test.ts',
  'test/integration/delivery-crashes.test.ts',
  'test/integration/inbound-retries.test.ts',
  'test/integration/ordered-delivery.test.ts',
  'test/integration/cli.test.ts',
];

class LongestFirstSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const place = LONGEST.findIndex((file) => test.path.endsWith(file));
      return place === -1 ? LONGEST.length : place;
    };
    const ordered = super.sort(tests).map((test, index) => ({ test, index }));
    return ordered.sort((a, b) => rank(a.test) - rank(b.test) || a.index - b.index).map(({ test }) => test);
  }
}

module.exports = LongestFirstSequencer;
