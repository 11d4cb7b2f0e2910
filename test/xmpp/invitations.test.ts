// Invitations of the XMPP bot and replies to its posts, as stanzas: who invited is who the server asserts (the
// room for a mediated invitation, the sender's own JID for a direct one), never a room off the bot's MUC service;
// a reply names the post it answers, and its quote for other clients is taken off.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xml } from '@xmpp/client';
import { roomInvitation } from '../../adapters/xmpp/invitations.ts';
import { botPosts, repliedTo, replyText } from '../../adapters/xmpp/replies.ts';
import { NS } from '../../adapters/xmpp/stanzas.ts';

const MUC = 'conference.example.org';
const BOT = 'console@example.org';
const mediated = (from: string, inviter: string) => xml('message', { from, to: BOT, id: 'inv-1' }, xml('x', { xmlns: NS.mucUser }, xml('invite', { from: inviter }, xml('reason', {}, 'from bob@example.org'))));
const direct = (from: string, room: string, type?: string) => xml('message', { from, to: BOT, id: 'inv-2', ...(type === undefined ? {} : { type }) }, xml('x', { xmlns: NS.conference, jid: room }));

describe('xmpp invitations', () => {
  it('a mediated invitation names the inviter as the room says it; a direct one, as the sender\'s server stamped it', () => {
    assert.deepEqual(roomInvitation(mediated(`ops@${MUC}`, 'Alice@Example.org/phone'), MUC, BOT),
      { room: `ops@${MUC}`, inviter: 'alice@example.org', replyTo: 'Alice@Example.org/phone', id: 'inv-1', kind: 'mediated' });
    assert.deepEqual(roomInvitation(direct('alice@example.org/laptop', `Lab@${MUC}`), MUC, BOT),
      { room: `lab@${MUC}`, inviter: 'alice@example.org', replyTo: 'alice@example.org/laptop', id: 'inv-2', kind: 'direct' });
  });

  it('what is not the room speaking, a room off the MUC service, a groupchat message or the bot itself invites nobody', () => {
    assert.equal(roomInvitation(mediated(`ops@${MUC}/mallory`, 'alice@example.org/x'), MUC, BOT), null, 'an occupant is not the room');
    assert.equal(roomInvitation(mediated('mallory@example.org/res', 'alice@example.org/x'), MUC, BOT), null, 'a person is not a room');
    assert.equal(roomInvitation(mediated(`ops@conference.evil.example`, 'alice@example.org/x'), MUC, BOT), null);
    assert.equal(roomInvitation(direct('alice@example.org/x', 'room@conference.evil.example'), MUC, BOT), null);
    assert.equal(roomInvitation(direct(`ops@${MUC}/alice`, `lab@${MUC}`), MUC, BOT), null, 'a room occupant does not invite directly');
    assert.equal(roomInvitation(direct('alice@example.org/x', `lab@${MUC}`, 'groupchat'), MUC, BOT), null);
    assert.equal(roomInvitation(direct(`${BOT}/other`, `lab@${MUC}`), MUC, BOT), null);
    assert.equal(roomInvitation(xml('message', { from: 'alice@example.org/x', type: 'chat' }, xml('body', {}, 'join lab please')), MUC, BOT), null);
  });
});

describe('xmpp replies', () => {
  it('a reply names the post it answers and its author; its quote is taken off by code points', () => {
    const quote = '> 🚀 ship it\n';
    const message = xml('message', { type: 'groupchat' }, xml('body', {}, `${quote}yes, go`),
      xml('reply', { xmlns: NS.reply, to: `ops@${MUC}/console`, id: 'sid-1' }),
      xml('fallback', { xmlns: NS.fallback, for: NS.reply }, xml('body', { start: '0', end: String(Array.from(quote).length) })));
    assert.deepEqual(repliedTo(message), { id: 'sid-1', to: `ops@${MUC}/console` });
    assert.equal(replyText(message, `${quote}yes, go`), 'yes, go');
    assert.equal(repliedTo(xml('message', {}, xml('body', {}, 'hi'))), null);
    assert.equal(replyText(xml('message', {}, xml('fallback', { xmlns: NS.fallback, for: 'urn:other' }, xml('body', { start: '0', end: '3' }))), 'abcdef'), 'abcdef');
  });

  it("the bot's posts are remembered by both their ids, at most the bound: the oldest go", () => {
    const posts = botPosts(4);
    posts.record('ops', ['sid-1', 'origin-1'], 't1');
    posts.record('ops', ['sid-2', 'origin-2'], 't2');
    assert.equal(posts.threadOf('ops', 'origin-2'), 't2');
    assert.equal(posts.threadOf('lab', 'sid-2'), undefined, 'per room');
    posts.record('ops', ['sid-3', null], 't3');
    assert.equal(posts.threadOf('ops', 'sid-1'), undefined, 'the oldest went');
    assert.equal(posts.threadOf('ops', 'sid-3'), 't3');
  });
});
