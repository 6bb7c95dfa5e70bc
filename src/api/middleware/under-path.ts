import compose from 'koa-compose';
import type { Middleware } from 'koa';
import type { AppState } from '../context';

/** Runs `middleware` (in order) for requests at `prefix` or below it; others pass straight through. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- router middleware carries its own context type
export function underPath(prefix: string, ...middleware: Middleware<AppState, any>[]): Middleware<AppState> {
  const chain = compose(middleware);
  return (ctx, next) => (ctx.path === prefix || ctx.path.startsWith(`${prefix}/`) ? chain(ctx, next) : next());
}
