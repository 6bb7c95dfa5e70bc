/**
 * The tests a machine may opt out of when it cannot run them (no Python 3, a browser that will not start):
 * SKIP_BROWSER_TESTS=1, SKIP_FUZZ_TESTS=1. Jest reports the skipped tests as skipped. CI never skips them:
 * with CI set, an opt-out fails the run instead.
 */
export const OPT_OUTS = ['SKIP_BROWSER_TESTS', 'SKIP_FUZZ_TESTS'] as const;

export function optedOut(name: (typeof OPT_OUTS)[number]): boolean {
  if (process.env[name] !== '1') return false;
  if (process.env.CI) throw new Error(`${name}=1 is set, and CI runs every test: unset it`);
  return true;
}
