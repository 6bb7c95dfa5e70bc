import type { ProjectCreationInput, ProjectCreationResult } from '../src/domain/work/project-creation';

export type { ProjectCreationInput, ProjectCreationResult };

/**
 * project.created, one run per company and project code (id `project.created/<company>/<code>`), on the service's
 * task queue. Started by runProjectCreation (src/domain/work/project-creation.ts). No signals or updates.
 */
export const PROJECT_CREATION = 'projectCreation';
