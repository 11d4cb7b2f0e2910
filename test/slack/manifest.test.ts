// The Slack app manifest the project ships (deploy/slack-app-manifest.json, docs/channels.md "The Slack
// channel"): an operator creates the app from it. It must ask for Socket Mode (no public URL), the events
// the adapter handles, button clicks, a messages tab people can write `link <code>` in, and exactly the bot
// scopes the Web API methods the adapter calls need: no more, no fewer.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const manifest = JSON.parse(readFileSync(new URL('../../deploy/slack-app-manifest.json', import.meta.url), 'utf8'));
const adapterDir = new URL('../../adapters/slack/', import.meta.url);
const adapter = readdirSync(adapterDir).filter((name) => name.endsWith('.ts')).map((name) => readFileSync(new URL(name, adapterDir), 'utf8')).join('\n');

/**
 * The bot scopes each Web API method the adapter calls needs, on public (`channels:`) and private
 * (`groups:`) channels and direct messages (`im:`), as Slack's method reference lists them. `auth.test` needs none.
 */
const METHOD_SCOPES: Record<string, readonly string[]> = {
  'auth.test': [],
  'conversations.list': ['channels:read', 'groups:read'],
  'conversations.history': ['channels:history', 'groups:history'],
  'conversations.replies': ['channels:history', 'groups:history'],
  'chat.postMessage': ['chat:write'],
  'chat.postEphemeral': ['chat:write'],
  'chat.update': ['chat:write'],
};

/** What else the adapter needs: mentions, direct messages (`link <code>`, read, answered), the metadata of its own posts. */
const EVENT_AND_DM_SCOPES = ['app_mentions:read', 'im:history', 'im:read', 'im:write'];
const METADATA_SCOPE = 'metadata.message:read';

describe('deploy/slack-app-manifest.json', () => {
  it('is a Slack app manifest with a bot user and a messages tab people can write to', () => {
    assert.equal(typeof manifest.display_information?.name, 'string');
    assert.ok(manifest.display_information.name.length > 0 && manifest.display_information.name.length <= 35);
    assert.equal(typeof manifest.features?.bot_user?.display_name, 'string');
    assert.equal(manifest.features.app_home?.messages_tab_enabled, true);
    assert.equal(manifest.features.app_home?.messages_tab_read_only_enabled, false);
  });

  it('runs over Socket Mode: no request URL anywhere, interactivity on for the buttons', () => {
    assert.equal(manifest.settings?.socket_mode_enabled, true);
    assert.equal(manifest.settings.interactivity?.is_enabled, true);
    assert.doesNotMatch(JSON.stringify(manifest), /request_url|https?:\/\//, 'Socket Mode needs no public URL');
  });

  it('subscribes to the events the adapter handles: mentions, and messages in public and private channels and DMs', () => {
    // adapters/slack/inbound.ts takes `message` and `app_mention` events; a DM (`im`) is a link code or help.
    assert.match(adapter, /event\.type !== 'message' && event\.type !== 'app_mention'/);
    assert.deepEqual([...manifest.settings.event_subscriptions.bot_events].sort(), ['app_mention', 'message.channels', 'message.groups', 'message.im']);
  });

  it('asks for exactly the bot scopes of the Web API methods the adapter calls, and of what it reads', () => {
    const called = new Set([...adapter.matchAll(/'((?:auth|apps|bots|chat|conversations|files|reactions|team|users|views)\.[a-zA-Z]+(?:\.[a-zA-Z]+)?)'/g)].map((m) => m[1]!));
    assert.ok(called.size > 0);
    for (const method of called) assert.ok(method in METHOD_SCOPES, `the adapter calls ${method}: add the scopes it needs to the manifest and to METHOD_SCOPES`);
    // Its own posts' metadata (the delivery id) is read back to post nothing twice.
    assert.match(adapter, /include_all_metadata: true/);
    const needed = new Set([...[...called].flatMap((method) => METHOD_SCOPES[method]!), ...EVENT_AND_DM_SCOPES, METADATA_SCOPE]);
    assert.deepEqual([...manifest.oauth_config.scopes.bot].sort(), [...needed].sort());
    assert.equal(manifest.oauth_config.scopes.user, undefined, 'no user scopes: the app acts as its bot only');
  });
});
