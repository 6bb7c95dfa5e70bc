/**
 * How many deliveries the outbox dispatcher may start for each company: a token bucket per company, refilled at
 * `perSecond` up to one second's worth. A batch takes a company's events, in order, while the bucket covers their
 * deliveries (at least one event while it holds a delivery's worth, so an event with many subscribers is not stuck); a
 * company whose bucket is below that sits out until it refills. A bulk import's thousands of deliveries are so started at a steady
 * pace, instead of all at once in front of every other company's (a Temporal server busy starting them answers everyone
 * late). Per dispatcher process.
 */
export class CompanyDispatchRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Companies that sit out: their bucket holds less than one delivery's worth. */
  exhausted(): string[] {
    return [...this.buckets.keys()].filter((companyId) => this.tokensOf(companyId) < 1);
  }

  /**
   * Of a company's next events, given the deliveries each makes, how many may be dispatched now; their deliveries are
   * taken from the bucket.
   */
  admit(companyId: string, deliveriesPerEvent: number[]): number {
    const tokens = this.tokensOf(companyId);
    if (tokens < 1) return 0;
    let events = 0;
    let deliveries = 0;
    for (const count of deliveriesPerEvent) {
      if (events > 0 && deliveries + count > tokens) break;
      events++;
      deliveries += count;
    }
    if (deliveries > 0) this.buckets.set(companyId, { tokens: tokens - deliveries, at: this.now() });
    return events;
  }

  /** Milliseconds until the first company sitting out may start deliveries again; null when none sits out. */
  msUntilNext(): number | null {
    const short = [...this.buckets.keys()].map((companyId) => this.tokensOf(companyId)).filter((tokens) => tokens < 1);
    if (short.length === 0) return null;
    return Math.ceil(((1 - Math.max(...short)) / this.perSecond) * 1000);
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
