/** How long after its last dispatched event a company counts as active: while another is, a company's rate applies. */
const ACTIVE_WINDOW_MS = 10_000;

/**
 * How many deliveries the outbox dispatcher may start for each company while other companies are dispatching too: a
 * token bucket per company, refilled at `perSecond` up to one second's worth. A batch takes a company's events, in
 * order, while the bucket covers their deliveries (at least one event while it holds a delivery's worth, so an event
 * with many subscribers is not stuck); a company whose bucket is below that sits out until it refills. A bulk import's
 * thousands of deliveries are so started at a steady pace, instead of all at once in front of every other company's (a
 * Temporal server busy starting them answers everyone late). A company alone, with no other company's event dispatched
 * in the last 10 s, is not limited: nobody is there to slow. Per dispatcher process.
 */
export class CompanyDispatchRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly lastActive = new Map<string, number>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Notes the companies whose events a batch found waiting. */
  noteActive(companyIds: Iterable<string>): void {
    const now = this.now();
    for (const [companyId, at] of [...this.lastActive]) if (now - at > ACTIVE_WINDOW_MS) this.lastActive.delete(companyId);
    for (const companyId of companyIds) this.lastActive.set(companyId, now);
  }

  /** Companies that sit out: another company is active and their bucket holds less than one delivery's worth. */
  exhausted(): string[] {
    return [...this.buckets.keys()].filter((companyId) => this.othersActive(companyId) && this.tokensOf(companyId) < 1);
  }

  /**
   * Of a company's next events, given the deliveries each makes, how many may be dispatched now; their deliveries are
   * taken from the bucket. All of them when no other company is active.
   */
  admit(companyId: string, deliveriesPerEvent: number[]): number {
    if (!this.othersActive(companyId)) return deliveriesPerEvent.length;
    const tokens = this.tokensOf(companyId);
    const { events, deliveries } = eventsWithin(deliveriesPerEvent, tokens);
    if (deliveries > 0) this.buckets.set(companyId, { tokens: tokens - deliveries, at: this.now() });
    return events;
  }

  /** Milliseconds until the first company sitting out may start deliveries again; null when none sits out. */
  msUntilNext(): number | null {
    const short = this.exhausted().map((companyId) => this.tokensOf(companyId));
    if (short.length === 0) return null;
    return Math.ceil(((1 - Math.max(...short)) / this.perSecond) * 1000);
  }

  private othersActive(companyId: string): boolean {
    const now = this.now();
    for (const [other, at] of this.lastActive) if (other !== companyId && now - at <= ACTIVE_WINDOW_MS) return true;
    return false;
  }

  /** The bucket refilled to now; a full one is forgotten (the same as one never used). */
  private tokensOf(companyId: string): number {
    const bucket = this.buckets.get(companyId);
    if (!bucket) return this.perSecond;
    const now = this.now();
    bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    if (bucket.tokens >= this.perSecond) this.buckets.delete(companyId);
    return bucket.tokens;
  }
}

/**
 * How many of a company's next events fit a budget of deliveries, given the deliveries each makes, and those deliveries:
 * the events in order while the budget covers them, and at least the first while it holds one delivery's worth (an
 * event with more subscribers than any budget is not stuck).
 */
export function eventsWithin(deliveriesPerEvent: number[], budget: number): { events: number; deliveries: number } {
  if (budget < 1) return { events: 0, deliveries: 0 };
  let events = 0;
  let deliveries = 0;
  for (const count of deliveriesPerEvent) {
    if (events > 0 && deliveries + count > budget) break;
    events++;
    deliveries += count;
  }
  return { events, deliveries };
}
