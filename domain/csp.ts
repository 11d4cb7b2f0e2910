import { cspSources } from './csp-source.ts';
import { formatOrigin, parseOrigin } from './origin.ts';
import type { SandboxPolicy } from './sandbox-policy.ts';

/** The two places a CSP is used: the proxy page's response header, and the inner `srcdoc` document. */
export type CspForm = 'proxy' | 'inner';

/** The directives in the order the spec's table gives them. */
export const CSP_DIRECTIVES = [
  'default-src',
  'script-src',
  'style-src',
  'img-src',
  'font-src',
  'media-src',
  'connect-src',
  'frame-src',
  'base-uri',
  'object-src',
  'form-action',
  'worker-src',
  'frame-ancestors',
] as const;

export type CspDirective = (typeof CSP_DIRECTIVES)[number];

const orNone = (sources: readonly string[]): readonly string[] => (sources.length > 0 ? sources : ["'none'"]);

/**
 * The directives of a sandbox CSP, as source lists. The inner form is the proxy form less
 * `'self'` in `frame-src` and less `frame-ancestors`, so it is never looser than the proxy form:
 * a `srcdoc` document inherits the proxy page's policy and both apply.
 */
export function cspDirectives(policy: SandboxPolicy, form: CspForm): Map<CspDirective, readonly string[]> {
  const resources = cspSources(policy.csp.resourceDomains);
  const frames = cspSources(policy.csp.frameDomains);
  const directives = new Map<CspDirective, readonly string[]>([
    ['default-src', ["'none'"]],
    ['script-src', ["'self'", "'unsafe-inline'", ...resources]],
    ['style-src', ["'self'", "'unsafe-inline'", ...resources]],
    ['img-src', ["'self'", 'data:', ...resources]],
    ['font-src', ["'self'", 'data:', ...resources]],
    ['media-src', ["'self'", 'data:', ...resources]],
    ['connect-src', orNone(cspSources(policy.csp.connectDomains))],
    ['frame-src', orNone(form === 'proxy' ? ["'self'", ...frames] : frames)],
    ['base-uri', orNone(cspSources(policy.csp.baseUriDomains))],
    ['object-src', ["'none'"]],
    ['form-action', ["'none'"]],
    ['worker-src', ["'none'"]],
  ]);
  if (form === 'proxy') {
    // Re-parsed here too, so a policy built by hand cannot smuggle a directive through its parent.
    const parent = parseOrigin(policy.parentOrigin);
    directives.set('frame-ancestors', [parent === null ? "'none'" : formatOrigin(parent)]);
  }
  return directives;
}

/** The Content-Security-Policy text: directives joined with `; `. */
export function buildCsp(policy: SandboxPolicy, form: CspForm): string {
  return [...cspDirectives(policy, form)].map(([name, sources]) => `${name} ${sources.join(' ')}`).join('; ');
}
