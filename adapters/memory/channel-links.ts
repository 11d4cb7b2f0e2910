import type { ChannelLink, ChannelLinks } from '../../ports/channel-links.ts';

/** A stored link code: its hash is the key; `used` once redeemed. */
export interface MemoryLinkCode {
  readonly user: string;
  readonly channel: string;
  readonly expires_at: string;
  used: boolean;
}

/** What the memory adapter keeps of links: codes by hash, links by `channel\u0000user`. */
export interface MemoryLinks {
  readonly codes: Map<string, MemoryLinkCode>;
  readonly links: Map<string, ChannelLink>;
}



const key = (channel: string, user: string) => `${channel}\u0000${user}`;
const byChannel = (a: ChannelLink, b: ChannelLink) => (a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : 0);

/** Links in memory; each method checks and writes without an `await` in between, so a code is redeemed once. */
export function memoryChannelLinks(state: MemoryLinks): ChannelLinks {
  const holder = (channel: string, address: string) =>
    [...state.links.values()].find((link) => link.channel === channel && link.address === address) ?? null;

  return {
    async createCode(code) {
      for (const [hash, stored] of state.codes) {
        // The user's earlier codes for the channel stop working; long-expired codes of anyone are dropped.
        const stale = Date.parse(stored.expires_at) < Date.parse(code.created_at) - 86_400_000;
        if ((stored.user === code.user && stored.channel === code.channel) || stale) state.codes.delete(hash);
      }
      state.codes.set(code.code_hash, { user: code.user, channel: code.channel, expires_at: code.expires_at, used: false });
    },

    async redeem({ channel, address, code_hash, at }) {
      const code = state.codes.get(code_hash);
      if (code === undefined || code.channel !== channel) return { kind: 'unknown' };
      if (code.used) return { kind: 'used' };
      if (Date.parse(code.expires_at) <= Date.parse(at)) return { kind: 'expired' };
      const lower = address.toLowerCase();
      const held = holder(channel, lower);
      if (held !== null && held.user !== code.user) return { kind: 'address_taken' };
      code.used = true;
      const before = state.links.get(key(channel, code.user));
      const link: ChannelLink = { user: code.user, channel, address: lower, created_at: new Date(Date.parse(at)).toISOString() };
      state.links.set(key(channel, code.user), link);
      return { kind: 'linked', link, replaced: before === undefined || before.address === lower ? null : before.address };
    },

    links: async (user) => [...state.links.values()].filter((link) => link.user === user).sort(byChannel),

    unlink: async (user, channel) => state.links.delete(key(channel, user)),

    userAt: async (channel, address) => holder(channel, address.toLowerCase())?.user ?? null,
  };
}
