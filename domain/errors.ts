/**
 * The catalog of error codes. Each code names one way a request can be refused and carries the
 * default human message; the HTTP status of each code is decided in one place at the edge
 * (`src/http/error-status.ts`), and `docs/errors.md` lists both (a test keeps the three in step).
 */
export const ERROR_DETAILS = {
  /** No route answers this path (or a sandbox path asked on the wrong origin). */
  not_found: 'Nothing is served at this path',
  /** The path exists, but not for this method; the answer lists the allowed ones. */
  method_not_allowed: 'This method is not allowed on this path',
  /** A `Host` header that is not a host (origins are built from it). */
  invalid_host: 'The Host header is not a valid host',
  /** A `Host` this service does not answer to (not in ALLOWED_HOSTS, nor the sandbox or viewer origin): a rebound DNS name, or a missing setting. */
  host_not_allowed: 'This service does not answer to this Host: list it in ALLOWED_HOSTS',
  /** An HTTP/1.1 request without a `Host` header (RFC 9112, section 3.2). */
  missing_host: 'An HTTP/1.1 request must carry a Host header',
  /** A request with more than one `Host` field line (RFC 9112, section 3.2): which one it meant is not guessed. */
  duplicate_host: 'A request must carry exactly one Host header',
  /** A request body in a transfer coding other than `chunked` alone (`gzip, chunked`): it is not decoded, so it is not read (RFC 9112, 6.1). */
  unsupported_transfer_coding: 'The only transfer coding taken is chunked',
  /** An `Expect` header other than `100-continue` (RFC 9110, 10.1.1). */
  expectation_failed: 'The only expectation met is 100-continue',
  /** A websocket handshake that RFC 6455 refuses (a bad `Sec-WebSocket-Key` or version, a broken protocol or extension list); the detail says which. */
  invalid_websocket_handshake: 'The websocket handshake is not valid',
  /** The HTTP parser refused the request (its line, a header, the body's framing); the detail says which part when it can. */
  malformed_request: 'The request is not valid HTTP/1.1',
  /** The request line and headers are over the listener's 64 KiB; the connection is closed. */
  headers_too_large: 'The request line and headers are larger than 64 KiB',
  /** A chunked body's chunk extensions are over what the parser takes; the connection is closed. */
  chunk_extensions_too_large: 'The chunk extensions of the body are too large',
  /** The headers (or the whole request) did not arrive within the listener's time-out; the connection is closed. */
  request_timeout: 'The request did not arrive in time',
  /** The body could not be parsed as JSON. */
  malformed_json: 'The request body is not valid JSON',
  /** The body is not JSON at all. */
  unsupported_media_type: 'The request body must be application/json',
  /** The body is over the 1 MiB limit. */
  body_too_large: 'The request body is larger than 1 MiB',
  /** A body, query or path value failed its schema; the answer lists each issue. */
  validation_failed: 'The request is not valid',
  /** No credential, or one that names no user. */
  unauthenticated: 'Authentication required',
  /** The same-origin write guard or the browser-request check refused the request. */
  cross_origin_refused: 'Cross-origin request refused',
  /** A thread that is unknown or not accessible to the caller. */
  thread_unavailable: 'Thread unavailable',
  /** A conversation that is not in the thread (or does not exist). */
  conversation_unavailable: 'Conversation unavailable',
  /** A run that is not under the thread (or does not exist). */
  run_unavailable: 'Run unavailable',
  /** An artifact that is missing or not owned by the caller. */
  artifact_unavailable: 'Artifact unavailable',
  /** A ledger reference that is not visible in the thread. */
  artifact_reference_unavailable: 'Artifact reference unavailable',
  /** The artifact's installation is not owned, not enabled or not authorized. */
  artifact_installation_unavailable: 'Artifact installation unavailable',
  /** The UI resource could not be fetched from the provider; the cause is logged, never returned. */
  mcp_resource_failed: 'MCP app resource could not be loaded',
  /** No sandbox origin is configured, or it is the console origin itself. */
  sandbox_not_configured: 'Configure a separate artifact sandbox origin',
  /** A thread the caller can read but does not own, asked to do what only its owner may. */
  not_thread_owner: "Only the thread's owner can do this",
  /** A plain HTTP request to the live socket's path. */
  upgrade_required: 'This path is a websocket: upgrade the connection',
  /** The thread's conversation was teleported away: nothing continues or moves it here; the detail names where it is now. */
  conversation_moved: 'The conversation moved to another thread',
  /** A directive, teleport, summon, rewind or merge on a thread whose turn is running; a fork at a message whose run has not ended. */
  turn_running: 'A turn is running on this thread',
  /** A teleport or summon on a thread with approvals waiting for an answer. */
  approvals_pending: 'Approvals are pending on this thread',
  /** A teleport or summon on a thread with questions waiting for an answer. */
  questions_pending: 'Questions are pending on this thread',
  /** A teleport or summon on a thread with directives queued (and a directive that does not queue, while they wait to start); a fork at a queued directive. */
  queue_not_empty: 'Directives are queued on this thread',
  /** A directive queued on a thread whose queue already holds 20. */
  queue_full: 'The thread already has 20 directives queued: wait for one to start, or withdraw one',
  /** A queued directive to edit or withdraw that already started, was withdrawn, or is not on this thread. */
  queue_item_gone: 'This directive is no longer queued: it started or was withdrawn',
  /** A queued directive edited or withdrawn by someone who is neither its author nor the thread's owner. */
  not_queue_item_author: "Only the directive's author or the thread's owner can change it",
  /** A cancel on a thread where no turn is running. */
  no_turn_running: 'No turn is running on this thread',
  /** A directive on a thread of another channel than the console. */
  not_console_thread: 'Directives continue console threads only',
  /** The thread has no conversation to continue, move or hand over. */
  no_conversation: 'The thread has no conversation',
  /** No connected agent is offered for the thread (the console channel has none). */
  no_agent_offered: 'No agent is offered for this thread',
  /** A directive names another route than the thread's: re-routing needs a manual handoff (summon). */
  reroute_refused: 'The thread is routed to another agent or model; re-routing needs a manual handoff',
  /** Two first directives for one key raced, and this one asked for another project, posture or effort than the thread got. */
  first_directive_raced: 'The thread was just created with other picks',
  /** The channel named is not connected. */
  channel_not_connected: 'This channel is not connected',
  /** The caller is not linked to the channel. */
  channel_not_linked: 'You are not linked to this channel',
  /** A link code asked for the console channel: only chat channels link a user to an address. */
  channel_not_linkable: 'The console channel links no chat address: pick a chat channel',
  /** The caller has no link (made with a code) on this channel to remove. */
  link_not_found: 'You have no link on this channel',
  /** The channel's places cannot be browsed. */
  channel_not_browsable: 'This channel cannot be browsed',
  /** No agent is connected to the channel, or not the conversation's. */
  agent_not_on_channel: 'No agent of this conversation is connected to this channel',
  /** The destination place is barred (the detail says why). */
  destination_barred: 'No conversation can land in this place',
  /** The destination is not (or no longer) offered on its channel. */
  destination_not_offered: 'This destination is no longer offered',
  /** The thread's conversation changed (a summon) while a move, summon or directive was asked: nothing was written; ask again. */
  conversation_changed: "The thread's conversation changed while this was asked: ask again",
  /** A teleport into a chat thread where another conversation lives. */
  destination_occupied: 'Another conversation already lives in this place',
  /** A console thread asked to teleport to the console. */
  already_on_console: 'A console thread is already on the console',
  /** A summon route that is not offered on the conversation's own channel (its own agent, or one not on the channel). */
  route_not_offered: 'This route is not offered here: summon hands over to another agent on this channel',
  /** The request needs an agent that is unavailable (it needs authentication, could not start, or did not answer); the detail says which and why. */
  agent_unavailable: 'The agent is unavailable',
  /** The service has just started: some agent has not yet said what it offers (nor failed to, within its time-out). */
  agents_not_known: 'The service is starting: its agents have not all said what they offer yet',
  /** The chat platform of the channel cannot be reached now (its server is down, or the service is reconnecting to it). */
  channel_unavailable: 'This channel cannot be reached now: try again shortly',
  /** The `git` executable could not be run (missing, or it timed out): a repository project's worktrees cannot be made or read. */
  git_unavailable: 'git is unavailable on this host',
  /** A repository project whose repository cannot be used (not a git repository, or it lacks its base branch); the detail says which. */
  repository_unavailable: "The project's git repository cannot be used",
  /** Changes asked of a thread that has no worktree (its project is not a repository, or no turn ran yet). */
  no_worktree: 'This thread has no worktree: its project is not a git repository, or no turn has run yet',
  /** A diff asked for a path that is not among the thread's changed files. */
  change_unavailable: 'No such changed file in this thread',
  /** The diff asked for is larger than 2 MiB. */
  diff_too_large: 'The diff is larger than 2 MiB: ask for one file',
  /** The worktree holds so many changed files (or such long names) that their list is over 32 MiB; nothing is listed. */
  changes_too_large: "The worktree's list of changed files is too large to answer (more than 32 MiB of names)",
  /** A merge whose changes conflict with the base branch; `files` lists them, and the base is unchanged. */
  merge_conflict: 'The changes conflict with the base branch; nothing was merged',
  /** A merge into a base branch checked out with uncommitted changes (or files in the way): the checkout would lose them. */
  base_checkout_dirty: 'The base branch is checked out with uncommitted changes; nothing was merged',
  /** The base branch moved while the merge was made (another merge is moving it, or moved it); nothing was merged. */
  base_moved: 'The base branch moved while merging: try again',
  /**
   * The thread's worktree could not be used as the console left it: its `.git` (which an agent can write) was
   * replaced and could not be put back, or git no longer holds the worktree at its path (removed meanwhile).
   * Nothing was read or run; the thread's next read or turn repairs or remakes it.
   */
  worktree_tampered: "The thread's worktree is not as the console left it (its .git was replaced, or git no longer holds it): ask again",
  /**
   * git refuses what the thread's worktree holds (an agent can write it): a path it never stores (`.GIT/…`, `.git`
   * in another case), or a `.gitattributes` whose attribute fails (a `working-tree-encoding` that is no encoding).
   * The worktree is left as it is; once the file is gone or fixed, its changes read again.
   */
  worktree_unreadable: "git cannot read the worktree's files: it refuses a path or an attribute they hold; nothing was read or merged",
  /**
   * A thread's checkpoint another instance's turn beat to the shared remote and that could not be put on top of its
   * (the two changed one file differently, or their branches diverged): it is kept aside on the instance that took it
   * (`refs/console/rejected/<thread id>/<run id>`, the detail names it), no longer the thread's; the thread goes on
   * from the other's. Ask again to go on.
   */
  checkpoint_set_aside: "This instance's checkpoint of the thread could not be put on top of another instance's: it is kept aside, and the thread goes on from the other's",
  /** A rewind of a repository thread with no checkpoint of the worktree before that run (taken before checkpoints were kept, or lost). */
  checkpoint_unavailable: 'No checkpoint of the worktree before that run is kept: its files cannot be put back',
  /** A rewind to before a run a rewind took back already, on a thread that has gone on since (runs after it that are not rewound). */
  run_rewound: 'That run was rewound already and the thread has gone on since: rewind to before a run that is not rewound',
  /**
   * A merge that reached the thread's worktree while a rewind of the thread was written (its runs marked) and its
   * files not yet put back: the rewind wins, and the merge would land work it took back. Nothing was merged.
   */
  rewind_pending: 'A rewind of this thread is putting its files back; nothing was merged: ask again once it is done',
  /** Storage could not be reached. */
  storage_unavailable: 'Storage is unavailable',
  /** The connection arrived while the listener's cap of open connections was reached; it is closed. */
  too_many_connections: 'Too many open connections: retry later',
  /** The connection arrived while its client address had MAX_CONNECTIONS_PER_CLIENT open; it is closed. */
  too_many_client_connections: 'Too many open connections from this client: close one or retry later',
  /** Too many failed credentials (sign-ins, bearer tokens, session cookies, on any path) from this client this minute; the credential was not looked up. */
  too_many_sign_ins: 'Too many failed credentials from this client: retry later',
  /** A directive's `message_id` that another user already sent on this thread: ids are each author's own, so theirs is never answered. */
  message_id_taken: 'Another user sent a directive with this message_id on this thread: use an id of your own',
  /** The user sent more directives this minute than the instance takes (DIRECTIVES_PER_MINUTE): edits of queued ones and reviews count as directives. */
  too_many_directives: 'Too many directives: retry later',
  /** The user asked for more link codes this minute than the instance gives (5). */
  too_many_link_codes: 'Too many link codes asked for: retry later',
  /** The user has as many live sockets open as the instance allows (LIVE_SOCKETS_PER_USER). */
  too_many_live_sockets: 'Too many live sockets open: close one first',
  /** A credential that may not do this: a personal access token creating tokens or signing in, a session id signing in. */
  credential_not_allowed: 'This credential may not do this: sign in to the console',
  /** The caller is not an active admin: only admins list users, change them and invite. */
  not_admin: 'Only an admin may do this',
  /** No OpenID Connect provider is configured (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET): sign in with a token. */
  sign_in_not_configured: 'Sign-in with an identity provider is not configured here: sign in with a token',
  /** The identity provider could not be reached (its discovery document or its token endpoint). */
  identity_provider_unavailable: 'The identity provider could not be reached: retry later',
  /** The caller has no personal access token by this id (revoked already, or someone else's). */
  token_not_found: 'You have no access token with this id',
  /** The caller holds as many personal access tokens as allowed (50): revoke one first. */
  too_many_tokens: 'You hold as many access tokens as allowed: revoke one first',
  /** No user has this id. */
  user_not_found: 'No user has this id',
  /** The change would leave no active admin: make another admin first. */
  last_admin: 'This would leave no active admin: make another user admin first',
  /** The client started more sign-ins this minute than the instance takes. */
  too_many_sign_in_starts: 'Too many sign-ins started from this client: retry later',
  /** The caller has no hook by this id (removed already, or someone else's). */
  hook_not_found: 'You have no hook with this id',
  /** The caller holds as many hooks as allowed (50): remove one first. */
  too_many_hooks: 'You hold as many hooks as allowed: remove one first',
  /** A hook was called whose owner is deactivated: it sends nothing until they are active again. */
  hook_owner_inactive: "This hook's owner is deactivated",
  /** The caller has no schedule by this id (removed already, or someone else's). */
  schedule_not_found: 'You have no schedule with this id',
  /** The caller holds as many schedules as allowed (50): remove one first. */
  too_many_schedules: 'You hold as many schedules as allowed: remove one first',
  /** The caller has no webhook by this id (removed already, or someone else's). */
  webhook_not_found: 'You have no webhook with this id',
  /** The caller holds as many webhooks as allowed (50): remove one first. */
  too_many_webhooks: 'You hold as many webhooks as allowed: remove one first',
  /** The webhook has no delivery by this id (forgotten after 7 days, or another webhook's). */
  webhook_delivery_not_found: 'This webhook has no delivery with this id',
  /** The webhook is turned off (its receiver answered 410 Gone): nothing of it is sent; create a new one. */
  webhook_disabled: 'This webhook is turned off: its receiver answered 410 Gone. Create a new one to send again',
  /** A bug: logged in full, answered without detail. */
  internal: 'Internal error',
} as const;

/** One code of the catalog. */
export type ErrorCode = keyof typeof ERROR_DETAILS;

/** A refusal as the core reports it: a code, and a detail when the default message is not enough. */
export interface Failure {
  readonly code: ErrorCode;
  readonly detail?: string;
  readonly errors?: readonly { readonly path: string; readonly message: string }[];
  /** The files a merge conflicts on (`merge_conflict`). */
  readonly files?: readonly string[];
}
