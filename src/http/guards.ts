import type { Guard } from './route.ts';
import { originText, type RequestContext } from './context.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const header = (ctx: RequestContext, name: string): string | undefined => {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * The same-origin write guard (every console and account route): a write whose `Origin` names
 * another origin, or whose `Sec-Fetch-Site` is not `same-origin`, is refused. A request with
 * neither header (a non-browser client) passes.
 */
export const sameOriginWriteGuard: Guard = (ctx) => {
  if (SAFE_METHODS.has(ctx.method)) return null;
  const origin = header(ctx, 'origin');
  if (origin !== undefined && origin !== originText(ctx.origin)) return { code: 'cross_origin_refused' };
  const site = header(ctx, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return { code: 'cross_origin_refused' };
  return null;
};

/**
 * The browser-request check (every artifact route): only same-origin or user-typed fetches, never
 * a top-level navigation, so artifact JSON is never rendered as a page or read across sites.
 */
export const browserRequestCheck: Guard = (ctx) => {
  const site = header(ctx, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return { code: 'cross_origin_refused' };
  const origin = header(ctx, 'origin');
  if (origin !== undefined && origin !== originText(ctx.origin)) return { code: 'cross_origin_refused' };
  if (header(ctx, 'sec-fetch-mode') === 'navigate') return { code: 'cross_origin_refused' };
  return null;
};
