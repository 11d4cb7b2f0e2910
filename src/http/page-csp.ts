import type { Config } from '../config.ts';

/**
 * The Content-Security-Policy of the console origin's own pages (the console, the artifact viewer):
 * scripts from files on this origin only, the API on this origin, frames from the sandbox origin
 * alone (none without a usable one), never framed themselves. The viewer's page keeps its styles
 * inline (`inlineStyles`); the console's come from a file.
 */
export function pageCsp(framedSandbox: string | null, inlineStyles: boolean): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    inlineStyles ? "style-src 'self' 'unsafe-inline'" : "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `frame-src ${framedSandbox ?? "'none'"}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The sandbox origin a page may frame: none when unset, or when it is the console's own (then it is not served; see app.ts). */
export const framedSandbox = (config: Pick<Config, 'sandboxOrigin' | 'viewerOrigin'>): string | null =>
  config.sandboxOrigin !== null && config.sandboxOrigin !== config.viewerOrigin ? config.sandboxOrigin : null;
