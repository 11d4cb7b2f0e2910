import type { XmppAccount } from '../../domain/xmpp.ts';

/** The id of the demo world's XMPP channel, there only when its variables are set (docs/operations.md, configuration). */
export const DEMO_XMPP_CHANNEL = 'xmpp-chat';

/**
 * The demo world file's JSON with an XMPP channel added for `account` (from the DEMO_XMPP_ variables,
 * `src/config.ts`), or the JSON as it is when `account` is null. The channel offers every agent of the
 * world, links no one (people link themselves with a code), and names the variable that holds the
 * bot's password (`password_env`), never the password. The result is validated as any world file is.
 */
export function withDemoXmppChannel(world: unknown, account: XmppAccount | null): unknown {
  if (account === null || typeof world !== 'object' || world === null) return world;
  const file = world as { channels?: unknown; agents?: unknown };
  const agents = Array.isArray(file.agents) ? file.agents.flatMap((agent: { id?: unknown }) => (typeof agent?.id === 'string' ? [agent.id] : [])) : [];
  const channel = {
    id: DEMO_XMPP_CHANNEL, kind: 'xmpp', name: 'XMPP chat', shared: true, browsable: true, agents, linked_users: [],
    xmpp: { ...account }, links: {},
  };
  return { ...file, channels: [...(Array.isArray(file.channels) ? file.channels : []), channel] };
}
