import { createLogger } from '../../src/logger';
import { OutboxDispatcher } from '../../src/delivery/outbox/dispatcher';
import { deliveryIdFor } from '../../src/delivery/outbox/fan-out';
import { raiseFeedLagAlerts } from '../../src/delivery/feeds/feed-alerts';
import { feedCursor } from '../../src/delivery/feeds/feed-service';
import { pruneBatch } from '../../src/domain/retention';
import { seedEmployee } from '../helpers/fixtures';
import { waitFor } from '../helpers/processes';
import { holdRowLocks } from '../helpers/row-locks';
import { createTenant, request, startStack, testConfig, type Tenant, type TestStack } from '../helpers/stack';
import { dispatcherOptions } from '../helpers/webhooks';

/** Feeds (issue 49): an endpoint with "delivery": "feed" whose events are read by cursor. */
describe('event feeds', () => {
  let stack: TestStack;
  let tenant: Tenant;
  /** A second dispatcher, as a second worker replica runs one: the two write feeds at once. */
  let replica: OutboxDispatcher;

  beforeAll(async () => {
    // Rate limits a hundred times the spec's: the consumers here read in small pages on purpose.
    stack = await startStack({ worker: false, dispatcher: true, config: await testConfig({ RATE_LIMIT_MULTIPLIER: '100' }) });
    tenant = await createTenant(stack.orm, ['admin']);
    replica = new OutboxDispatcher(dispatcherOptions(stack));
    await replica.start();
  });
  afterAll(async () => {
    await replica.stop();
    await stack.close();
  });

  const call = (method: string, path: string, body?: unknown, key = tenant.key) => request(stack.baseUrl, method, `/api/v1${path}`, { key, body });
  /** A feed of the company's employee events; api_key_id null: the changes this test's key makes are its events too. */
  const newFeed = async (overrides: Record<string, unknown> = {}, key = tenant.key) => {
    const response = await call('POST', '/webhook-endpoints', { delivery: 'feed', event_types: ['employee.*'], api_key_id: null, ...overrides }, key);
    expect(response.status).toBe(201);
    return response.body as { id: string; feed: { cursor: string; acknowledged_cursor: string } };
  };
  const read = (feedId: string, query: string) => call('GET', `/webhook-endpoints/${feedId}/feed${query}`);
  const empNumbers = (page: { data: { body: { data: { emp_number: string } } }[] }) => page.data.map((event) => event.body.data.emp_number);
  /** The outbox events of the employees seeded with these numbers, oldest first. */
  const eventsOf = (numbers: string[]) =>
    stack.em().execute<{ id: string; event_type: string }[]>(
      `select id, event_type from outbox_events where company_id = ? and data->>'emp_number' in (?) order by created_at, id`,
      [tenant.companyId, numbers],
    );
  /** Appends `event` to `feedId` as a dispatcher that claimed `claimed` would; the events it held back. */
  const appendByHand = async (event: { id: string; event_type: string }, feedId: string, claimed: string[]) => {
    const row = { id: deliveryIdFor(event.id, feedId), company_id: tenant.companyId, endpoint_id: feedId, event_id: event.id, event_key: event.event_type, event_type: 'employee.created', payload: '{}' };
    const [{ held }] = await stack.em().execute<{ held: string[] }[]>('select append_feed_events(?::json, ?::uuid[]) as held', [JSON.stringify([row]), `{${claimed.join(',')}}`]);
    return held;
  };

  it('registers a feed without a URL, and refuses a URL with a feed and none with a webhook, naming url', async () => {
    const feed = await newFeed();
    expect(feed).toMatchObject({ delivery: 'feed', url: null, feed: { unacknowledged_events: 0, oldest_unacknowledged_at: null } });
    const withUrl = await call('POST', '/webhook-endpoints', { delivery: 'feed', url: 'https://1.1.1.1/in', event_types: ['*'] });
    expect(withUrl.status).toBe(400);
    expect(withUrl.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'url' } });
    const withoutUrl = await call('POST', '/webhook-endpoints', { event_types: ['*'] });
    expect(withoutUrl.status).toBe(400);
    expect(withoutUrl.body.error).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'url' } });
    const urlLater = await call('PUT', `/webhook-endpoints/${feed.id}`, { url: 'https://1.1.1.1/in' });
    expect(urlLater.status).toBe(400);
    expect(urlLater.body.error.details.field).toBe('url');
    const test = await call('POST', `/webhook-endpoints/${feed.id}/test`);
    expect(test.status).toBe(400);
    expect(test.body.error.details.field).toBe('id');
  });

  it('shows every event once, in commit order, across 20 concurrent writers, two dispatchers and a consumer restarted mid-stream', async () => {
    const feed = await newFeed();
    const writers = 20;
    const perWriter = 10;
    const writing = Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        for (let i = 0; i < perWriter; i++) await seedEmployee(stack, tenant, { empNumber: `W${writer}-${String(i).padStart(2, '0')}` });
      }),
    );
    const seen: { id: string; emp: string; cursor: string; createdAt: string }[] = [];
    // The consumer reads in pages of 7, acknowledging each; after 80 events it "restarts": it forgets its cursor and
    // resumes from the one it acknowledged.
    let cursor: string | undefined;
    let restarted = false;
    while (seen.length < writers * perWriter) {
      const page = await read(feed.id, `?limit=7&wait=5${cursor ? `&after=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      for (const event of page.body.data) seen.push({ id: event.id, emp: event.body.data.emp_number, cursor: event.cursor, createdAt: event.created_at });
      expect((await call('POST', `/webhook-endpoints/${feed.id}/feed/ack`, { cursor: page.body.next_cursor })).status).toBe(200);
      cursor = page.body.next_cursor;
      if (!restarted && seen.length >= 80) {
        restarted = true;
        cursor = undefined;
      }
    }
    await writing;
    expect(new Set(seen.map((event) => event.id)).size).toBe(writers * perWriter);
    expect(new Set(seen.map((event) => event.emp)).size).toBe(writers * perWriter);
    // Positions 1, 2, … 200 with no gap, written in the order of their positions.
    const positions = seen.map((event) => Number(Buffer.from(event.cursor, 'base64url').toString().split('.')[1]));
    expect(positions).toEqual(Array.from({ length: writers * perWriter }, (_, i) => i + 1));
    const times = seen.map((event) => Date.parse(event.createdAt));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // Each writer's events in the order it committed them, though two dispatchers claimed them side by side.
    for (let writer = 0; writer < writers; writer++) {
      const own = seen.map((event) => event.emp).filter((emp) => emp.startsWith(`W${writer}-`));
      expect(own).toEqual([...own].sort());
    }
    // Nothing more comes, and the feed has nothing left unacknowledged.
    const after = await read(feed.id, '?wait=1');
    expect(after.body.data).toEqual([]);
    expect((await call('GET', `/webhook-endpoints/${feed.id}`)).body.feed).toMatchObject({ unacknowledged_events: 0, oldest_unacknowledged_at: null });
  });

  it("holds an event back from a feed behind an earlier one of its company that another dispatcher holds, never behind its own claim's", async () => {
    const first = await newFeed();
    for (const empNumber of ['HOLD-1', 'HOLD-2']) await seedEmployee(stack, tenant, { empNumber });
    await waitFor(async () => (await read(first.id, '')).body.data.length === 2, 10_000, 'both events dispatched');
    const events = await eventsOf(['HOLD-1', 'HOLD-2']);
    expect(events).toHaveLength(2);
    // The two events claimed again, as a dispatcher holds what it claimed; a feed that has neither yet.
    const second = await newFeed();
    await stack.em().execute(`update outbox_events set dispatched_at = null, claimed_until = now() + interval '1 minute' where id in (?, ?)`, [events[0]!.id, events[1]!.id]);
    try {
      // The later event alone: the earlier one is another dispatcher's, and not in the feed yet.
      expect(await appendByHand(events[1]!, second.id, [events[1]!.id])).toEqual([events[1]!.id]);
      expect((await call('GET', `/webhook-endpoints/${second.id}`)).body.feed.unacknowledged_events).toBe(0);
      // Both claimed by this dispatcher (the earlier one had no row for this feed: it is written as it comes).
      expect(await appendByHand(events[1]!, second.id, [events[0]!.id, events[1]!.id])).toEqual([]);
      expect((await call('GET', `/webhook-endpoints/${second.id}`)).body.feed.unacknowledged_events).toBe(1);
    } finally {
      await stack.em().execute(`update outbox_events set dispatched_at = now(), claimed_until = null where id in (?, ?)`, [events[0]!.id, events[1]!.id]);
    }
  });

  it('answers a long poll within a second of the commit, and empty when the wait is over', async () => {
    const feed = await newFeed();
    const started = Date.now();
    const empty = await read(feed.id, '?wait=1');
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ data: [], next_cursor: feed.feed.cursor });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const polling = read(feed.id, '?wait=20').then((response) => ({ response, at: Date.now() }));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await seedEmployee(stack, tenant, { empNumber: 'LONG-POLL' });
    const committed = Date.now();
    const { response, at } = await polling;
    expect(empNumbers(response.body)).toEqual(['LONG-POLL']);
    expect(at - committed).toBeLessThan(1000);
  });

  it('resumes after the acknowledged cursor, never moves it back, and shows the lag', async () => {
    const feed = await newFeed();
    for (const n of [1, 2, 3, 4]) await seedEmployee(stack, tenant, { empNumber: `ACK-${n}` });
    let first = await read(feed.id, '?wait=5&limit=2');
    while (first.body.data.length < 2) first = await read(feed.id, '?wait=5&limit=2');
    expect(empNumbers(first.body)).toEqual(['ACK-1', 'ACK-2']);
    await waitFor(async () => (await call('GET', `/webhook-endpoints/${feed.id}`)).body.feed.unacknowledged_events === 4, 10_000, 'four events written');

    const acked = await call('POST', `/webhook-endpoints/${feed.id}/feed/ack`, { cursor: first.body.next_cursor });
    expect(acked.status).toBe(200);
    expect(acked.body).toMatchObject({ acknowledged_cursor: first.body.next_cursor, unacknowledged_events: 2, oldest_unacknowledged_at: expect.any(String) });
    // A restarted consumer, without a cursor, goes on from the acknowledged one.
    expect(empNumbers((await read(feed.id, '')).body)).toEqual(['ACK-3', 'ACK-4']);
    // An older cursor changes nothing.
    const older = await call('POST', `/webhook-endpoints/${feed.id}/feed/ack`, { cursor: first.body.data[0].cursor });
    expect(older.body.acknowledged_cursor).toBe(first.body.next_cursor);
    expect(empNumbers((await read(feed.id, `?after=${first.body.data[0].cursor}`)).body)).toEqual(['ACK-2', 'ACK-3', 'ACK-4']);
  });

  it("refuses malformed and foreign cursors, a wait out of range and another company's feed, in the error shape", async () => {
    const feed = await newFeed();
    const other = await newFeed();
    const stranger = await createTenant(stack.orm, ['admin']);
    const strangersFeed = await newFeed({}, stranger.key);
    const webhook = await call('POST', '/webhook-endpoints', { url: 'https://1.1.1.1/in', event_types: ['*'] });
    const cases: [string, Promise<Awaited<ReturnType<typeof call>>>, number, string][] = [
      ['a malformed cursor', read(feed.id, '?after=not-a-cursor'), 400, 'after'],
      ['a cursor of another feed', read(feed.id, `?after=${other.feed.cursor}`), 400, 'after'],
      ['a cursor beyond the end', read(feed.id, `?after=${feedCursor(feed.id, 999)}`), 400, 'after'],
      ['a wait over 30 s', read(feed.id, '?wait=31'), 400, 'wait'],
      ['a wait that is no number', read(feed.id, '?wait=soon'), 400, 'wait'],
      ['a limit out of range', read(feed.id, '?limit=0'), 400, 'limit'],
      ["another company's feed", read(strangersFeed.id, ''), 404, 'id'],
      ['a webhook endpoint', read(webhook.body.id, ''), 400, 'id'],
      ['an ack with a foreign cursor', call('POST', `/webhook-endpoints/${feed.id}/feed/ack`, { cursor: other.feed.cursor }), 400, 'cursor'],
      ['an ack without a cursor', call('POST', `/webhook-endpoints/${feed.id}/feed/ack`, {}), 400, 'cursor'],
    ];
    for (const [what, response, status, field] of cases) {
      const { status: got, body } = await response;
      expect({ what, status: got }).toEqual({ what, status });
      expect(body.error).toMatchObject({ code: expect.any(String), message: expect.any(String), details: { field, reason: expect.any(String) } });
    }
  });

  it('answers 410 for a cursor older than retention kept, naming the oldest cursor kept', async () => {
    const feed = await newFeed();
    for (const n of [1, 2, 3, 4]) await seedEmployee(stack, tenant, { empNumber: `OLD-${n}` });
    await waitFor(async () => (await read(feed.id, '?limit=10')).body.data.length === 4, 10_000, 'four events written');
    await stack.em().execute(`update webhook_feed_events set created_at = now() - interval '100 days' where endpoint_id = ? and position <= 2`, [feed.id]);
    expect(await pruneBatch(stack.em(), 'feedEvents', { outboxDays: 30, rateLimitDays: 30, deliveryDays: 90 }, 1000)).toBe(2);

    const gone = await read(feed.id, `?after=${feedCursor(feed.id, 1)}`);
    expect(gone.status).toBe(410);
    expect(gone.body.error).toMatchObject({ code: 'CURSOR_EXPIRED', details: { field: 'after' } });
    expect(gone.body.error.message).toContain(`after=${feedCursor(feed.id, 2)}`);
    // The acknowledged cursor (the start) is gone too: a consumer without a cursor is told the same.
    expect((await read(feed.id, '')).status).toBe(410);
    expect(empNumbers((await read(feed.id, `?after=${feedCursor(feed.id, 2)}`)).body)).toEqual(['OLD-3', 'OLD-4']);
  });

  it('raises a feed_behind alert once when the oldest unacknowledged event waited past the bound, resolved by acknowledging', async () => {
    const feed = await newFeed();
    await seedEmployee(stack, tenant, { empNumber: 'LAG-1' });
    await waitFor(async () => (await read(feed.id, '')).body.data.length === 1, 10_000, 'the event written');
    await stack.em().execute(`update webhook_feed_events set created_at = now() - interval '2 hours' where endpoint_id = ?`, [feed.id]);
    const logger = createLogger('silent');
    const bound = stack.config.webhooks.feedLagAlertMs;
    expect(await raiseFeedLagAlerts(stack.em(), logger, bound)).toBeGreaterThanOrEqual(1);
    expect(await raiseFeedLagAlerts(stack.em(), logger, bound)).toBe(0);
    const open = (await call('GET', '/webhook-alerts?status=open')).body.data.filter((alert: { endpoint_id: string }) => alert.endpoint_id === feed.id);
    expect(open).toEqual([expect.objectContaining({ kind: 'feed_behind', delivery_id: null, message: expect.stringContaining('1 event(s) unacknowledged') })]);

    const page = await read(feed.id, '');
    await call('POST', `/webhook-endpoints/${feed.id}/feed/ack`, { cursor: page.body.next_cursor });
    const after = (await call('GET', '/webhook-alerts?status=open')).body.data.filter((alert: { endpoint_id: string }) => alert.endpoint_id === feed.id);
    expect(after).toEqual([]);
  });

  // Last: it stops the dispatchers.
  it('holds an event back behind an earlier one of its company not in the feed yet: being claimed, or let go unclaimed', async () => {
    // Fresh-clone CIs read feeds with ACK-3 before ACK-2 (the earlier event's claim under way: its rows locked, its
    // claimed_until not committed yet) and with W1-02 before W1-01 (the earlier event let go, held back behind W1-00,
    // unclaimed as the later one's feed was written).
    const feed = await newFeed();
    for (const empNumber of ['CLAIMING-1', 'CLAIMING-2']) await seedEmployee(stack, tenant, { empNumber });
    await waitFor(async () => (await read(feed.id, '')).body.data.length === 2, 10_000, 'both events dispatched');
    const events = await eventsOf(['CLAIMING-1', 'CLAIMING-2']);
    const later = await newFeed();
    // The claims are taken by hand from here on: the dispatchers would claim the events made undispatched below before
    // the lock that stands for another dispatcher's claim is taken. The file's last test, so none needs them after.
    await replica.stop();
    await stack.dispatcher!.stop();
    // Both undispatched again; the earlier one's row locked as a claim in progress locks it, nothing committed.
    await stack.em().execute(`update outbox_events set dispatched_at = null, claimed_until = null where id in (?, ?)`, [events[0]!.id, events[1]!.id]);
    const claiming = await holdRowLocks(stack.config.databaseUrl, 'select 1 from outbox_events where id = $1 for update', [events[0]!.id]);
    const appendLater = () => appendByHand(events[1]!, later.id, [events[1]!.id]);
    try {
      expect(await appendLater()).toEqual([events[1]!.id]);
      // The claim given up: the earlier event unclaimed and unlocked, as one let go is, and still ahead.
      await claiming.release();
      expect(await appendLater()).toEqual([events[1]!.id]);
      expect((await call('GET', `/webhook-endpoints/${later.id}`)).body.feed.unacknowledged_events).toBe(0);
    } finally {
      // Closing the holder's connection ends its transaction, if the test failed before releasing it.
      await claiming.end();
      await stack.em().execute(`update outbox_events set dispatched_at = now(), claimed_until = null where id in (?, ?)`, [events[0]!.id, events[1]!.id]);
    }
  });
});
