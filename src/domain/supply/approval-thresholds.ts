import type { ApprovalThresholdCreate, ApprovalThreshold as ApprovalThresholdRecord, ApprovalThresholdUpdate } from '../../generated/schemas';
import { RecordService } from '../records/record-service';
import { ApprovalThreshold } from './purchase-order.entity';

/**
 * How much each role may approve on a purchase order (one threshold per role, ignoring case). Submitting a
 * purchase order builds its approval chain from them (purchase-order-approval.ts); changing them later does
 * not change the approvers of purchase orders already submitted.
 */
export const approvalThresholds = new RecordService<ApprovalThreshold, ApprovalThresholdRecord, ApprovalThresholdCreate, ApprovalThresholdUpdate>({
  entity: ApprovalThreshold,
  label: 'Approval threshold',
  wire: { role_name: 'roleName', max_amount: 'maxAmount' },
  naturalKey: { scope: null, fields: ['roleName'], describe: (t) => `The role "${t.roleName}" already has an approval threshold`, uniqueIndex: 'approval_thresholds_company_role_unique' },
});
