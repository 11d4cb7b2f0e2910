import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { slackChannelPort, startSlackChannel } from '../../adapters/slack/channel-port.ts';
import { DELIVERY_EVENT } from '../../adapters/slack/deliver.ts';
import { slackThreadAddress } from '../../domain/slack.ts';
import { channelPortContract } from '../contracts/channel-port.contract.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack.ts';
import { online, shownText, where } from '../support/slack.ts';

const silent = { info() {}, warn() {}, error() {} };

channelPortContract('slack (a local Slack speaking the Web API and Socket Mode)', async () => {
  const slack: FakeSlack = await startFakeSlack();
  slack.addUser({ id: 'U0ALICE', name: 'alice' });
  slack.addUser({ id: 'U0ROBOT', name: 'robot', botId: 'B0ROBOT' });
  slack.addChannel({ id: 'C0GENERAL', name: 'general' });
  slack.addChannel({ id: 'C0OLD', name: 'old-releases', archived: true });
  slack.addChannel({ id: 'C0ELSEWHERE', name: 'elsewhere', member: false });
  const seed = await slack.post('U0ALICE', 'C0GENERAL', 'Release thread: what is left?');
  await slack.post('U0ALICE', 'C0GENERAL', 'The changelog.', { threadTs: seed });
  const thread = slackThreadAddress('C0GENERAL', seed);

  const storage = createMemoryStorage();
  const world = fixtureWorld();
  await storage.importWorld({
    ...world,
    channels: [...world.channels, { id: 'team-slack', kind: 'slack', name: 'Team Slack', shared: true, browsable: true, agents: ['claude'], defaults: null, linked_users: ['alice'], addresses: [] }],
  });
  const build = () => startSlackChannel(slackChannelPort({
    channelId: 'team-slack',
    settings: { app_token_env: 'SLACK_APP_TOKEN', bot_token_env: 'SLACK_BOT_TOKEN', api_url: slack.apiUrl },
    appToken: slack.appToken,
    botToken: slack.botToken,
    catalog: storage.catalog,
    log: silent,
    // The suite's conversation lives at the seed thread: the threads read again on reconnect.
    living: async () => [{ address: thread, title: 'Living here' }],
    backoff: { firstMs: 100, maxMs: 1_000 },
  }));
  const port = await online(build());
  /** Every message of the channel, threads included, as stored. */
  const all = (channel: string) => slack.history(channel).flatMap((m) => (m.reply_count ? slack.replies(channel, m.ts) : [m]));
  const person = (user: string) => ({
    address: user,
    say: async (at: string, text: string) => {
      const { channel, thread: threadTs } = where(at);
      await slack.post(user, channel, text, threadTs === undefined ? {} : { threadTs });
    },
  });
  return {
    port,
    channel: { id: 'team-slack', kind: 'slack' },
    open: { id: 'C0GENERAL', inside: 'C0GENERAL' },
    thread,
    barred: { id: 'C0OLD', reason: /archived/ },
    seen: async (id) => all('C0GENERAL')
      .filter((m) => m.metadata?.event_type === DELIVERY_EVENT && m.metadata.event_payload?.['delivery_id'] === id)
      .map((m) => ({ address: slackThreadAddress('C0GENERAL', m.thread_ts ?? m.ts), body: shownText(m) })),
    read: async (at) => {
      const { channel, thread: threadTs } = where(at);
      const posted = threadTs === undefined ? slack.history(channel) : slack.replies(channel, threadTs);
      const messages = posted.map((m) => ({ ts: m.ts, body: shownText(m), originId: (m.metadata?.event_payload?.['delivery_id'] as string | undefined) ?? null }));
      // What alice sees there includes what was shown to her alone.
      const ephemeral = slack.ephemerals.filter((e) => e.channel === channel && e.thread_ts === threadTs && e.user === 'U0ALICE')
        .map((e, i) => ({ ts: `${e.message_ts ?? '9'}${i}`, body: shownText(e), originId: null }));
      return [...messages, ...ephemeral].sort((a, b) => Number(a.ts) - Number(b.ts)).map(({ body, originId }) => ({ body, originId }));
    },
    addressBot: (text) => `<@${slack.botUserId}> ${text}`,
    people: { alice: person('U0ALICE'), robot: person('U0ROBOT') },
    another: async () => online(build()),
    server: { stop: () => slack.stop(), start: () => slack.start() },
    close: async () => {
      await port.close();
      await storage.close();
      await slack.close();
    },
  };
});
