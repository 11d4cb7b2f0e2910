import type { Logger } from '../../ports/logger.ts';
import type { Failure } from '../../domain/errors.ts';
import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import type { Artifact, User } from '../../domain/model.ts';
import { formatOrigin, parseOrigin, sameOrigin, type Origin } from '../../domain/origin.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { MAX_POLICY_LENGTH, normalizeSandboxPolicy, parseSandboxCsp, sandboxUrl, serializeSandboxPolicy } from '../../domain/sandbox-policy.ts';
import type { FetchUiResource, UiResource } from '../../ports/mcp-resource.ts';
import type { ArtifactStore } from '../../ports/artifact-store.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { McpAppOverview, ViewerRouting } from './overview.ts';

/** McpAppView: the saved invocation, its UI resource fetched afresh, and where to run it. Null fields are omitted. */
export interface McpAppView {
  readonly artifact: Partial<Artifact>;
  readonly resource: UiResource;
  readonly sandbox_origin: string;
  readonly sandbox_url: string;
  readonly viewer_path: string;
}

type Load = Promise<Result<McpAppView, Failure>>;

/** The fields of a record that are not null, so an answer omits what it does not have. */
const withoutNulls = <T extends object>(record: T): Partial<T> =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== null && value !== undefined)) as Partial<T>;

/**
 * Loading an artifact for its owner, by the spec's rules and in their order: ownership, then the
 * sandbox origin (before anything is fetched), then the installation (owned, enabled, authorized),
 * then the UI resource afresh from the provider. The thread-scoped load adds, first, the thread's
 * access and the reference's visibility in its ledger; thread access never grants ownership.
 */
export function artifactLoads(deps: {
  /** Artifacts and their installations, and the thread a thread-scoped load checks. */
  readonly storage: { readonly artifacts: ArtifactStore; readonly threads: ThreadStore };
  readonly fetchUiResource: FetchUiResource;
  /** The artifact settings: the sandbox origin (null: none), the viewer's routing, one resource fetch's time-out. */
  readonly config: ViewerRouting & { readonly sandboxOrigin: string | null; readonly mcpTimeoutMs: number };
  readonly log: Logger;
}) {
  const { storage, fetchUiResource, config } = deps;
  const sandbox = config.sandboxOrigin === null ? null : parseOrigin(config.sandboxOrigin);

  async function view(user: User, artifactId: string, consoleOrigin: Origin | null, log: Logger): Load {
    const owned = await storage.artifacts.findOwned(user.id, artifactId);
    if (owned === null) return fail({ code: 'artifact_unavailable' });
    if (sandbox === null || consoleOrigin === null || sameOrigin(sandbox, consoleOrigin)) return fail({ code: 'sandbox_not_configured' });
    const { artifact, installation } = owned;
    if (installation === null || installation.owner !== user.id || !installation.enabled || !installation.authorized) {
      return fail({ code: 'artifact_installation_unavailable' });
    }
    const fetched = await fetchUiResource(installation, artifact.resource_uri, { timeoutMs: config.mcpTimeoutMs });
    if (!fetched.ok) {
      log.warn({ artifact: artifact.id, installation: installation.id, reason: fetched.error }, 'MCP app resource could not be loaded');
      return fail({ code: 'mcp_resource_failed' });
    }
    const resource = fetched.value;
    const csp = parseSandboxCsp(resource.ui?.csp, 'ui.csp');
    if (!csp.ok) {
      log.warn({ artifact: artifact.id, reason: `invalid _meta.ui.csp: ${JSON.stringify(csp.error)}` }, 'MCP app resource could not be loaded');
      return fail({ code: 'mcp_resource_failed' });
    }
    // Built from the entries the proxy keeps; a policy the proxy would refuse as too long is the provider's failure, not a 200.
    const policy = normalizeSandboxPolicy({ parentOrigin: formatOrigin(consoleOrigin), csp: csp.value });
    const length = serializeSandboxPolicy(policy).length;
    if (length > MAX_POLICY_LENGTH) {
      log.warn({ artifact: artifact.id, reason: `the declared CSP makes a sandbox policy of ${length} characters, over ${MAX_POLICY_LENGTH}` }, 'MCP app resource could not be loaded');
      return fail({ code: 'mcp_resource_failed' });
    }
    return ok({
      artifact: withoutNulls(artifact),
      resource,
      sandbox_origin: formatOrigin(sandbox),
      sandbox_url: sandboxUrl(formatOrigin(sandbox), policy),
      viewer_path: `${config.viewerPath}/${artifact.id}`,
    });
  }

  return {
    view,
    /**
     * McpAppOverview of an artifact the caller owns, without contacting the provider (the viewer shows
     * it beside the app). Like the ledger's overview it grants nothing; the installation's state is
     * not judged here, only that it still exists to name its provider.
     */
    async overview(user: User, artifactId: string, consoleOrigin: Origin | null): Promise<Result<McpAppOverview, Failure>> {
      const row = await storage.artifacts.findOverview(user.id, artifactId);
      if (row === null) return fail({ code: 'artifact_unavailable' });
      if (row.provider_name === null) return fail({ code: 'artifact_installation_unavailable' });
      const base = config.viewerOrigin ?? (consoleOrigin === null ? '' : formatOrigin(consoleOrigin));
      return ok({ artifact_id: artifactId.toLowerCase(), title: row.title, provider_name: row.provider_name, viewer_url: `${base}${config.viewerPath}/${artifactId.toLowerCase()}` });
    },
    async viewByReference(user: User, threadId: string, messageId: string, consoleOrigin: Origin | null, log: Logger): Load {
      const thread = await storage.threads.findAccessible(user.id, threadId);
      if (thread === null) return fail({ code: 'thread_unavailable' });
      const artifactId = await storage.artifacts.findReference(ledgerSegments(thread.chain), messageId);
      if (artifactId === null) return fail({ code: 'artifact_reference_unavailable' });
      return view(user, artifactId, consoleOrigin, log);
    },
  };
}

export type ArtifactLoads = ReturnType<typeof artifactLoads>;
