import { approvalThresholds } from '../../domain/supply/approval-thresholds';
import { byText } from './filters';
import { defineResource } from './resource';

export const approvalThresholdsResource = defineResource({
  collection: 'approval-thresholds',
  label: 'Approval threshold',
  plural: 'approval thresholds',
  description:
    'How much each employee role may approve on a purchase order (max_amount, null for no limit). A submitted purchase order needs the approval of every role ' +
    'whose limit is below its total, up to and including the first role whose limit covers it.',
  schema: 'rest/approval-thresholds.json',
  service: approvalThresholds,
  filters: [byText('role_name', 'roleName', 'The threshold of this role (ignoring case).')],
});
