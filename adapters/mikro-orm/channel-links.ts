import type { MikroORM } from '@mikro-orm/postgresql';
import type { ChannelLink, ChannelLinks, RedeemOutcome } from '../../ports/channel-links.ts';
import { iso, runStatement } from './sql.ts';
import { transaction } from './transaction.ts';

const LINK = `user_id as "user", channel, address, ${iso('created_at')} as created_at`;

/**
 * Links in `channel_links` and codes in `channel_link_codes`. A redemption is one transaction: the
 * code is marked used by a conditional `update` (its row lock makes a second redeemer of the same code
 * wait, then find it used), and the link is written under the unique (channel, address) index, so two
 * users never hold one address even when their codes are redeemed at once.
 */
export function mikroOrmChannelLinks(orm: MikroORM): ChannelLinks {
  return {
    async createCode(code) {
      await transaction(orm, async (sql) => {
        await sql(`delete from channel_link_codes where (user_id = ? and channel = ?) or expires_at < ?::timestamptz - interval '1 day'`,
          [code.user, code.channel, code.created_at]);
        await sql('insert into channel_link_codes (code_hash, user_id, channel, expires_at, created_at) values (?, ?, ?, ?, ?)',
          [code.code_hash, code.user, code.channel, code.expires_at, code.created_at]);
        return null;
      });
    },

    redeem: ({ channel, address, code_hash, at }) =>
      transaction<RedeemOutcome>(orm, async (sql, rollback) => {
        const lower = address.toLowerCase();
        const [claimed] = await sql<{ user_id: string }>(
          `update channel_link_codes set used_at = ? where code_hash = ? and channel = ? and used_at is null and expires_at > ? returning user_id`,
          [at, code_hash, channel, at]);
        if (claimed === undefined) {
          const [found] = await sql<{ used: boolean }>('select used_at is not null as used from channel_link_codes where code_hash = ? and channel = ?', [code_hash, channel]);
          return found === undefined ? { kind: 'unknown' } : found.used ? { kind: 'used' } : { kind: 'expired' };
        }
        const user = claimed.user_id;
        const [held] = await sql('select 1 from channel_links where channel = ? and address = ? and user_id <> ?', [channel, lower, user]);
        // Rolled back: the code stays unused, for the user to send from another address.
        if (held !== undefined) return rollback({ kind: 'address_taken' });
        const [before] = await sql<{ address: string }>('delete from channel_links where user_id = ? and channel = ? returning address', [user, channel]);
        const [link] = await sql<ChannelLink>(
          `insert into channel_links (user_id, channel, address, created_at) values (?, ?, ?, ?) on conflict do nothing returning ${LINK}`,
          [user, channel, lower, at]);
        // Another user's link to the address committed meanwhile.
        if (link === undefined) return rollback({ kind: 'address_taken' });
        return { kind: 'linked', link, replaced: before === undefined || before.address === lower ? null : before.address };
      }),

    links: (user) => runStatement<ChannelLink>(orm, `select ${LINK} from channel_links where user_id = ? order by channel collate "C"`, [user]),

    unlink: async (user, channel) =>
      (await runStatement(orm, 'delete from channel_links where user_id = ? and channel = ? returning 1', [user, channel])).length > 0,

    userAt: async (channel, address) =>
      (await runStatement<{ user_id: string }>(orm, 'select user_id from channel_links where channel = ? and address = ?', [channel, address.toLowerCase()]))[0]?.user_id ?? null,
  };
}
