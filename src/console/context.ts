import type { RouterContext } from '@koa/router';
import type { AppState } from '../api/context';
import type { ConsoleRole } from './users/console-user.entity';
import type { Session } from './users/sessions';

/** A form's fields as the body parser gives them: repeated names (checkboxes) as lists. */
export type FormBody = Record<string, string | string[] | undefined>;

export interface ConsoleState extends AppState {
  /** The signed-in user's session, or null. */
  session: Session | null;
  form: FormBody;
}

export type ConsoleContext = RouterContext<ConsoleState>;

/** One console page or form action, declared with the role it needs (see mountPage). */
export interface ConsolePage {
  method: 'GET' | 'POST';
  /** Below /console, koa style: `/api-keys/:id/revoke`. An `:id` must be a record id (else 404). */
  path: string;
  /** Who may use it: admin pages are refused to viewers; viewer pages are open to every signed-in user. */
  role: ConsoleRole;
  handler(ctx: ConsoleContext, session: Session): Promise<void>;
}
