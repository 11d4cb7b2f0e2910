import type { MikroORM } from '@mikro-orm/postgresql';
import type { AddressLanding } from '../../ports/address-landing.ts';
import { runStatement } from './sql.ts';

/**
 * One statement, so one transaction: the conversations at `from` and those whose `moved_to` names it (one
 * update: a teleport's source has both, and a row updated twice in one statement keeps one of the two),
 * then the deliveries waiting there, their place too. A data-modifying `with` runs whether or not its rows
 * are read. Addresses are compared as `jsonb` built from `{channel, id}` alone, as `livingAt` does.
 */
const LAND = `
with conversations_landed as (
  update conversations set
    address = case when address = ?::jsonb then ?::jsonb else address end,
    moved_to = case when moved_to->'address' = ?::jsonb then jsonb_set(moved_to, '{address}', ?::jsonb) else moved_to end
  where address = ?::jsonb or moved_to->'address' = ?::jsonb
  returning id
)
update deliveries set address = ?::jsonb, place = ? where address = ?::jsonb`;

/** A provisional address moved to the one the platform gave (AddressLanding). */
export function mikroOrmAddressLanding(orm: MikroORM): AddressLanding {
  return {
    async landAt(from, to) {
      const [f, t] = [JSON.stringify({ channel: from.channel, id: from.id }), JSON.stringify({ channel: to.channel, id: to.id })];
      await runStatement(orm, LAND, [f, t, f, t, f, f, t, to.id, f]);
    },
  };
}
