import { v7 as uuidv7 } from 'uuid';
import { runProjectCreation } from '../../../../domain/work/project-creation';
import type { ProjectDoc } from '../../../../domain/work/project.entity';
import { assertProjectCodeAvailable } from '../../../../domain/work/projects-service';
import { defineOperation } from '../operation';

interface ContactData {
  first_name: string;
  last_name: string;
  title?: string;
  email?: string;
  phone?: string;
  mobile?: string;
  notes?: string;
  is_primary?: boolean;
  contact_tags?: string[];
}

/** webhooks.md 2.3 (schemas/inbound/project.created.json). */
interface ProjectCreatedData {
  project_code: string;
  project_name: string;
  customer_name: string;
  location_name: string;
  description?: string;
  customer_type?: string;
  customer_email?: string;
  customer_phone?: string;
  customer_website?: string;
  customer_status?: string;
  customer_notes?: string;
  location_address_line_1?: string;
  location_address_line_2?: string;
  location_city?: string;
  location_province?: string;
  location_postal_code?: string;
  location_country?: string;
  location_notes?: string;
  contacts?: ContactData[];
  account_manager_emp_number?: string;
  internal_manager_emp_number?: string;
  priority?: string;
  color_index?: number;
  equipment?: string[];
  custom_fields?: Record<string, string>;
  docs?: ProjectDoc[];
  start_date?: string;
  end_date?: string;
}

/** A multi-step operation: runs as the projectCreation workflow (customer → location → contacts → project). */
export const projectCreated = defineOperation<ProjectCreatedData>({
  eventType: 'project.created',
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
          addressLine1: data.location_address_line_1,
          addressLine2: data.location_address_line_2,
          city: data.location_city,
          province: data.location_province,
          postalCode: data.location_postal_code,
          country: data.location_country,
          notes: data.location_notes,
        },
        contacts: (data.contacts ?? []).map((c) => ({
          firstName: c.first_name,
          lastName: c.last_name,
          title: c.title,
          email: c.email,
          phone: c.phone,
          mobile: c.mobile,
          notes: c.notes,
          isPrimary: c.is_primary,
          tags: c.contact_tags,
        })),
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
