import { v7 as uuidv7 } from 'uuid';
import { runProjectCreation } from '../../../../domain/work/project-creation';
import { assertProjectCodeAvailable } from '../../../../domain/work/projects-service';
import type { ProjectCreatedInput } from '../../../../generated/schemas';
import { defineOperation } from '../operation';

/** A multi-step operation: runs as the projectCreation workflow (customer → location → contacts → project). */
export const projectCreated = defineOperation<ProjectCreatedInput>({
  eventType: 'project.created',
  schema: 'inbound/project.created.json',
  summary: 'Creates a project with its customer, location and contacts (a workflow; a resend never duplicates anything).',
  async handle({ data, actor, eventId, em, deps }) {
    // A resend of a finished creation is answered here without starting a workflow.
    await assertProjectCodeAvailable(em, actor.companyId, data.project_code);
    const outcome = await runProjectCreation(
      deps.temporal,
      deps.config.temporal.taskQueue,
      {
        actor,
        eventId,
        projectId: uuidv7(),
        customer: {
          name: data.customer_name,
          type: data.customer_type,
          email: data.customer_email,
          phone: data.customer_phone,
          website: data.customer_website,
          status: data.customer_status,
          notes: data.customer_notes,
        },
        location: {
          name: data.location_name,
          address_line_1: data.location_address_line_1,
          address_line_2: data.location_address_line_2,
          city: data.location_city,
          province: data.location_province,
          postal_code: data.location_postal_code,
          country: data.location_country,
          notes: data.location_notes,
        },
        contacts: data.contacts ?? [],
        project: {
          projectCode: data.project_code,
          name: data.project_name,
          description: data.description,
          priority: data.priority,
          colorIndex: data.color_index,
          startDate: data.start_date,
          endDate: data.end_date,
          equipment: data.equipment,
          customFields: data.custom_fields,
          docs: data.docs,
        },
        accountManagerEmpNumber: data.account_manager_emp_number,
        internalManagerEmpNumber: data.internal_manager_emp_number,
      },
      deps.config.inboundWaitMs,
    );
    if (outcome.state === 'running') {
      return {
        status: 202,
        message: `Project ${data.project_code} accepted and still being created (workflow ${outcome.workflowId})`,
        recordId: outcome.projectId,
        eventId: outcome.eventId,
      };
    }
    return { message: `Project ${data.project_code} created`, recordId: outcome.result.projectId, eventId: outcome.result.eventId };
  },
});
