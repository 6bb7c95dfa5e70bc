/** The fewest events a company's claim takes while its events wait for room: a healthy endpoint's pipeline refills a few at a time. */
export const MIN_CLAIM = 4;

/**
 * How many of one company's waiting events the outbox dispatcher claims at once, learned from what its last claims could
 * do. A company whose healthy endpoint has a backlog has its events wait in the outbox for the endpoint's room; each
 * attempt that finishes makes room for one or two, and a claim of a whole share of the batch (up to 100 events) to
 * write those cost the worker a tenth of a delivery's CPU in events read, parsed and put back.
 *
 * A claim reaches as far as its last event that made progress (a delivery written, or dispatched): when that is short
 * of the claim's end, the next claim takes twice the reach; when the claim's last event made progress and it took all
 * it could, the next takes twice as many, back to the batch's share (the company is then forgotten). An endpoint that
 * goes faster than its company's others so keeps its lead: the events it gets deliveries from lie beyond those waiting
 * for the slower one, and they count.
 */
export class CompanyClaimSizes {
  /** Companies claiming less than the batch's share, with how many. */
  private readonly sizes = new Map<string, number>();

  constructor(private readonly fullShare: number) {}

  /** Each company claiming less than the batch's share, with how many. */
  limits(): Record<string, number> {
    return Object.fromEntries(this.sizes);
  }

  /** What a company's last claim took (`claimed` events, in order) and how far it reached (its last event that made progress, counted from 1; 0: none did). */
  note(companyId: string, claimed: number, reach: number): void {
    const size = this.sizeOf(companyId);
    let next = size;
    if (reach < claimed) next = Math.max(MIN_CLAIM, 2 * reach);
    else if (claimed >= size) next = 2 * size;
    if (next >= this.fullShare) this.sizes.delete(companyId);
    else this.sizes.set(companyId, next);
  }

  /** How many of the company's events its next claim may take at most. */
  sizeOf(companyId: string): number {
    return this.sizes.get(companyId) ?? this.fullShare;
  }
}
