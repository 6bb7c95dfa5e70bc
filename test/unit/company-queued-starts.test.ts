import { CompanyQueuedStarts, QUEUE_RECHECK_MS } from '../../src/delivery/outbox/company-queued-starts';

describe('CompanyQueuedStarts', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 0;
  });

  test("takes a company's events in order while they fit beside its queued deliveries; a company left with events sits out until the next count", () => {
    const queue = new CompanyQueuedStarts(50, clock);
    // 30 queued: 20 free, four events of 5 deliveries fit, the fifth would not.
    expect(queue.admit('busy', 30, Array<number>(10).fill(5))).toBe(4);
    expect(queue.full()).toEqual(['busy']);
    // Another company's queue is its own; one whose events all fit does not sit out.
    expect(queue.admit('quiet', 0, [1, 0, 1])).toBe(3);
    expect(queue.full()).toEqual(['busy']);
    expect(queue.msUntilNext()).toBe(QUEUE_RECHECK_MS);
    now = QUEUE_RECHECK_MS - 1;
    expect(queue.full()).toEqual(['busy']);
    expect(queue.msUntilNext()).toBe(1);
    now = QUEUE_RECHECK_MS;
    expect(queue.full()).toEqual([]);
    expect(queue.msUntilNext()).toBeNull();
  });

  test('a full queue takes nothing; an event with more deliveries than the bound goes alone once the queue has room', () => {
    const queue = new CompanyQueuedStarts(10, clock);
    expect(queue.admit('fan-out', 10, [1])).toBe(0);
    expect(queue.admit('fan-out', 12, [1])).toBe(0);
    expect(queue.full()).toEqual(['fan-out']);
    now = QUEUE_RECHECK_MS;
    expect(queue.admit('fan-out', 9, [40, 1])).toBe(1);
    expect(queue.admit('fan-out', 0, [40, 1])).toBe(1);
  });

  test('the bound is on whether or not other companies are active: a lone company is paced by its own queue', () => {
    const queue = new CompanyQueuedStarts(50, clock);
    expect(queue.admit('alone', 0, Array<number>(100).fill(1))).toBe(50);
    expect(queue.full()).toEqual(['alone']);
  });
});
