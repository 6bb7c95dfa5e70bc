import type { RestCollection } from '../../src/domain/accounts/scopes';
import { seedProject } from '../helpers/fixtures';
import { waitFor } from '../helpers/processes';
import { request, type Tenant, type TestStack } from '../helpers/stack';

/** A record for a path with one id, or the ids of a path with two (a timesheet's entry) that belong together. */
type PathIds = string | Record<string, string>;

interface References {
  fields: Record<string, string>;
  location_pairs: { customer_id: string; location_id: string }[];
  [kind: string]: string[] | Record<string, string> | { customer_id: string; location_id: string }[];
}

/**
 * What the fuzz run's hooks (hooks.py) take from the test: records for the operations on one record, and
 * records that references in generated bodies can name.
 * - `operations`: by `METHOD /path` for an operation with records of its own, else by `/path`.
 * - `used_up`: operations that use a record up (a DELETE, a lifecycle step, a PUT that may close or approve
 *   it): each valid case takes one, once.
 * - `references`: body fields naming another record (`fields`: field → kind), with records of each kind;
 *   `separate_references` the same for the operations that run in a company of their own (see seedRecords).
 */
export interface Seeds {
  operations: Record<string, PathIds[]>;
  used_up: string[];
  /** The line items of each purchase order that can be received, for the items a receipt names. */
  line_items: Record<string, string[]>;
  references: References;
  separate_references: References;
}

/** Records for each operation that uses one up: coverage and fuzzing together send it about this many valid cases. */
const USED_UP_POOL = 16;

/** Fields of request bodies that name an employee. */
const EMPLOYEE_FIELDS = ['employee_id', 'account_manager_id', 'submitted_by_id', 'site_lead_id', 'internal_manager_id'];
/** Fields naming the employee who decides: one whose role may approve any amount. */
const APPROVER_FIELDS = ['approver_id', 'approved_by_id', 'rejected_by_id', 'decided_by_id'];

/** Requests of one company's key, which throw on anything but success. */
function requester(stack: TestStack, tenant: Tenant) {
  const call = async (method: string, path: string, body?: object) => {
    const response = await request(stack.baseUrl, method, `/api/v1/${path}`, { key: tenant.key, body });
    if (response.status >= 300) throw new Error(`seeding ${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  return { call, post: async (collection: string, body: object) => (await call('POST', collection, body)).id as string };
}

/**
 * Seeds `tenant`'s records, and `separate`'s for the operations whose effects reach across a company, which run
 * there (hooks.py): an order needs the approval of every threshold's role up to its amount, and the run's own
 * approval thresholds (created, renamed) would make each order wait for roles nobody holds; a payroll run
 * processes every locked timesheet of its period, those the timesheet operations were given included.
 */
export async function seedRecords(stack: TestStack, tenant: Tenant, separate: Tenant): Promise<Seeds> {
  const { call, post } = requester(stack, tenant);
  const operations: Record<string, PathIds[]> = {};
  const usedUp: string[] = [];
  const add = (key: string, id: PathIds) => (operations[key] ??= []).push(id);
  /** `count` records made by `make`, for an operation that uses them up. */
  const pool = async (key: string, make: (i: number) => Promise<PathIds>) => {
    usedUp.push(key);
    for (let i = 0; i < USED_UP_POOL; i++) add(key, await make(i));
  };
  let serial = 0;
  const unique = () => ++serial;

  const projectId = await seedProject(stack, tenant, 'FUZZ-1');
  const references: Record<string, string[]> = { employee: [], approver: [], customer: [], location: [], project: [projectId], vendor: [], work_order: [], work_type: [], skill_names: [] };
  const locationPairs: { customer_id: string; location_id: string }[] = [];
  const customerWithSite = async () => {
    const customer = await post('customers', { name: `Fuzz Customer ${unique()}` });
    const location = await post('locations', { customer_id: customer, name: `Fuzz Site ${unique()}` });
    return { customer, location };
  };
  const employee = (type = 'site_worker', extra: object = {}) => {
    const n = unique();
    return post('employees', { emp_number: `FUZZ-${n}`, name: `Fuzz Worker ${n}`, email: `fuzz${n}@example.com`, employee_type: type, ...extra });
  };

  // A few records of each collection for the operations that read or change one.
  for (let i = 0; i < 3; i++) {
    const skill = `Fuzz Skill ${unique()}`;
    await post('skills', { name: skill });
    references.skill_names!.push(skill);
    const { customer, location } = await customerWithSite();
    add('/api/v1/customers/{id}', customer);
    add('/api/v1/locations/{id}', location);
    references.customer!.push(customer);
    references.location!.push(location);
    locationPairs.push({ customer_id: customer, location_id: location });
    add('/api/v1/contacts/{id}', await post('contacts', { customer_id: customer, location_id: location, first_name: 'Fuzz', last_name: `Person ${i}` }));
    const vendor = await post('vendors', { vendor_name: `Fuzz Vendor ${unique()}`, regions: ['North'] });
    add('/api/v1/vendors/{id}', vendor);
    references.vendor!.push(vendor);
    add('/api/v1/vendor-locations/{id}', await post('vendor-locations', { vendor_id: vendor, name: `Fuzz Yard ${unique()}` }));
    const workOrder = await post('work-orders', { title: `Fuzz Work ${unique()}`, project_id: projectId });
    add('/api/v1/work-orders/{id}', workOrder);
    references.work_order!.push(workOrder);
    const worker = await employee();
    add('/api/v1/employees/{id}', worker);
    references.employee!.push(worker);
    add('/api/v1/time-off/{id}', await post('time-off', { employee_id: worker, start_date: `2026-0${i + 1}-01`, end_date: `2026-0${i + 1}-02` }));
    const workType = await post('work-types', { name: `Fuzz Type ${unique()}`, code: `FZ${unique()}` });
    add('/api/v1/work-types/{id}', workType);
    references.work_type!.push(workType);
  }
  for (const project of [projectId, await seedProject(stack, tenant, 'FUZZ-2')]) add('/api/v1/projects/{id}', project);
  // Work orders for the reports that generated bodies file (one waiting completion report each).
  for (let i = 0; i < 24; i++) references.work_order!.push(await post('work-orders', { title: `Fuzz Reportable ${unique()}`, project_id: projectId, status: 'in_progress' }));

  // Timesheets: each of a day of its own (one per employee and day), in the status an operation starts from.
  const timesheetWorker = await employee();
  let day = 0;
  const timesheet = async (status: string) => {
    const date = new Date(Date.UTC(2025, 0, 1 + day++)).toISOString().slice(0, 10);
    const entries = [0, 1].map(() => ({ entry_date: date, hours: 2, work_type_code: 'VAC' }));
    return (await call('POST', 'timesheets', { employee_id: timesheetWorker, timesheet_date: date, status, entries })) as { id: string; entries: { id: string }[] };
  };
  for (let i = 0; i < 3; i++) add('/api/v1/timesheets/{id}', (await timesheet('draft')).id);
  for (const [action, status] of [['submit', 'draft'], ['lock', 'submitted'], ['unlock', 'locked'], ['process', 'locked']]) {
    await pool(`POST /api/v1/timesheets/{id}/${action}`, async () => (await timesheet(status!)).id);
  }
  await pool('DELETE /api/v1/timesheets/{id}', async () => (await timesheet('draft')).id);
  await pool('DELETE /api/v1/timesheets/{id}/entries/{entry_id}', async () => {
    const sheet = await timesheet('draft');
    return { id: sheet.id, entry_id: sheet.entries[0]!.id };
  });

  // Who decides: an employee whose role may approve any amount.
  const roleName = 'Fuzz Approver';
  add('/api/v1/approval-thresholds/{id}', await post('approval-thresholds', { role_name: roleName, max_amount: null }));
  // More thresholds, each with an employee holding its role (an order within its amount needs one): PUT's own,
  // as it renames them, and DELETE's.
  const heldThreshold = async () => {
    const role = `Fuzz Role ${unique()}`;
    await employee('office', { role_name: role });
    return post('approval-thresholds', { role_name: role, max_amount: 1000 });
  };
  for (let i = 0; i < 3; i++) add('PUT /api/v1/approval-thresholds/{id}', await heldThreshold());
  const approver = await employee('office', { role_name: roleName });
  references.approver!.push(approver);

  // Reports waiting for approval, each on a work order of its own.
  const report = async (collection: string) => {
    const workOrder = await post('work-orders', { title: `Fuzz Reported ${unique()}`, project_id: projectId, status: 'in_progress' });
    return post(collection, { work_order_id: workOrder, ...(collection === 'daily-reports' ? { report_date: '2026-03-02' } : {}) });
  };
  for (const collection of ['daily-reports', 'completion-reports']) {
    add(`/api/v1/${collection}/{id}`, await report(collection));
    for (const decision of ['approve', 'reject']) await pool(`POST /api/v1/${collection}/{id}/${decision}`, () => report(collection));
  }

  // Purchase orders in the status each operation starts from, and attachments, in the separate company: one
  // approval threshold, for any amount, and an employee holding its role. And a payroll run.
  const buyer = requester(stack, separate);
  await buyer.post('approval-thresholds', { role_name: roleName, max_amount: null });
  const poApprover = await buyer.post('employees', { emp_number: 'FUZZ-PO', name: 'Fuzz Buyer', email: 'buyer@example.com', employee_type: 'office', role_name: roleName });
  const poVendor = await buyer.post('vendors', { vendor_name: 'Fuzz PO Vendor' });
  const poProject = await seedProject(stack, separate, 'FUZZ-PO');
  const lineItems: Record<string, string[]> = {};
  const order = async (...steps: string[]) => {
    const items = [0, 1].map((n) => ({ description: `Fuzz item ${n}`, quantity: 5, unit_price: 10 }));
    const created = (await buyer.call('POST', 'purchase-orders', { vendor_id: poVendor, project_id: poProject, line_items: items })) as { id: string; line_items: { id: string }[] };
    for (const step of steps) await buyer.call('POST', `purchase-orders/${created.id}/${step}`, step === 'approve' ? { approver_id: poApprover } : {});
    lineItems[created.id] = created.line_items.map((item) => item.id);
    return created.id;
  };
  for (let i = 0; i < 3; i++) {
    const draft = await order();
    for (const path of ['', '/attachments']) add(`/api/v1/purchase-orders/{id}${path}`, draft);
  }
  await pool('POST /api/v1/purchase-orders/{id}/submit', () => order());
  // PUT's own drafts: it changes them, but leaves them drafts.
  for (let i = 0; i < 3; i++) add('PUT /api/v1/purchase-orders/{id}', await order());
  for (const decision of ['approve', 'reject']) await pool(`POST /api/v1/purchase-orders/{id}/${decision}`, () => order('submit'));
  await pool('POST /api/v1/purchase-orders/{id}/receive', () => order('submit', 'approve'));
  const attachedOrder = operations['/api/v1/purchase-orders/{id}']![0] as string;
  const attach = async () => {
    const response = await fetch(`${stack.baseUrl}/api/v1/purchase-orders/${attachedOrder}/attachments?filename=seed.pdf`, {
      method: 'POST',
      headers: { 'X-API-Key': separate.key, 'Content-Type': 'application/pdf' },
      body: Buffer.from('%PDF-1.4 seed'),
    });
    if (response.status !== 201) throw new Error(`seeding an attachment: ${response.status} ${await response.text()}`);
    return { id: attachedOrder, attachment_id: ((await response.json()) as { id: string }).id };
  };
  for (let i = 0; i < 3; i++) add('/api/v1/purchase-orders/{id}/attachments/{attachment_id}', await attach());
  await pool('DELETE /api/v1/purchase-orders/{id}/attachments/{attachment_id}', attach);

  // Report schedules, and a generated report.
  const schedule = () => post('report-schedules', { name: `Fuzz Schedule ${unique()}`, report_type: 'open_work_orders_by_project', cron: '0 6 * * 1' });
  for (const path of ['', '/pause', '/unpause', '/run']) add(`/api/v1/report-schedules/{id}${path}`, await schedule());
  const reported = operations['/api/v1/report-schedules/{id}/run']![0] as string;
  await call('POST', `report-schedules/${reported}/run`);
  const generated = await waitFor(async () => (await request(stack.baseUrl, 'GET', `/api/v1/report-runs?schedule_id=${reported}`, { key: tenant.key })).body.data[0]?.id, 30_000, 'a report');
  for (const path of ['', '/download']) add(`/api/v1/report-runs/{id}${path}`, generated);
  add('/api/v1/payroll-runs/{id}', (await buyer.call('POST', 'payroll-runs', { period_start: '2026-03-01', period_end: '2026-03-31' })).id);

  // A webhook endpoint nothing listens at (its deliveries fail fast: what the delivery operations are about),
  // its test delivery and a bulk recovery. The update has an endpoint of its own: a valid one may disable it, and a
  // test send or a recovery is then rightly refused (409), which on the shared one made a run warn of valid cases refused.
  const endpoint = () => post('webhook-endpoints', { url: 'https://127.0.0.1:9/hook', event_types: ['*'] });
  const failing = await endpoint();
  for (const path of ['/rotate-secret', '/close-circuit', '/test', '/attempts', '/recover']) add(`/api/v1/webhook-endpoints/{id}${path}`, failing);
  add('/api/v1/webhook-endpoints/{id}', await endpoint());
  const delivery = (await call('POST', `webhook-endpoints/${failing}/test`)).id as string;
  for (const path of ['', '/attempts', '/retry']) add(`/api/v1/webhook-deliveries/{id}${path}`, delivery);
  const recovery = (await call('POST', `webhook-endpoints/${failing}/recover`, { since: '2026-01-01T00:00:00Z' })).id as string;
  add('/api/v1/webhook-endpoints/{id}/recoveries/{recovery_id}', { id: failing, recovery_id: recovery });

  // A feed with an event in it: a read answers at once (a long poll waits only at the end of a feed, and nothing here
  // acknowledges past its start); acknowledgements are given its start's cursor, which commits without moving it.
  const feed = await post('webhook-endpoints', { delivery: 'feed', event_types: ['customer.*'], api_key_id: null });
  for (const path of ['/feed', '/feed/ack']) add(`/api/v1/webhook-endpoints/{id}${path}`, feed);
  await post('customers', { name: `Fuzz Feed Customer ${unique()}` });
  await waitFor(async () => (await call('GET', `webhook-endpoints/${feed}/feed`)).data.length > 0, 30_000, 'the feed to have an event');
  references.feed_cursor = [(await call('GET', `webhook-endpoints/${feed}`)).feed.acknowledged_cursor as string];

  // Records for each DELETE, with nothing that refers to them.
  const deletions = {
    'approval-thresholds': heldThreshold,
    contacts: () => post('contacts', { customer_id: locationPairs[0]!.customer_id, first_name: 'Fuzz', last_name: `Gone ${unique()}` }),
    customers: () => post('customers', { name: `Fuzz Gone ${unique()}` }),
    employees: () => employee(),
    locations: () => post('locations', { customer_id: locationPairs[0]!.customer_id, name: `Fuzz Gone ${unique()}` }),
    projects: () => seedProject(stack, tenant, `FUZZ-GONE-${unique()}`),
    'report-schedules': schedule,
    skills: () => post('skills', { name: `Fuzz Gone ${unique()}` }),
    'time-off': () => {
      const date = new Date(Date.UTC(2027, 0, unique())).toISOString().slice(0, 10);
      return post('time-off', { employee_id: timesheetWorker, start_date: date, end_date: date });
    },
    vendors: () => post('vendors', { vendor_name: `Fuzz Gone ${unique()}` }),
    'vendor-locations': async () => post('vendor-locations', { vendor_id: await post('vendors', { vendor_name: `Fuzz Yard Owner ${unique()}` }), name: `Fuzz Gone ${unique()}` }),
    'webhook-endpoints': endpoint,
    'work-orders': () => post('work-orders', { title: `Fuzz Gone ${unique()}`, project_id: projectId }),
    'work-types': () => post('work-types', { name: `Fuzz Gone ${unique()}`, code: `FG${unique()}` }),
  } satisfies Partial<Record<RestCollection | 'webhook-endpoints', () => Promise<string>>>;
  for (const [collection, make] of Object.entries(deletions)) await pool(`DELETE /api/v1/${collection}/{id}`, make);
  // Closing takes projects with no open work orders; PUT may close one too.
  for (const operation of ['POST /api/v1/projects/{id}/close', 'PUT /api/v1/projects/{id}']) await pool(operation, () => seedProject(stack, tenant, `FUZZ-${unique()}`));

  const fields = Object.fromEntries([
    ...EMPLOYEE_FIELDS.map((f) => [f, 'employee']),
    ...APPROVER_FIELDS.map((f) => [f, 'approver']),
    ['customer_id', 'customer'],
    ['location_id', 'location'],
    ['project_id', 'project'],
    ['vendor_id', 'vendor'],
    ['work_order_id', 'work_order'],
    ['work_type_id', 'work_type'],
    ['cursor', 'feed_cursor'],
  ]);
  return {
    operations,
    used_up: usedUp,
    line_items: lineItems,
    references: { ...references, fields, location_pairs: locationPairs },
    separate_references: { fields, location_pairs: [], approver: [poApprover], project: [poProject], vendor: [poVendor] },
  };
}
