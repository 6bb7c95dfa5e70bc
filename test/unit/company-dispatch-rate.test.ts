import { CompanyDispatchRate } from '../../src/delivery/outbox/company-dispatch-rate';

describe('CompanyDispatchRate', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 0;
  });

  test("while another company is active, a batch takes a company's events in order while its bucket covers their deliveries", () => {
    const rate = new CompanyDispatchRate(40, clock);
    rate.noteActive(['busy', 'quiet']);
    // 5 endpoints each: 8 events are 40 deliveries, the ninth would overdraw.
    expect(rate.admit('busy', Array<number>(20).fill(5))).toBe(8);
    expect(rate.exhausted()).toEqual(['busy']);
    // Another company has a bucket of its own; events without subscribers cost nothing.
    expect(rate.admit('quiet', [0, 0, 1, 0])).toBe(4);
    expect(rate.exhausted()).toEqual(['busy']);
  });

  test('an event making more deliveries than the bucket holds is let through alone; the company then sits out until the bucket holds one again', () => {
    const rate = new CompanyDispatchRate(40, clock);
    rate.noteActive(['fan-out', 'other']);
    expect(rate.admit('fan-out', [100, 1])).toBe(1);
    expect(rate.exhausted()).toEqual(['fan-out']);
    expect(rate.admit('fan-out', [1])).toBe(0);
    // 61 short of one delivery at 40 a second: 1.525 s.
    expect(rate.msUntilNext()).toBe(1525);
    now = 1_500;
    expect(rate.exhausted()).toEqual(['fan-out']);
    now = 1_525;
    expect(rate.exhausted()).toEqual([]);
    expect(rate.msUntilNext()).toBeNull();
    expect(rate.admit('fan-out', [1, 1])).toBe(1);
  });

  test('a bucket refills to one second of starts at most', () => {
    const rate = new CompanyDispatchRate(10, clock);
    rate.noteActive(['a', 'b']);
    expect(rate.admit('a', Array<number>(15).fill(1))).toBe(10);
    // Idle for a minute (b still active): 10 again, not 600.
    now = 60_000;
    rate.noteActive(['a', 'b']);
    expect(rate.admit('a', Array<number>(15).fill(1))).toBe(10);
    expect(rate.msUntilNext()).toBe(100);
  });

  test('a company alone is not limited and runs up no debt; the rate applies from a full bucket once another is active, until 10 s after its last event', () => {
    const rate = new CompanyDispatchRate(10, clock);
    rate.noteActive(['alone']);
    expect(rate.admit('alone', Array<number>(100).fill(5))).toBe(100);
    expect(rate.exhausted()).toEqual([]);
    now = 100;
    rate.noteActive(['alone', 'newcomer']);
    expect(rate.admit('alone', Array<number>(100).fill(5))).toBe(2);
    expect(rate.exhausted()).toEqual(['alone']);
    // Still limited 10 s after the newcomer's last event (from a bucket refilled meanwhile); alone again just after.
    now = 10_100;
    rate.noteActive(['alone']);
    expect(rate.admit('alone', Array<number>(100).fill(5))).toBe(2);
    now = 10_101;
    expect(rate.exhausted()).toEqual([]);
    expect(rate.admit('alone', Array<number>(100).fill(5))).toBe(100);
  });
});
