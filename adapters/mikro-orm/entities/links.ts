import { core } from '../packages.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/**
 * `channel_link_codes`: one-use codes that link a console user to a chat address (contract section 9).
 * Only the SHA-256 of a code is stored (`code_hash`, hex); `used_at` is set by the one redemption that
 * succeeds. A user's new code for a channel deletes the earlier ones.
 */
export const ChannelLinkCodeSchema = defineEntity({
  name: 'ChannelLinkCode',
  tableName: 'channel_link_codes',
  properties: {
    code_hash: p.text().primary(),
    user_id: p.text(),
    channel: p.text(),
    expires_at: p.datetime(),
    created_at: p.datetime(),
    used_at: p.datetime().nullable(),
  },
  indexes: [{ name: 'channel_link_codes_user_id_channel_index', properties: ['user_id', 'channel'] }],
});

/**
 * `channel_links`: a user's link to an address (lower case) on a channel: one per user per channel
 * (the key), and an address belongs to one user per channel (the unique index).
 */
export const ChannelLinkSchema = defineEntity({
  name: 'ChannelLink',
  tableName: 'channel_links',
  properties: {
    user_id: p.text().primary(),
    channel: p.text().primary(),
    address: p.text(),
    created_at: p.datetime(),
  },
  uniques: [{ name: 'channel_links_channel_address_unique', properties: ['channel', 'address'] }],
});
