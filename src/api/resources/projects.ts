import { listProjects } from '../../domain/work/projects-service';
import { byId, byText } from './filters';
import { defineResource } from './resource';

export const projectsResource = defineResource({
  collection: 'projects',
  label: 'Project',
  plural: 'projects',
  description: 'Construction projects. Created through the inbound project.created operation.',
  schema: 'rest/projects.json',
  service: { list: listProjects },
  filters: [
    byText('status', 'status', 'Projects with this status, e.g. active.'),
    byId('customer_id', 'customer', 'Projects of this customer.'),
  ],
});
