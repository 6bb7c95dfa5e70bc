import { createWorkOrder, getWorkOrder } from '../../domain/work/work-orders-service';
import { defineResource } from './resource';

export const workOrdersResource = defineResource({
  collection: 'work-orders',
  label: 'Work order',
  plural: 'work orders',
  description: 'Units of work on a project (rest-api.md 2.2).',
  schema: 'rest/work-orders.json',
  service: { create: createWorkOrder, get: getWorkOrder },
});
