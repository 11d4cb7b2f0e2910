/*
 * What the API answers, as valibot schemas: the OpenAPI description's response bodies are generated from
 * them (so a generated client knows every answer), and `test/http/answers.test.ts` checks real answers
 * against them, so the description and the code cannot drift apart. Closed shapes are strict objects:
 * a field the code adds without saying so fails that test.
 */
import * as v from 'valibot';
import { WEBHOOK_EVENTS } from '../../domain/webhooks.ts';

const Uuid = v.pipe(v.string(), v.uuid());
const Time = v.pipe(v.string(), v.isoTimestamp());
const nullable = <T extends v.GenericSchema>(schema: T) => v.nullable(schema);

/** A keyset page: newest first, `next` the cursor of the following page or null on the last. */
export const Page = <T extends v.GenericSchema>(item: T) => v.strictObject({ items: v.array(item), next: nullable(Uuid) });

export const Status = v.strictObject({ status: v.picklist(['ok', 'ready']) });
/** `/readyz`'s 200: ready, and how agents are confined (absent where the app was built without saying). */
export const Ready = v.strictObject({
  status: v.literal('ready'),
  agent_sandbox: v.optional(v.strictObject({ kind: v.picklist(['bubblewrap', 'none', 'off']), detail: v.string() })),
});
export const Me = v.strictObject({ id: v.string(), name: v.string(), role: v.picklist(['admin', 'member']) });

/** A personal access token as its owner lists it: never the token itself. */
export const AccessTokenInfo = v.strictObject({
  id: v.string(), name: v.string(), created_at: v.string(), expires_at: v.nullable(v.string()), last_used_at: v.nullable(v.string()),
});

/** A token just created: `token` is shown in this answer only. */
export const CreatedAccessToken = v.strictObject({ ...AccessTokenInfo.entries, token: v.string() });

/** A hook in as its owner lists it (never its secret): a thread, or a new thread each time with a project and a model. */
export const HookInfo = v.strictObject({
  id: Uuid, thread_id: nullable(Uuid), project: nullable(v.string()), model: nullable(v.string()), url: v.string(), created_at: Time,
});

/** A hook just created: `secret` is shown in this answer only. */
export const CreatedHookInfo = v.strictObject({ ...HookInfo.entries, secret: v.string() });

/** A schedule as its owner lists it: its expression, zone, text, target, whether it is on, and its next due time. */
export const ScheduleInfo = v.strictObject({
  id: Uuid, cron: v.string(), timezone: v.string(), text: v.string(), thread_id: nullable(Uuid), project: nullable(v.string()),
  model: nullable(v.string()), enabled: v.boolean(), next_run_at: nullable(Time), created_at: Time,
});

const WebhookType = v.picklist(WEBHOOK_EVENTS);

/** A webhook out as its owner lists it: its URL and events, never its secret; `enabled` false once its receiver answered 410. */
export const WebhookInfo = v.strictObject({
  id: Uuid, url: v.string(), events: v.array(WebhookType), thread_ids: nullable(v.array(Uuid)), enabled: v.boolean(), created_at: Time,
});

/** A webhook just created: its id and its secret, shown in this answer only. */
export const CreatedWebhookInfo = v.strictObject({ id: Uuid, secret: v.pipe(v.string(), v.startsWith('whsec_')) });

/** One delivery of a webhook: the event it carries (as its body does), where it is, and how its last try went. */
export const WebhookDeliveryInfo = v.strictObject({
  id: Uuid, type: WebhookType, thread_id: Uuid, run_id: nullable(v.string()), data: v.record(v.string(), v.unknown()), created_at: Time,
  status: v.picklist(['pending', 'delivered', 'failed', 'dropped']), attempts: v.number(), next_at: nullable(Time),
  last_status: nullable(v.number()), last_error: nullable(v.string()),
});

/** A webhook as GET /webhooks/{id} answers it: with its latest deliveries, newest first. */
export const WebhookDetail = v.strictObject({ ...WebhookInfo.entries, deliveries: v.array(WebhookDeliveryInfo) });

/** A user as admins see them. `issuer` is null for a world-file user. */
export const AccountInfo = v.strictObject({
  id: v.string(), name: v.string(), email: v.nullable(v.string()), role: v.picklist(['admin', 'member']), active: v.boolean(),
  issuer: v.nullable(v.string()), created_at: v.string(),
});

/** One page of users, by id; `next` is the `after` of the next page. */
export const AccountPageInfo = v.strictObject({ items: v.array(AccountInfo), next: v.nullable(v.string()) });

/** An invitation: the email may join on its first sign-in. */
export const InviteInfo = v.strictObject({ email: v.string(), invited_by: v.string(), created_at: v.string() });

/** A one-use link code for a chat channel (contract section 9): shown once, valid until `expires_at`. */
export const LinkCode = v.strictObject({
  channel: v.string(),
  /** 8 characters of `23456789ABCDEFGHJKMNPQRSTUVWXYZ`. */
  code: v.pipe(v.string(), v.regex(/^[2-9A-HJKMNP-Z]{8}$/)),
  expires_at: Time,
  /** What to send the channel's bot in a direct message, from the address to link: `link <code>`. */
  send: v.string(),
});

/** The caller's link to a chat address on a channel: made with a code (`created_at` set, removable), or by the world file. */
export const ChannelLink = v.strictObject({
  channel: v.string(),
  address: v.string(),
  created_at: nullable(Time),
  source: v.picklist(['code', 'world']),
});

/** A channel the caller can link an address on: every connected channel but the console. */
export const LinkableChannel = v.strictObject({ id: v.string(), name: v.string(), kind: v.string() });

export const Thread = v.strictObject({
  id: Uuid,
  key: nullable(v.string()),
  channel: v.string(),
  owner: v.string(),
  project: nullable(v.string()),
  title: v.string(),
  fork_of: nullable(Uuid),
  fork_cutoff: nullable(Uuid),
  created_at: Time,
  /** The thread's own git worktree (a repository project, from its first turn), read-only; else null. */
  worktree: nullable(v.strictObject({ branch: v.string(), base: v.string(), path: v.string() })),
  /** Whether its owner archived it: the thread list leaves it out unless asked for archived threads. */
  archived: v.boolean(),
});

/** A thread in the thread list: its row and what is going on in it. */
export const ThreadListItem = v.strictObject({
  ...Thread.entries,
  activity: v.strictObject({
    turn_running: v.boolean(),
    approvals: v.pipe(v.number(), v.integer()),
    questions: v.pipe(v.number(), v.integer()),
    queued: v.pipe(v.number(), v.integer()),
  }),
});

export const McpAppOverview = v.strictObject({ artifact_id: Uuid, title: v.string(), provider_name: v.string(), viewer_url: v.string() });

/** Where a directive came from when no person typed it (contract section 12): a schedule's fire or a hook's call. */
export const DirectiveOrigin = v.strictObject({ kind: v.picklist(['schedule', 'hook']), id: Uuid });

export const LedgerMessage = v.strictObject({
  id: Uuid,
  role: v.string(),
  text: v.string(),
  artifact_id: nullable(Uuid),
  created_at: Time,
  /** The schedule or hook that sent this directive; null for a person's directive and for every other message. */
  origin: nullable(DirectiveOrigin),
  app: v.optional(McpAppOverview),
});

export const Address = v.strictObject({ channel: v.string(), id: v.string() });

export const Conversation = v.strictObject({
  id: Uuid,
  thread_id: Uuid,
  agent: v.string(),
  model: nullable(v.string()),
  permission_mode: nullable(v.string()),
  effort: nullable(v.string()),
  address: nullable(Address),
  turn_running: v.boolean(),
  created_at: Time,
  /** Where a teleport moved the conversation; null while it is on this thread. */
  moved_to: nullable(v.strictObject({ thread_id: Uuid, conversation_id: Uuid, address: Address })),
});

export const Run = v.strictObject({
  id: Uuid,
  conversation_id: Uuid,
  directory: nullable(v.string()),
  status: v.picklist(['running', 'succeeded', 'failed', 'cancelled']),
  error: nullable(v.string()),
  started_at: Time,
  ended_at: nullable(Time),
  /** Taken back by a rewind: kept, and no later turn sees it. */
  rewound: v.boolean(),
});

export const ModelMessage = v.strictObject({ id: Uuid, run_id: Uuid, role: v.string(), content: v.string(), created_at: Time });

/** An ACP tool call as the service keeps it: open, since agents add fields of their own. */
export const ToolCall = v.looseObject({
  id: v.string(),
  title: v.optional(v.string()),
  kind: v.optional(v.string()),
  status: v.optional(v.string()),
  name: v.optional(v.string()),
  content: v.optional(v.array(v.looseObject({ type: v.string() }))),
  locations: v.optional(v.array(v.looseObject({ path: v.string(), line: v.optional(nullable(v.number())) }))),
  rawInput: v.optional(v.unknown()),
  rawOutput: v.optional(v.unknown()),
});

export const Pending = v.strictObject({
  id: Uuid,
  kind: v.picklist(['approval', 'question']),
  conversation_id: Uuid,
  run_id: nullable(Uuid),
  title: v.string(),
  options: v.array(v.strictObject({ id: v.string(), name: v.string(), kind: nullable(v.picklist(['allow_once', 'allow_always', 'reject_once', 'reject_always'])) })),
  tool_call: nullable(ToolCall),
});

export const RouteInfo = v.strictObject({ id: v.string(), agent: v.string(), model: nullable(v.string()) });
export const ChannelInfo = v.strictObject({ id: v.string(), kind: v.string(), name: v.string(), shared: v.boolean(), browsable: v.boolean() });
export const AgentPostures = v.strictObject({
  agent: v.string(),
  modes: v.array(v.string()),
  default: nullable(v.string()),
  efforts: v.array(v.string()),
  unavailable: nullable(v.string()),
  /** It takes a directive's text into its running turn (`when_busy: "steer"`, contract section 11). */
  steering: v.boolean(),
});

export const ChannelAddress = v.strictObject({
  channel: v.string(),
  id: v.string(),
  shared: v.boolean(),
  metadata: v.strictObject({ name: v.string(), inside: v.optional(v.string()), barred: v.optional(v.string()) }),
});
const OperationAvailability = v.strictObject({
  destinations: v.array(ChannelAddress),
  here: nullable(ChannelAddress),
  routes: v.record(v.string(), v.array(RouteInfo)),
  reason: nullable(v.string()),
});
export const ThreadOperations = v.strictObject({
  source: nullable(ChannelAddress),
  teleport: OperationAvailability,
  summon: OperationAvailability,
  barred: v.record(v.string(), v.string()),
});

/** A directive waiting in its thread's queue (contract section 7); `message_id` is its ledger message's id. */
export const QueuedDirective = v.strictObject({
  id: Uuid,
  message_id: Uuid,
  text: v.string(),
  author: v.string(),
  /** From 1, the next to run. */
  position: v.pipe(v.number(), v.integer(), v.minValue(1)),
  created_at: Time,
  /** The schedule or hook that queued it; null: a person's directive. */
  origin: nullable(DirectiveOrigin),
});

/**
 * A directive accepted: its run started (`run_id`), or, sent with `when_busy` to a busy thread, queued (`queued`, no run
 * yet). Sent with `when_busy: "steer"`, `steered` says whether it went into the running run (`run_id`, true) or not
 * (queued, or started when the thread was free by then: false).
 */
export const DirectiveAccepted = v.union([
  v.strictObject({ thread_id: Uuid, key: nullable(v.string()), conversation_id: Uuid, run_id: Uuid, steered: v.optional(v.boolean()) }),
  v.strictObject({
    thread_id: Uuid,
    key: nullable(v.string()),
    conversation_id: Uuid,
    queued: v.strictObject({ id: Uuid, position: v.pipe(v.number(), v.integer(), v.minValue(1)) }),
    steered: v.optional(v.literal(false)),
  }),
]);
export const Answered = v.strictObject({ answered: v.pipe(v.number(), v.integer()) });
export const Cancelled = v.strictObject({ run_id: Uuid });
export const Teleported = v.strictObject({ thread_id: Uuid, conversation_id: Uuid });
export const Summoned = v.strictObject({ conversation_id: Uuid });
export const Forked = v.strictObject({ thread_id: Uuid, key: nullable(v.string()) });

/** A rewind's answer: the checkpoint the worktree went back to, or null on a thread with no worktree. */
export const Rewound = v.strictObject({ restored: nullable(v.string()) });

export const ArtifactConfig = v.strictObject({ viewer_origin: nullable(v.string()), sandbox_origin: nullable(v.string()), path: v.string() });
export const McpAppView = v.strictObject({
  artifact: v.strictObject({
    id: v.optional(Uuid),
    owner: v.optional(v.string()),
    installation: v.optional(Uuid),
    resource_uri: v.optional(v.string()),
    title: v.optional(v.string()),
    tool: v.optional(v.string()),
    input: v.optional(v.unknown()),
    output: v.optional(v.unknown()),
    created_at: v.optional(Time),
  }),
  resource: v.strictObject({ uri: v.string(), mimeType: v.string(), text: v.string(), ui: v.optional(v.record(v.string(), v.unknown())) }),
  sandbox_origin: v.string(),
  sandbox_url: v.string(),
  viewer_path: v.string(),
});

/** What each live event type carries in `data` (docs/api.md, "The live socket"). */
const RunId = nullable(Uuid);
/** An event stored before directives kept their origin (migration 0026) replays its message or item without one. */
const Replayed = { origin: v.optional(nullable(DirectiveOrigin)) };
const EventMessage = v.strictObject({ ...LedgerMessage.entries, ...Replayed });
const LIVE_DATA = {
  message: v.looseObject({
    run_id: RunId,
    message: v.optional(EventMessage),
    delta: v.optional(v.string()),
    update: v.optional(v.union([v.looseObject({ kind: v.literal('thought'), text: v.string() }), v.looseObject({ kind: v.literal('mode'), mode: v.string() })])),
  }),
  run_started: v.looseObject({ run_id: Uuid, conversation_id: Uuid }),
  tool_call: v.looseObject({ run_id: Uuid, update: v.boolean(), id: v.string() }),
  plan: v.looseObject({ run_id: Uuid, entries: v.array(v.looseObject({ content: v.string(), priority: v.string(), status: v.string() })) }),
  usage: v.looseObject({ run_id: Uuid, used: v.number(), size: v.number(), cost: nullable(v.looseObject({ amount: v.number(), currency: v.string() })) }),
  available_commands: v.looseObject({ run_id: Uuid, commands: v.array(v.looseObject({ name: v.string(), description: v.string(), hint: nullable(v.string()) })) }),
  posture_refused: v.looseObject({ run_id: RunId, conversation_id: Uuid, part: v.picklist(['mode', 'model', 'effort']), value: v.string(), reason: v.string() }),
  approval_requested: v.looseObject({ run_id: Uuid, pending: Pending }),
  run_finished: v.looseObject({ run_id: Uuid, stop_reason: v.string(), run: Run }),
  run_error: v.looseObject({ run_id: Uuid, code: v.string(), error: v.string(), run: nullable(Run) }),
  run_cancelled: v.looseObject({ run_id: Uuid, code: v.string(), reason: v.string(), run: nullable(Run) }),
  reflex_asleep: v.looseObject({ run_id: Uuid }),
  rewound: v.looseObject({ run_id: Uuid, runs: v.array(Uuid), restored: nullable(v.string()) }),
  queued: v.strictObject({ ...QueuedDirective.entries, ...Replayed }),
  dequeued: v.looseObject({ id: Uuid, run_id: RunId, conversation_id: v.optional(Uuid), message: v.optional(EventMessage), withdrawn: v.optional(v.boolean()) }),
  gateway: v.looseObject({ operation: v.picklist(['teleport', 'summon']), from: v.unknown(), to: v.unknown(), hint: v.optional(nullable(v.string())) }),
} as const;

/** One live-socket frame: the envelope `{seq, type, thread_id, at, data}`, its `data` by `type`. */
export const LiveEvent = v.variant(
  'type',
  (Object.keys(LIVE_DATA) as (keyof typeof LIVE_DATA)[]).map((type) =>
    v.strictObject({ seq: v.pipe(v.number(), v.integer(), v.minValue(1)), type: v.literal(type), thread_id: Uuid, at: Time, data: LIVE_DATA[type] }),
  ),
);

/** A response described for the OpenAPI document: its words and, for a JSON body, its schema. */
export interface Answer {
  readonly description: string;
  readonly schema?: v.GenericSchema;
  /** The media type when the body is not JSON (a page, a script, the metrics text). */
  readonly mediaType?: string;
}

export const answer = (description: string, schema?: v.GenericSchema): Answer => ({ description, ...(schema === undefined ? {} : { schema }) });
