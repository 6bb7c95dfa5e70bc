import { Pool } from 'pg';
import { parseEncryptionKey } from '../src/config';
import { connectOrm } from '../src/database';
import { freePort } from '../test/helpers/ports';
import { summary } from './http-load';
import { eventTemplate } from './isolation-stack';
import { inLanes, seedTenant } from './seed';
import { type CompiledProject, type NodeProcess, phaseEnv, type Servers, startNode, waitForHttp, waitForOutput } from './stack';

/**
 * Issue 49's benchmark: events written to many feeds and read back, and a long poll's commit → answer.
 *
 * One company with `feeds` feeds, each subscribed to the burst's event type. `events` events are committed at once (in
 * transactions of 100, straight into the outbox, as phase 13 does); the worker's dispatcher appends each to every feed
 * (one statement per claim). Measured: commit of the first → the last entry written, as events and entries a second;
 * then every feed read back over HTTP (pages of 1,000, 16 readers at a time), as entries a second, each feed checked to
 * hold every event once in commit order. Then one consumer long-polls a feed (wait=30) while single events are
 * committed `pollEvents` times, 250 ms apart: the time from each commit to the answer carrying it.
 */
export interface EventFeedSettings {
  feeds: number;
  events: number;
  pollEvents: number;
  timeoutMs: number;
}

export interface EventFeedResult {
  /** Commit of the first event → every entry written. */
  writeSeconds: number;
  entriesWritten: number;
  /** Every feed read back: entries read, the time it took, feeds not holding every event once in commit order. */
  readSeconds: number;
  entriesRead: number;
  feedsOutOfOrder: number;
  /** A long poll's commit → answer. */
  poll: { p50: number; p99: number; max: number };
  pollAnswered: number;
  workerRssMb: number;
}

/** A page of a feed, as far as this phase reads it: shape A bodies, whose event_id is the outbox event's. */
interface FeedPage {
  data: { body: { event_id: string } }[];
  next_cursor: string;
}

const BURST_TYPE = 'customer.updated';
const CHUNK = 100;
const READ_PAGE = 1000;
const READERS = 16;

export async function eventFeedPhase(servers: Servers, compiled: CompiledProject, logDir: string, settings: EventFeedSettings): Promise<EventFeedResult> {
  const processes: NodeProcess[] = [];
  const orm = await connectOrm(servers.databaseUrl, 4);
  const db = new Pool({ connectionString: servers.databaseUrl, max: 4 });
  try {
    const common = phaseEnv(servers, 'event-feeds');
    const apiPort = await freePort();
    // The readers' pages and acknowledgements come from one key: its rate limits must not be what is measured.
    const env = { ...common, RATE_LIMIT_MULTIPLIER: '1000' };
    const worker = startNode('event-feeds-worker', compiled.entry('src/worker/main.ts'), { ...env, WORKER_METRICS_PORT: '0' }, { logDir, as: 'start:worker' });
    const api = startNode('event-feeds-api', compiled.entry('src/api/main.ts'), { ...env, PORT: String(apiPort), HOST: '127.0.0.1' }, { logDir, as: 'start:api' });
    processes.push(worker, api);
    const company = await seedTenant(orm, parseEncryptionKey(common.ENCRYPTION_KEY), 'Event Feeds', { keys: 1, projects: 0 });
    await Promise.all([waitForHttp(`http://127.0.0.1:${apiPort}/health`, api), waitForOutput(worker, 'worker running')]);
    const key = company.keys[0]!.key;
    const call = async <T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> => {
      const response = await fetch(`http://127.0.0.1:${apiPort}/api/v1${path}`, {
        method,
        headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
      if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
      return response.json() as Promise<T>;
    };

    const feedIds: string[] = [];
    await inLanes(settings.feeds, 8, async () => {
      feedIds.push((await call<{ id: string }>('POST', '/webhook-endpoints', { delivery: 'feed', event_types: [BURST_TYPE], api_key_id: null })).id);
    });
    const data = JSON.stringify(await eventTemplate(db, company.companyId));
    const commit = async (count: number): Promise<string[]> =>
      (
        await db.query<{ id: string }>(
          `insert into outbox_events (id, company_id, event_type, data, created_at, updated_at)
           select gen_random_uuid(), $1, $2, $3, clock_timestamp(), clock_timestamp() from generate_series(1, $4) returning id`,
          [company.companyId, BURST_TYPE, data, count],
        )
      ).rows.map((row) => row.id);

    // Written: every event to every feed.
    const owed = settings.events * settings.feeds;
    const writtenCount = async () => Number((await db.query<{ n: string }>('select count(*) as n from webhook_feed_events where endpoint_id = any($1::uuid[])', [feedIds])).rows[0]!.n);
    const writeStart = Date.now();
    for (let committed = 0; committed < settings.events; committed += CHUNK) await commit(Math.min(CHUNK, settings.events - committed));
    let written = await writtenCount();
    while (written < owed && Date.now() - writeStart < settings.timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      written = await writtenCount();
    }
    const writeSeconds = (Date.now() - writeStart) / 1000;
    console.log(`Event feeds: ${settings.events} events to ${settings.feeds} feeds, ${written} of ${owed} entries written in ${writeSeconds.toFixed(1)} s.`);

    // Read back: each feed from its start, page after page, checked against the events' commit order.
    const order = new Map(
      (await db.query<{ id: string }>(`select id from outbox_events where company_id = $1 and event_type = $2 order by created_at, id`, [company.companyId, BURST_TYPE])).rows.map(
        (row, index) => [row.id, index],
      ),
    );
    let entriesRead = 0;
    let feedsOutOfOrder = 0;
    const readStart = Date.now();
    await inLanes(feedIds.length, READERS, async (i) => {
      const feedId = feedIds[i]!;
      const seen: number[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await call<FeedPage>('GET', `/webhook-endpoints/${feedId}/feed?limit=${READ_PAGE}${after ? `&after=${after}` : ''}`);
        for (const event of page.data) seen.push(order.get(event.body.event_id) ?? -1);
        after = page.next_cursor;
        if (page.data.length < READ_PAGE) break;
      }
      entriesRead += seen.length;
      const inOrder = seen.length === settings.events && seen.every((position, index) => position === index);
      if (!inOrder) feedsOutOfOrder++;
    });
    const readSeconds = (Date.now() - readStart) / 1000;
    console.log(`Event feeds: ${entriesRead} entries read back in ${readSeconds.toFixed(1)} s; ${feedsOutOfOrder} feeds not in commit order.`);

    // Long poll: one consumer caught up on the first feed, single events committed 250 ms apart.
    const pollFeed = feedIds[0]!;
    let cursor = (await call<{ feed: { cursor: string } }>('GET', `/webhook-endpoints/${pollFeed}`)).feed.cursor;
    const committedAt = new Map<string, number>();
    const latencies: number[] = [];
    // Ends the consumer's last wait should an event never come.
    const giveUp = new AbortController();
    const consumer = (async () => {
      while (latencies.length < settings.pollEvents) {
        const page = await call<FeedPage>('GET', `/webhook-endpoints/${pollFeed}/feed?wait=30&after=${cursor}`, undefined, giveUp.signal).catch(() => null);
        if (!page) return;
        const at = Date.now();
        for (const event of page.data) {
          const committed = committedAt.get(event.body.event_id);
          if (committed !== undefined) latencies.push(at - committed);
        }
        cursor = page.next_cursor;
      }
    })();
    for (let i = 0; i < settings.pollEvents; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const [id] = await commit(1);
      committedAt.set(id!, Date.now());
    }
    const timer = setTimeout(() => giveUp.abort(), 10_000);
    await consumer;
    clearTimeout(timer);
    const poll = summary(latencies);
    console.log(`Event feeds: long poll commit → answer p50 ${poll.p50} / p99 ${poll.p99} ms (${latencies.length} of ${settings.pollEvents}).`);
    return { writeSeconds, entriesWritten: written, readSeconds, entriesRead, feedsOutOfOrder, poll, pollAnswered: latencies.length, workerRssMb: worker.peakRssMb() };
  } finally {
    await db.end();
    await orm.close();
    for (const proc of processes.reverse()) await proc.stop();
  }
}
