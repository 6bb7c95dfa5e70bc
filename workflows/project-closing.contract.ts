import type { ProjectClosingInput, ProjectClosingResult } from '../src/domain/work/project-closing';

export type { ProjectClosingInput, ProjectClosingResult };

/**
 * project.closed, one run per company and project code (id `project.closed/<company>/<code>`), on the service's
 * task queue. Started by runProjectClosing (src/domain/work/project-closing.ts). No signals or updates.
 */
export const PROJECT_CLOSING = 'projectClosing';
