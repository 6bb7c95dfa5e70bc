import { workTypes } from '../../domain/time/work-types';
import { byFlag, byText } from './filters';
import { defineResource } from './resource';

export const workTypesResource = defineResource({
  collection: 'work-types',
  label: 'Work type',
  plural: 'work types',
  description:
    'Kinds of work timesheet entries record: the built-ins REG, OT, VAC, SICK and HOL of every company, and its own. ' +
    'Built-ins cannot be deleted; a type entries use cannot be deleted either (deactivate it with is_active false).',
  schema: 'rest/work-types.json',
  service: workTypes,
  filters: [
    byText('code', 'code', 'The type with this code (ignoring case), e.g. OT.'),
    byFlag('is_active', 'isActive', 'Only active (true) or only inactive (false) types.'),
    byFlag('billable', 'billable', 'Only billable (true) or only non-billable (false) types.'),
  ],
});
