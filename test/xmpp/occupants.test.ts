// Who an XMPP room's occupants are, from what the room asserts: a presence is taken only from an occupant of
// a room on the bot's MUC service, with exactly one muc#user item; a message's own elements never name anyone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { xml } from '@xmpp/client';
import type { Element } from '@xmpp/client';
import { occupantDirectory, occupantPresence } from '../../adapters/xmpp/occupants.ts';
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

  /** A directory fed by hand: `presence` delivers a stanza as the connection would. */
  function fed(max?: number) {
    let listener: (stanza: Element) => void = () => {};
    const connection = { account: { muc: MUC, nick: 'console' } as never, listen: (l: (stanza: Element) => void) => ((listener = l), () => {}) };
    const directory = occupantDirectory(connection, max);
    const learned: string[] = [];
    directory.onLearned((room, id, jid) => learned.push(`${room} ${id} ${jid}`));
    const presence = (room: string, nick: string, jid: string, id: string, gone = false) =>
      listener(xml('presence', { from: `${room}@${MUC}/${nick}`, ...(gone ? { type: 'unavailable' } : {}) }, item(jid), occupantId(id)));
    return { directory, presence, learned };
  }

  it('an occupant who leaves is forgotten, nick and occupant id (the listeners were told it)', () => {
    const { directory, presence, learned } = fed();
    presence('general', 'alice', 'alice@example.org', 'oid-a');
    presence('general', 'bob', 'bob@example.org', 'oid-b');
    assert.deepEqual(directory.size(), { nicks: 2, ids: 2 });
    assert.equal(directory.nickOf(`general@${MUC}`, 'alice@example.org'), 'alice');
    presence('general', 'alice', 'alice@example.org', 'oid-a', true);
    assert.equal(directory.nickOf(`general@${MUC}`, 'alice@example.org'), undefined);
    assert.equal(directory.byNick(`general@${MUC}/alice`), undefined);
    assert.equal(directory.byOccupantId(`general@${MUC}`, 'oid-a'), undefined);
    assert.equal(directory.byOccupantId(`general@${MUC}`, 'oid-b'), 'bob@example.org');
    assert.deepEqual(directory.size(), { nicks: 1, ids: 1 });
    assert.deepEqual(learned, [`general@${MUC} oid-a alice@example.org`, `general@${MUC} oid-b bob@example.org`]);
  });

  it('when the bot leaves a room, everyone of that room is forgotten, and no one of another', () => {
    const { directory, presence } = fed();
    presence('general', 'alice', 'alice@example.org', 'oid-a');
    presence('ops', 'alice', 'alice@example.org', 'oid-a2');
    presence('general', 'console', 'console@example.org', 'oid-bot');
    presence('general', 'console', 'console@example.org', 'oid-bot', true);
    assert.equal(directory.byNick(`general@${MUC}/alice`), undefined);
    assert.equal(directory.byOccupantId(`general@${MUC}`, 'oid-a'), undefined);
    assert.equal(directory.byNick(`ops@${MUC}/alice`), 'alice@example.org');
    assert.deepEqual(directory.size(), { nicks: 1, ids: 1 });
  });

  it('it holds at most its bound of occupants, however many come and never leave: the oldest go first', () => {
    const { directory, presence } = fed(50);
    for (let i = 0; i < 1_000; i++) presence(`room${i % 7}`, `nick${i}`, `p${i}@example.org`, `oid-${i}`);
    assert.deepEqual(directory.size(), { nicks: 50, ids: 50 });
    assert.equal(directory.byNick(`room${999 % 7}@${MUC}/nick999`), 'p999@example.org', 'the newest is held');
    assert.equal(directory.byNick(`room0@${MUC}/nick0`), undefined, 'the oldest went');
  });

  it('an occupant id seen for two JIDs names nobody, even after one of them left', () => {
    const { directory, presence } = fed();
    presence('general', 'alice', 'alice@example.org', 'oid-x');
    presence('general', 'mallory', 'mallory@example.org', 'oid-x');
    presence('general', 'alice', 'alice@example.org', 'oid-x', true);
    assert.equal(directory.byOccupantId(`general@${MUC}`, 'oid-x'), null);
  });
});
