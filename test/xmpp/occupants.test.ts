// Who an XMPP room's occupants are, from what the room asserts: a presence is taken only from an occupant of
// a room on the bot's MUC service, with exactly one muc#user item; a message's own elements never name anyone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xml } from '@xmpp/client';
import { occupantPresence } from '../../adapters/xmpp/occupants.ts';
import { messageFacts, NS } from '../../adapters/xmpp/stanzas.ts';

const MUC = 'conference.example.org';
const item = (jid: string) => xml('x', { xmlns: NS.mucUser }, xml('item', { jid, affiliation: 'none', role: 'participant' }));
const occupantId = (id: string) => xml('occupant-id', { xmlns: NS.occupantId, id });

describe('xmpp occupants', () => {
  it("a room occupant's presence names its real bare JID and occupant id", () => {
    const presence = occupantPresence(xml('presence', { from: `general@${MUC}/alice` }, item('Alice@Example.org/phone'), occupantId('oid-a')), MUC);
    assert.deepEqual(presence, { from: `general@${MUC}/alice`, room: `general@${MUC}`, gone: false, jid: 'alice@example.org', occupantId: 'oid-a' });
  });

  it('a presence from anywhere but a room of the MUC service names nobody', () => {
    for (const from of ['mallory@example.org/res', `${MUC}/alice`, 'general@conference.evil.example/alice', `general@${MUC}`]) {
      assert.equal(occupantPresence(xml('presence', { from }, item('alice@example.org')), MUC), null, from);
    }
  });

  it('two muc#user items (or two occupant ids) are a forgery, not a choice: neither is taken', () => {
    const two = occupantPresence(xml('presence', { from: `general@${MUC}/m` }, item('alice@example.org'), item('mallory@example.org'), occupantId('a'), occupantId('b')), MUC);
    assert.equal(two?.jid, null);
    assert.equal(two?.occupantId, null);
  });

  it("leaving is said as gone; a message's facts carry no sender of its own, and two occupant ids are none", () => {
    assert.equal(occupantPresence(xml('presence', { from: `general@${MUC}/alice`, type: 'unavailable' }, item('alice@example.org')), MUC)?.gone, true);
    const message = xml('message', { from: `general@${MUC}/mallory`, type: 'groupchat' }, xml('body', {}, 'hi'), item('alice@example.org'), occupantId('x'), occupantId('y'));
    const facts = messageFacts(message, `general@${MUC}`);
    assert.ok(!Object.values(facts).includes('alice@example.org'));
    assert.equal(facts.occupantId, null);
  });
});
