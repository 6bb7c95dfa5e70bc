import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger';
import type { DeliveryToStart, DeliveryWorkflows } from '../delivery-workflows';
import { CLAIM_SECONDS } from './claim';
import { CompanyDispatchRate } from './company-dispatch-rate';
import { CompanyQueuedStarts } from './company-queued-starts';
import { roomOf } from './endpoint-room';
import { STARTED, uuids, type EndpointRow } from './statements';

const STARTS_IN_PARALLEL = 16;
/**
 * Rounds of STARTED for rows locked by others, and the pause before each: an attempt's statements hold a row for
 * milliseconds. Past the last, a row left unmarked is claimed again once its claim is over (CLAIM_SECONDS).
 */
const STARTED_ROUNDS = 40;
const STARTED_PAUSE_MS = 25;

/**
 * Starting runs within their endpoints' room (endpoint-room.ts) and their companies' bounds: the start rate
 * (company-dispatch-rate.ts) and the deliveries queued in Temporal (company-queued-starts.ts), each absent when not set.
 */
export class RunStarts {
  private readonly rate: CompanyDispatchRate | null;
  private readonly queue: CompanyQueuedStarts | null;

  constructor(
    private readonly options: {
      deliveryWorkflows: DeliveryWorkflows;
      logger: Logger;
      /** Attempts one endpoint may have in flight: its pipeline's measure (endpoint-room.ts). */
      maxInFlightPerEndpoint: number;
      companyStartsPerSecond?: number;
      companyMaxQueued?: number;
    },
  ) {
    this.rate = options.companyStartsPerSecond ? new CompanyDispatchRate(options.companyStartsPerSecond) : null;
    this.queue = options.companyMaxQueued ? new CompanyQueuedStarts(options.companyMaxQueued) : null;
  }

  /** Whether the claims are to count each company's deliveries queued in Temporal: only when they are bounded. */
  get countsQueued(): boolean {
    return this.queue !== null;
  }

  /** Companies that sit out of the next claim: their start rate spent, or their deliveries queued in Temporal at its bound. */
  sittingOut(): string[] {
    return [...(this.rate?.exhausted() ?? []), ...(this.queue?.full() ?? [])];
  }

  /** How soon a company that sits out may start deliveries again; undefined when none sits out. */
  msUntilNext(): number | undefined {
    const waits = [this.rate?.msUntilNext(), this.queue?.msUntilNext()].filter((ms) => typeof ms === 'number');
    return waits.length > 0 ? Math.min(...waits) : undefined;
  }

  /**
   * Of a batch's deliveries, in event order, those their endpoints have room for (`fitting`: each endpoint's while it has
   * room, none behind deferred ones or behind events waiting outside the claim), and of those the ones whose runs may
   * start now, as far as their companies' bounds allow.
   */
  startable(
    deliveries: DeliveryToStart[],
    endpoints: Map<string, EndpointRow>,
    queued: Map<string, number>,
    behindWaiting: (delivery: DeliveryToStart) => boolean,
  ): { fitting: DeliveryToStart[]; now: DeliveryToStart[] } {
    const room = new Map([...endpoints.values()].map((endpoint) => [endpoint.id, roomOf(endpoint, this.options.maxInFlightPerEndpoint)]));
    const fitting = deliveries.filter((delivery) => {
      if (behindWaiting(delivery)) return false;
      const left = room.get(delivery.input.endpointId) ?? 0;
      // Once an endpoint is out of room, it stays so for the batch: its deliveries keep their order.
      room.set(delivery.input.endpointId, left - 1);
      return left > 0;
    });
    return { fitting, now: this.withinCompanyBounds(fitting, queued) };
  }

  /**
   * Of deliveries in order, those each company's bounds let start now (its deliveries queued in Temporal, its rate), its
   * endpoints taking turns at its room: an endpoint's n-th delivery comes in the n-th turn. An endpoint's deliveries
   * keep their order: once one of them waits, the ones after it do too.
   */
  withinCompanyBounds(deliveries: DeliveryToStart[], queued: Map<string, number>): DeliveryToStart[] {
    if (!this.rate && !this.queue) return deliveries;
    const byCompany = groupBy(deliveries, (delivery) => delivery.input.companyId);
    this.rate?.noteActive(byCompany.keys());
    const chosen = new Set<DeliveryToStart>();
    for (const [companyId, own] of byCompany) {
      const inTurns = inEndpointTurns(own);
      const ones = inTurns.map(() => 1);
      let allowed = inTurns.length;
      if (this.queue) allowed = Math.min(allowed, this.queue.admit(companyId, queued.get(companyId) ?? 0, ones));
      if (this.rate) allowed = Math.min(allowed, this.rate.admit(companyId, ones.slice(0, allowed)));
      const taken = new Set(inTurns.slice(0, allowed));
      const waiting = new Set<string>();
      for (const delivery of own) {
        if (waiting.has(delivery.input.endpointId)) continue;
        if (taken.has(delivery)) chosen.add(delivery);
        else waiting.add(delivery.input.endpointId);
      }
    }
    return deliveries.filter((delivery) => chosen.has(delivery));
  }

  /**
   * Starts the runs, then marks those started (a run already there counts: another dispatcher started it) and lets go of
   * `notNow` (claimed, but left by their company's bounds); a delivery whose start failed keeps its claim, so that it is
   * tried again once the claim is over (CLAIM_SECONDS), not at once against a server that refused it. The runs `first`
   * picks are started before the others: a run's first workflow task comes back with its start (eager start), and the
   * worker takes them in turn. Returns how many were started.
   */
  async start(em: EntityManager, deliveries: DeliveryToStart[], notNow: DeliveryToStart[], first: (delivery: DeliveryToStart) => boolean = () => true): Promise<number> {
    if (deliveries.length === 0 && notNow.length === 0) return 0;
    const started: string[] = [];
    const start = async (delivery: DeliveryToStart) => {
      try {
        await this.options.deliveryWorkflows.start(delivery);
        started.push(delivery.input.deliveryId);
      } catch (error) {
        this.options.logger.warn({ err: error, deliveryId: delivery.input.deliveryId }, `could not start a delivery run; it is tried again in ${CLAIM_SECONDS} s`);
      }
    };
    await runInParallel(deliveries.filter(first), STARTS_IN_PARALLEL, start);
    await runInParallel(deliveries.filter((delivery) => !first(delivery)), STARTS_IN_PARALLEL, start);
    const failed = deliveries.filter((delivery) => !started.includes(delivery.input.deliveryId));
    await this.markStarted(em, {
      started,
      letGo: notNow.map((delivery) => delivery.input.deliveryId),
      failed: failed.map((delivery) => delivery.input.deliveryId),
    });
    return started.length;
  }

  /** STARTED, round after round for the rows others held (STARTED_ROUNDS, STARTED_PAUSE_MS apart). */
  private async markStarted(em: EntityManager, marks: { started: string[]; letGo: string[]; failed: string[] }): Promise<void> {
    for (let round = 1; Object.values(marks).some((ids) => ids.length > 0); round++) {
      if (round > STARTED_ROUNDS) {
        this.options.logger.warn({ deliveryIds: Object.values(marks).flat() }, `deliveries locked by others could not be marked started; they are claimed again in ${CLAIM_SECONDS} s`);
        break;
      }
      if (round > 1) await new Promise((resolve) => setTimeout(resolve, STARTED_PAUSE_MS));
      const [row] = await STARTED.run(em, { started: uuids(marks.started), letGo: uuids(marks.letGo), failed: uuids(marks.failed) });
      const busy = new Set(row?.busy ?? []);
      const stillBusy = (ids: string[]) => ids.filter((id) => busy.has(id));
      marks = { started: stillBusy(marks.started), letGo: stillBusy(marks.letGo), failed: stillBusy(marks.failed) };
    }
  }
}

/** A company's deliveries in its endpoints' turns: every endpoint's first delivery, then their second ones, and so on. */
function inEndpointTurns(own: DeliveryToStart[]): DeliveryToStart[] {
  const turnOf = new Map<DeliveryToStart, number>();
  const seen = new Map<string, number>();
  for (const delivery of own) {
    const turn = seen.get(delivery.input.endpointId) ?? 0;
    seen.set(delivery.input.endpointId, turn + 1);
    turnOf.set(delivery, turn);
  }
  return [...own].sort((a, b) => turnOf.get(a)! - turnOf.get(b)!);
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

async function runInParallel<T>(items: T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}
