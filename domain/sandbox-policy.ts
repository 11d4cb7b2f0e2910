import { cspSources } from './csp-source.ts';
import { formatOrigin, parseOrigin } from './origin.ts';
import { fail, ok, type Issue, type Result } from './result.ts';

/** The domain lists an MCP app declares in `_meta.ui.csp`; every list is present, possibly empty. */
export interface SandboxCsp {
  readonly resourceDomains: readonly string[];
  readonly connectDomains: readonly string[];
  readonly frameDomains: readonly string[];
  readonly baseUriDomains: readonly string[];
}

/** ArtifactSandboxPolicy: who may embed the proxy page, and what the app inside may reach. */
export interface SandboxPolicy {
  /** The embedding console origin, without a trailing slash. */
  readonly parentOrigin: string;
  readonly csp: SandboxCsp;
}

/** The four csp lists by their wire alias (the MCP Apps names). */
export const CSP_LISTS = ['resourceDomains', 'connectDomains', 'frameDomains', 'baseUriDomains'] as const;

/** Longest `policy` query value the sandbox proxy accepts. */
export const MAX_POLICY_LENGTH = 16384;

/** An empty csp: what a resource that declares none gets. */
export const EMPTY_CSP: SandboxCsp = Object.freeze({
  resourceDomains: [],
  connectDomains: [],
  frameDomains: [],
  baseUriDomains: [],
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads a declared csp (`_meta.ui.csp` or the policy's `csp`), where missing or null lists are
 * empty. Entries are kept as written; the CSP builder decides which of them are usable.
 */
export function parseSandboxCsp(value: unknown, path = 'csp'): Result<SandboxCsp, Issue[]> {
  if (value === undefined || value === null) return ok(EMPTY_CSP);
  if (!isRecord(value)) return fail([{ path, message: 'must be an object' }]);
  const issues: Issue[] = [];
  const csp: Record<string, readonly string[]> = {};
  for (const list of CSP_LISTS) {
    const entries = value[list];
    if (entries === undefined || entries === null) {
      csp[list] = [];
    } else if (!Array.isArray(entries)) {
      issues.push({ path: `${path}.${list}`, message: 'must be a list of strings' });
    } else {
      entries.forEach((entry, index) => {
        if (typeof entry !== 'string') issues.push({ path: `${path}.${list}.${index}`, message: 'must be a string' });
      });
      csp[list] = entries as string[];
    }
  }
  return issues.length > 0 ? fail(issues) : ok(csp as unknown as SandboxCsp);
}

/** Reads an ArtifactSandboxPolicy from its JSON value (by alias). */
export function parseSandboxPolicy(value: unknown): Result<SandboxPolicy, Issue[]> {
  if (!isRecord(value)) return fail([{ path: '', message: 'must be a JSON object' }]);
  const issues: Issue[] = [];
  const parent = typeof value.parentOrigin === 'string' ? parseOrigin(value.parentOrigin) : null;
  if (parent === null) {
    issues.push({ path: 'parentOrigin', message: 'must be an http or https origin' });
  }
  const csp = parseSandboxCsp(value.csp);
  if (!csp.ok) issues.push(...csp.error);
  if (parent === null || !csp.ok) return fail(issues);
  return ok({ parentOrigin: formatOrigin(parent), csp: csp.value });
}

/** Reads the `policy` query parameter: its length, then its JSON, then its shape. */
export function parseSandboxPolicyText(text: string): Result<SandboxPolicy, Issue[]> {
  if (text.length > MAX_POLICY_LENGTH) {
    return fail([{ path: 'policy', message: `must be at most ${MAX_POLICY_LENGTH} characters` }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail([{ path: 'policy', message: 'must be JSON' }]);
  }
  const policy = parseSandboxPolicy(value);
  if (policy.ok) return policy;
  return fail(policy.error.map((issue) => ({ ...issue, path: issue.path === '' ? 'policy' : `policy.${issue.path}` })));
}

/** The policy as JSON text by alias, with every list written out. */
export function serializeSandboxPolicy(policy: SandboxPolicy): string {
  const csp: Record<string, readonly string[]> = {};
  for (const list of CSP_LISTS) csp[list] = policy.csp[list];
  return JSON.stringify({ parentOrigin: policy.parentOrigin, csp });
}

/**
 * The policy with each csp list as the CSP builder uses it: entries that are not plain origins
 * dropped, the rest in canonical form, de-duplicated. A `sandbox_url` is built from this, so its
 * length is what the proxy will check, and a provider's unusable entries never reach the URL.
 */
export function normalizeSandboxPolicy(policy: SandboxPolicy): SandboxPolicy {
  const csp: Record<string, readonly string[]> = {};
  for (const list of CSP_LISTS) csp[list] = cspSources(policy.csp[list]);
  return { parentOrigin: policy.parentOrigin, csp: csp as unknown as SandboxCsp };
}

/** `{sandbox origin}/artifacts/sandbox?policy=<URL-encoded policy JSON>`. */
export function sandboxUrl(sandboxOrigin: string, policy: SandboxPolicy): string {
  return `${sandboxOrigin}${SANDBOX_PAGE_PATH}?policy=${encodeURIComponent(serializeSandboxPolicy(policy))}`;
}

/** The proxy page's path on the sandbox origin. */
export const SANDBOX_PAGE_PATH = '/artifacts/sandbox';
/** The proxy script's path on the sandbox origin. */
export const SANDBOX_SCRIPT_PATH = '/artifacts/sandbox.js';
