import type { InboundOperation } from '../operation';
import { employeeCreated } from './employee-created';
import { projectCreated } from './project-created';
import { testConnection } from './test-connection';

/**
 * Every inbound event_type. A new operation is a schema (schemas/inbound/<event_type>.json) and a handler
 * file here, added to this list.
 */
export const INBOUND_OPERATIONS: InboundOperation<never>[] = [testConnection, employeeCreated, projectCreated] as InboundOperation<never>[];
