import { core } from '../packages.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/**
 * `chat_cursors`: where a chat adapter stopped reading a place (an XMPP room): the last message handled
 * there (`stanza_id`) and when it was posted (contract section 9, "Nothing lost while away").
 */
export const ChatCursorSchema = defineEntity({
  name: 'ChatCursor',
  tableName: 'chat_cursors',
  properties: {
    channel: p.text().primary(),
    place: p.text().primary(),
    stanza_id: p.text(),
    at: p.datetime(),
    updated_at: p.datetime(),
  },
});

/**
 * `chat_claims`: a chat message (or a reply said once) claimed by one instance until `claimed_until`,
 * and `done` for good once handled: no instance handles it again.
 */
export const ChatClaimSchema = defineEntity({
  name: 'ChatClaim',
  tableName: 'chat_claims',
  properties: {
    channel: p.text().primary(),
    key: p.text().primary(),
    holder: p.text(),
    claimed_until: p.datetime(),
    done: p.boolean(),
    created_at: p.datetime(),
  },
});

/**
 * `chat_occupants`: who a chat platform asserted an occupant id of a place to be (an empty `sender`:
 * two were seen for it, and it names nobody).
 */
export const ChatOccupantSchema = defineEntity({
  name: 'ChatOccupant',
  tableName: 'chat_occupants',
  properties: {
    channel: p.text().primary(),
    place: p.text().primary(),
    occupant: p.text().primary(),
    sender: p.text(),
    updated_at: p.datetime(),
  },
});

/** `chat_served_places`: the places (XMPP rooms) a channel's bot was invited to by a linked user, joined again after a restart. */
export const ChatServedPlaceSchema = defineEntity({
  name: 'ChatServedPlace',
  tableName: 'chat_served_places',
  properties: {
    channel: p.text().primary(),
    place: p.text().primary(),
    served_at: p.datetime(),
  },
});
