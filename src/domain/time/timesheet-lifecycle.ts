import { ref } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Timesheet as TimesheetRecord, TimesheetUpdate } from '../../generated/schemas';
import { ApiError } from '../../errors';
import { recordEvent } from '../../events/outbox';
import {
  type LifecycleActor,
  timesheetLockedData,
  timesheetProcessedData,
  timesheetSubmittedData,
  timesheetUnlockedData,
} from './time-events';
import type { Actor } from '../accounts/actor';
import { ApiKey } from '../accounts/api-key.entity';
import type { ChangeOptions } from '../records/record-service';
import type { PayrollRun } from './payroll-run.entity';
import type { Timesheet, TimesheetStatus } from './timesheet.entity';
import { timesheets } from './timesheets';

/**
 * The timesheet lifecycle (webhooks.md 3): draft → submitted → locked → processed; unlocking a locked
 * timesheet returns it to draft, so its employee corrects it and submits it again. Each step is one action
 * from one status; any other is a 409 naming the current status.
 */
export const TIMESHEET_ACTIONS = {
  submit: { from: 'draft', to: 'submitted' },
  lock: { from: 'submitted', to: 'locked' },
  unlock: { from: 'locked', to: 'draft' },
  process: { from: 'locked', to: 'processed' },
} as const satisfies Record<string, { from: TimesheetStatus; to: TimesheetStatus }>;

export type TimesheetAction = keyof typeof TIMESHEET_ACTIONS;

/** The action that brings a timesheet to `status` (an inbound timesheet.updated names the status it wants). */
const actionTo = (status: TimesheetStatus): TimesheetAction =>
  (Object.keys(TIMESHEET_ACTIONS) as TimesheetAction[]).find((action) => TIMESHEET_ACTIONS[action].to === status)!;

/** The API key's id and name (the events' *_by and *_by_name), now. */
export async function lifecycleActor(em: EntityManager, actor: Actor): Promise<LifecycleActor> {
  const key = await em.findOneOrFail(ApiKey, { id: actor.apiKeyId, company: actor.companyId });
  return { by: key.id, byName: key.name, at: new Date() };
}

/**
 * Applies `action` to a timesheet loaded for update (employee and entries loaded) and records its event, in the
 * caller's transaction. `payrollRun` marks a timesheet processed by a payroll batch.
 */
export async function applyAction(
  em: EntityManager,
  actor: Actor,
  timesheet: Timesheet,
  action: TimesheetAction,
  options: ChangeOptions & { payrollRun?: PayrollRun } = {},
): Promise<void> {
  const { from, to } = TIMESHEET_ACTIONS[action];
  if (timesheet.status !== from) {
    throw new ApiError('CONFLICT', `Cannot ${action} a ${timesheet.status} timesheet: only a ${from} one can be ${action === 'submit' ? 'submitted' : `${action}ed`}`, {
      field: 'status',
      reason: `is ${timesheet.status}`,
    });
  }
  const who = await lifecycleActor(em, actor);
  timesheet.status = to;
  timesheet.updatedAt = who.at;
  switch (action) {
    case 'submit':
      timesheet.submittedAt = who.at;
      recordEvent(em, actor, 'timesheet.submitted', { a: timesheetSubmittedData(timesheet, who) }, options.eventId);
      break;
    case 'lock':
      timesheet.lockedAt = who.at;
      recordEvent(em, actor, 'timesheet.locked', { a: timesheetLockedData(timesheet, who) }, options.eventId);
      break;
    case 'unlock':
      timesheet.submittedAt = null;
      timesheet.lockedAt = null;
      recordEvent(em, actor, 'timesheet.unlocked', { a: timesheetUnlockedData(timesheet, who) }, options.eventId);
      break;
    case 'process':
      timesheet.processedAt = who.at;
      if (options.payrollRun) timesheet.payrollRun = ref(options.payrollRun);
      recordEvent(em, actor, 'timesheet.processed', { a: timesheetProcessedData(timesheet, who) }, options.eventId);
      break;
  }
  await em.flush();
}

/** One lifecycle action on the company's timesheet `id`, in a transaction of its own; the timesheet as it is then. */
export async function changeTimesheetStatus(em: EntityManager, actor: Actor, id: string, action: TimesheetAction, options: ChangeOptions = {}): Promise<TimesheetRecord> {
  return em.transactional(async (tx) => {
    const timesheet = await timesheets.loadForUpdate(tx, actor.companyId, id);
    await applyAction(tx, actor, timesheet, action, options);
    return timesheets.get(tx, actor.companyId, id);
  });
}

/**
 * An inbound timesheet.updated (webhooks.md 3 and 4): the edits, and the status it names reached through the
 * lifecycle, in one transaction. Unlocking (status draft on a locked timesheet) comes before the edits, every
 * other step after them; the status it already has is no step. The first event carries `options.eventId`.
 */
export async function updateTimesheet(
  em: EntityManager,
  actor: Actor,
  id: string,
  patch: TimesheetUpdate & { status?: TimesheetStatus },
  options: ChangeOptions = {},
): Promise<{ record: TimesheetRecord; changed: boolean }> {
  const { status, ...edits } = patch;
  return em.transactional(async (tx) => {
    let eventId = options.eventId;
    const current = (await timesheets.loadForUpdate(tx, actor.companyId, id)).status;
    const action = status !== undefined && status !== current ? actionTo(status) : null;
    if (action === 'unlock') {
      await changeTimesheetStatus(tx, actor, id, action, { eventId });
      eventId = undefined;
    }
    const edited = Object.keys(edits).length > 0 ? await timesheets.change(tx, actor, id, edits, { eventId }) : { changed: false };
    if (edited.changed) eventId = undefined;
    if (action && action !== 'unlock') await changeTimesheetStatus(tx, actor, id, action, { eventId });
    return { record: await timesheets.get(tx, actor.companyId, id), changed: action !== null || edited.changed };
  });
}
