// The ledger read's mapping of an entry to the message answered, with nothing of Node (runs under Deno,
// Bun and Chromium too: npm run test:runtimes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ledgerMessage } from '../../core/artifacts/overview.ts';
import type { LedgerEntry } from '../../ports/ledger-store.ts';

const plain: LedgerEntry = { id: 'm1', role: 'user', text: 'hello', artifact_id: null, created_at: '2026-01-01T00:00:00.000Z', origin: null };
const referencing: LedgerEntry = {
  id: 'm2', role: 'assistant', text: 'here', artifact_id: 'a1', created_at: '2026-01-01T00:00:01.000Z', origin: null,
  app: { title: 'Forecast', provider_name: 'Weather' },
};

/**
 * Issue 28: a messages page maps 50 entries. An entry without `app` (a message that references
 * nothing, or an artifact that is gone) is the message answered, as the store built it: no copy per
 * message (an object rest per entry cost the page more than the rest of its mapping).
 */
describe('ledger message (the messages page)', () => {
  it('answers an entry without an artifact as it is: the same object, the same bytes', () => {
    const toMessage = ledgerMessage({ viewerOrigin: 'https://viewer.example', viewerPath: '/artifacts' });
    assert.equal(toMessage(plain), plain);
    assert.equal(JSON.stringify(toMessage(plain)), '{"id":"m1","role":"user","text":"hello","artifact_id":null,"created_at":"2026-01-01T00:00:00.000Z","origin":null}');
  });

  it('offers the overview of a referenced artifact when a viewer origin is configured', () => {
    const toMessage = ledgerMessage({ viewerOrigin: 'https://viewer.example', viewerPath: '/artifacts' });
    assert.equal(
      JSON.stringify(toMessage(referencing)),
      '{"id":"m2","role":"assistant","text":"here","artifact_id":"a1","created_at":"2026-01-01T00:00:01.000Z","origin":null,' +
        '"app":{"artifact_id":"a1","title":"Forecast","provider_name":"Weather","viewer_url":"https://viewer.example/artifacts/a1"}}',
    );
  });

  it('answers the message alone, without what the store knew of the artifact, when no viewer origin is configured', () => {
    const toMessage = ledgerMessage({ viewerOrigin: null, viewerPath: '/artifacts' });
    assert.deepEqual(toMessage(referencing), { id: 'm2', role: 'assistant', text: 'here', artifact_id: 'a1', created_at: '2026-01-01T00:00:01.000Z', origin: null });
    assert.equal('app' in toMessage(referencing), false);
  });
});
