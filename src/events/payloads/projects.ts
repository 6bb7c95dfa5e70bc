import type { Contact } from '../../domain/business/contact.entity';
import type { Customer } from '../../domain/business/customer.entity';
import type { Location } from '../../domain/business/location.entity';
import type { Employee } from '../../domain/people/employee.entity';
import type { Project } from '../../domain/work/project.entity';
import type { WorkOrder } from '../../domain/work/work-order.entity';
import type { EventPayload } from '../registry';
import { dateAndTime, joinAddress } from './format';

export interface ProjectSnapshot {
  project: Project;
  customer: Customer;
  location: Location;
  contacts: Contact[];
  owners: Employee[];
}

const siteAddress = (location: Location) =>
  joinAddress(location.addressLine1, location.addressLine2, location.city, location.province, location.postalCode, location.country);

export function projectCreatedPayload(snapshot: ProjectSnapshot, createdBy: string): EventPayload<'project.created'> {
  const { project, customer, location, contacts, owners } = snapshot;
  return {
    a: {
      id: project.id,
      project_name: project.name,
      project_code: project.projectCode,
      description: project.description,
      priority: project.priority,
      status: project.status,
      start_date: project.startDate,
      end_date: project.endDate,
      customer: { id: customer.id, name: customer.name, type: customer.type, email: customer.email, phone: customer.phone },
      location: {
        id: location.id,
        name: location.name,
        address_line_1: location.addressLine1,
        city: location.city,
        province: location.province,
        postal_code: location.postalCode,
        country: location.country,
      },
      contacts: contacts.map((c) => ({
        id: c.id,
        first_name: c.firstName,
        last_name: c.lastName,
        email: c.email,
        phone: c.phone,
        role: c.title,
      })),
      project_owners: owners.map((e) => ({ id: e.id, name: e.name, email: e.email, emp_number: e.empNumber })),
      created_at: project.createdAt.toISOString(),
      created_by: createdBy,
    },
    b: {
      id: project.id,
      projectNumber: project.projectCode,
      name: project.name,
      customer: customer.name,
      address: siteAddress(location),
      status: project.status,
      startDate: project.startDate,
      estimatedEndDate: project.endDate,
    },
  };
}

export interface WorkOrderSnapshot {
  workOrder: WorkOrder;
  project: Project;
  customer: Customer;
  location: Location;
  assignees: Employee[];
}

export function workOrderCreatedPayload(snapshot: WorkOrderSnapshot, createdBy: string): EventPayload<'work_order.created'> {
  const { workOrder, project, customer, location, assignees } = snapshot;
  const start = dateAndTime(workOrder.scheduledStart);
  const end = dateAndTime(workOrder.scheduledEnd);
  const siteLead = assignees.find((e) => e.employeeType === 'site_lead') ?? null;
  return {
    a: {
      id: workOrder.id,
      work_order_number: workOrder.workOrderNumber,
      phase_name: workOrder.title,
      status: workOrder.status,
      priority: workOrder.priority,
      start_date: start.date,
      end_date: end.date,
      start_time: start.time,
      end_time: end.time,
      expected_start_date: null,
      expected_end_date: null,
      expected_start_time: null,
      expected_end_time: null,
      people_required: assignees.length || null,
      estimated_hours: null,
      travel_time_hours: null,
      additional_labor_cost: null,
      performed_by: null,
      require_daily_report: false,
      require_completion_report: false,
      display_order: null,
      project: {
        id: project.id,
        project_code: project.projectCode,
        project_name: project.name,
        customer_name: customer.name,
        site_address: siteAddress(location),
      },
      site_lead: siteLead && {
        id: siteLead.id,
        emp_number: siteLead.empNumber,
        name: siteLead.name,
        email: siteLead.email,
        phone: siteLead.phone,
      },
      scope_of_work: { checklists: [] },
      equipment: [],
      specialty_materials: [],
      scheduler_notes: null,
      custom_fields: {},
      created_at: workOrder.createdAt.toISOString(),
      created_by: createdBy,
    },
    b: {
      id: workOrder.id,
      workOrderNumber: workOrder.workOrderNumber,
      title: workOrder.title,
      status: workOrder.status,
      priority: workOrder.priority,
      projectId: project.id,
    },
  };
}
