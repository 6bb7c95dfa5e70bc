import { createClient, type FeedEvent } from '@construction-integration/client';
import { seedEmployee } from '../helpers/fixtures';
import { waitFor } from '../helpers/processes';
import { createTenant, startStack, type Tenant, type TestStack } from '../helpers/stack';

/** The client SDK's feed iterator (sdk/typescript, as built) against the service: long-polling and acknowledging. */
describe('client SDK feed iterator', () => {
  let stack: TestStack;
  let tenant: Tenant;

  beforeAll(async () => {
    stack = await startStack({ worker: false, dispatcher: true });
    tenant = await createTenant(stack.orm);
  });
  afterAll(async () => {
    await stack.close();
  });

  const client = () => createClient({ baseUrl: `${stack.baseUrl}/api/v1`, apiKey: tenant.key });
  const empNumberOf = (event: FeedEvent) => (event.body as { data: { emp_number: string } }).data.emp_number;

  it('yields events as they arrive, acknowledges what the loop processed, and a new iterator resumes after it', async () => {
    const feed = await client().post('/webhook-endpoints', { body: { delivery: 'feed', event_types: ['employee.*'], api_key_id: null } });
    const seen: string[] = [];
    const first = client().feed(feed.id, { wait: 5, limit: 2 });
    // Written while the iterator waits: each arrives through a long poll.
    const writing = (async () => {
      for (const n of [1, 2, 3, 4, 5]) await seedEmployee(stack, tenant, { empNumber: `SDK-${n}` });
    })();
    for await (const event of first) {
      seen.push(empNumberOf(event));
      // Stops inside its third event: that one is not acknowledged, the two before it are.
      if (seen.length === 3) break;
    }
    await writing;
    expect(seen).toEqual(['SDK-1', 'SDK-2', 'SDK-3']);
    // The last changes are committed; the dispatcher writes them to the feed a moment later.
    const inFeed = async () => Number((await stack.em().execute<{ n: string }[]>('select count(*) as n from webhook_feed_events where endpoint_id = ?', [feed.id]))[0]!.n);
    await waitFor(async () => (await inFeed()) === 5, 10_000, 'the five changes in the feed');
    const state = (await client().get('/webhook-endpoints/{id}', { params: { path: { id: feed.id } } })).feed!;
    expect(state.unacknowledged_events).toBe(3);

    // A consumer started again gets the unprocessed event again, then the rest; aborting ends it.
    const abort = new AbortController();
    const resumed: string[] = [];
    for await (const event of client().feed(feed.id, { wait: 1, signal: abort.signal })) {
      resumed.push(empNumberOf(event));
      if (resumed.length === 3) abort.abort();
    }
    expect(resumed).toEqual(['SDK-3', 'SDK-4', 'SDK-5']);
    const after = (await client().get('/webhook-endpoints/{id}', { params: { path: { id: feed.id } } })).feed!;
    expect(after).toMatchObject({ unacknowledged_events: 0, acknowledged_cursor: after.cursor });
  });
});
