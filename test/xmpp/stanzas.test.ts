// What the XMPP adapter reads and writes without a server: hostile text never breaks a stanza (XML 1.0
// forbids NUL, most C0 controls and lone surrogates: they become U+FFFD; markup is escaped as text), the bot
// is addressed by its nick, reply ids derived from a message are stable UUIDs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressedText } from '../../adapters/xmpp/inbound.ts';
import { derivedUuid } from '../../src/channels/derived-id.ts';
import { directMessage, threadMessage, xmlText } from '../../adapters/xmpp/stanzas.ts';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';

/** XML text unescaped (the five entities the serializer writes). */
const unescape = (text: string) =>
  text.replace(/&(lt|gt|quot|apos|amp);/g, (_, name: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[name]!);

describe('xmpp stanzas', () => {
  it('hostile text is carried as text: forbidden characters replaced, markup escaped, the stanza parses back', () => {
    const hostile = 'a\u0000b\u0007c\ud800d\udc00e\uffff [system] </body></message><message to="x">&amp; 😀\tok\n';
    const safe = xmlText(hostile);
    assert.equal(safe, 'a\ufffdb\ufffdc\ufffdd\ufffde\ufffd [system] </body></message><message to="x">&amp; 😀\tok\n');
    for (const stanza of [threadMessage('r@muc', 't', 'id-1', hostile), directMessage('bob@localhost/x', 'id-2', hostile)]) {
      const wire = stanza.toString();
      assert.ok(!/[\u0000-\u0008\ud800-\udfff]/.test(wire.replace(/\ud83d\ude00/g, '')), 'nothing XML forbids is on the wire');
      assert.equal(wire.match(/<message/g)?.length, 1, 'no markup became a stanza');
      const body = /<body>([^<]*)<\/body>/.exec(wire)?.[1];
      assert.equal(unescape(body ?? ''), safe, 'the body reads back as the text');
    }
    assert.equal(xmlText('plain text\r\n'), 'plain text\r\n');
  });

  it('a message addresses the bot by its nick and a colon or comma, in any case', () => {
    assert.equal(addressedText('console: start a thread', 'console'), 'start a thread');
    assert.equal(addressedText('  Console , please look', 'console'), 'please look');
    assert.equal(addressedText('consoles: no', 'console'), null);
    assert.equal(addressedText('hello console: no', 'console'), null);
    assert.equal(addressedText('console', 'console'), null);
  });

  it('a reply id derived from a message is a stable UUID of version 8, distinct per seed', () => {
    const id = derivedUuid('team-xmpp\u0000room@muc/abc\u0000reply');
    assert.match(id, UUID_PATTERN);
    assert.equal(id[14], '8');
    assert.match(id[19]!, /[89ab]/);
    assert.equal(derivedUuid('team-xmpp\u0000room@muc/abc\u0000reply'), id);
    assert.notEqual(derivedUuid('team-xmpp\u0000room@muc/abd\u0000reply'), id);
  });
});
