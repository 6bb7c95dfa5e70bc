import { eventsWithin } from './company-dispatch-rate';

/** How long a company whose queue was full sits out before the dispatcher counts its queued deliveries again. */
export const QUEUE_RECHECK_MS = 200;

/**
 * How many of one company's deliveries may wait in Temporal's queue at once: started by the outbox dispatcher, their
 * first workflow task not yet taken up by a worker (src/delivery/outbox/statements.ts counts them in PostgreSQL, so
 * every dispatcher replica sees the same count). Temporal's fairness orders a queue by company, but it does not make a
 * deep one free: with hundreds of one company's starts queued on the dev server, another company's first workflow task
 * waited up to 3.8 s. A company with `maxQueued` deliveries queued sits out until the worker has taken some up, then
 * starts as many more, so its burst goes at the pace the workers keep (alone or not) and whoever comes next waits
 * behind `maxQueued` tasks at most. Unlike the start rate, this bound is always on: it costs a lone company nothing.
 */
export class CompanyQueuedStarts {
  /** Companies whose queue was full at their last count, with when they may be counted again. */
  private readonly fullUntil = new Map<string, number>();

  constructor(
    readonly maxQueued: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Companies sitting out: their queue was full less than QUEUE_RECHECK_MS ago. */
  full(): string[] {
    const now = this.now();
    for (const [companyId, until] of [...this.fullUntil]) if (until <= now) this.fullUntil.delete(companyId);
    return [...this.fullUntil.keys()];
  }

  /**
   * Of a company's next events, given the deliveries each makes and the company's deliveries queued now, how many
   * may be dispatched; a company left with events it cannot take sits out until the next count.
   */
  admit(companyId: string, queued: number, deliveriesPerEvent: number[]): number {
    const { events } = eventsWithin(deliveriesPerEvent, this.maxQueued - queued);
    if (events < deliveriesPerEvent.length) this.fullUntil.set(companyId, this.now() + QUEUE_RECHECK_MS);
    return events;
  }

  /** Milliseconds until the first company sitting out is counted again; null when none sits out. */
  msUntilNext(): number | null {
    const now = this.now();
    const untils = [...this.fullUntil.values()];
    return untils.length ? Math.max(0, Math.min(...untils) - now) : null;
  }
}
