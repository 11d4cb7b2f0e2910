import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hashToken, loadWorldFile, parseWorld } from '../src/world/load.ts';

const demoPath = new URL('../src/world/demo-world.json', import.meta.url);
const demo = async () => JSON.parse(await (await import('node:fs/promises')).readFile(demoPath, 'utf8'));

describe('the world file', () => {
  it('the demo world is valid: two users, a fork, a browsable chat channel, an artifact', async () => {
    const loaded = await loadWorldFile(demoPath);
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.error));
    const world = loaded.value;
    assert.equal(world.users.length, 2);
    assert.ok(world.threads.some((t) => t.fork_of !== null));
    assert.ok(world.channels.some((c) => c.kind !== 'console' && c.browsable));
    assert.ok(world.artifacts.length >= 1);
    assert.equal(world.users[0]!.token_hash, hashToken('dev-alice'));
    assert.ok(!JSON.stringify(world).includes('"token"'), 'tokens are kept only as hashes');
  });

  it("an agent's lists and default mode may be left out (null: what the agent advertises); given ones still hold its conversations", async () => {
    const value = await demo();
    const codex = value.agents.find((a: { id: string }) => a.id === 'codex');
    assert.equal(codex.models, undefined, 'the demo world gives codex no lists: it offers what the demo agent advertises');
    value.agents[0] = { id: 'claude' };
    const parsed = parseWorld(value);
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.error));
    const claude = parsed.value.agents[0]!;
    assert.deepEqual([claude.models, claude.efforts, claude.permission_modes, claude.default_permission_mode], [null, null, null, null]);
    await refuses((w) => (w.agents[0].default_permission_mode = 'yolo'), 'agents.0.default_permission_mode', /one of the agent permission_modes/);
  });

  it("an agent's network is the host's unless the world says none", async () => {
    const value = await demo();
    value.agents[1] = { ...value.agents[1], network: 'none' };
    const parsed = parseWorld(value);
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.error));
    assert.deepEqual(parsed.value.agents.map((agent) => agent.network), ['host', 'none', ...parsed.value.agents.slice(2).map(() => 'host')]);
    await refuses((w) => (w.agents[0].network = 'lan'), 'agents.0.network', /must be host or none/);
  });

  const refuses = async (mutate: (w: any) => void, path: string, reason: RegExp) => {
    const value = await demo();
    mutate(value);
    const parsed = parseWorld(value);
    assert.equal(parsed.ok, false, `expected ${path} to be refused`);
    if (parsed.ok) return;
    const issue = parsed.error.find((i) => i.path === path);
    assert.ok(issue, `no issue at ${path}: ${JSON.stringify(parsed.error)}`);
    assert.match(issue.message, reason);
  };

  it('names the path and the reason of each refusal', async () => {
    await refuses((w) => (w.users = 'x'), 'users', /array/i);
    await refuses((w) => (w.threads[0].id = 'not-a-uuid'), 'threads.0.id', /UUIDv7/);
    await refuses((w) => (w.threads[0].id = w.threads[0].id.toUpperCase()), 'threads.0.id', /lower-case/);
    await refuses((w) => (w.threads[0].owner = 'carol'), 'threads.0.owner', /no user/);
    await refuses((w) => (w.threads[0].channel = 'nowhere'), 'threads.0.channel', /no channel/);
    await refuses((w) => (w.threads[0].project = 'nope'), 'threads.0.project', /no project/);
    await refuses((w) => (w.threads[0].conversations[0].agent = 'gpt'), 'threads.0.conversations.0.agent', /no agent/);
    await refuses((w) => (w.threads[0].conversations[0].model = 'haiku'), 'threads.0.conversations.0.model', /not a model/);
    await refuses((w) => (w.threads[0].conversations[0].permission_mode = 'yolo'), 'threads.0.conversations.0.permission_mode', /not a permission mode/);
    await refuses((w) => (w.threads[0].conversations[0].effort = 'max'), 'threads.0.conversations.0.effort', /not an effort/);
    await refuses((w) => (w.threads[0].conversations[0].runs[0].status = 'done'), 'threads.0.conversations.0.runs.0.status', /one of/);
    await refuses((w) => (w.threads[1].fork_of = w.threads[3].id), 'threads.1.fork_cutoff', /ledger/);
    await refuses((w) => (w.threads[1].fork_cutoff = null), 'threads.1.fork_cutoff', /must name a message/);
    await refuses((w) => (w.threads[1].messages[0].id = w.threads[0].messages[0].id), 'threads.1.messages.0.id', /repeats/);
    await refuses((w) => (w.threads[0].messages[3].artifact_id = w.threads[0].id), 'threads.0.messages.3.artifact_id', /no artifact/);
    await refuses((w) => (w.artifacts[0].resource_uri = 'https://x'), 'artifacts.0.resource_uri', /ui:\/\//);
    await refuses((w) => (w.agents[0].default_permission_mode = 'x'), 'agents.0.default_permission_mode', /permission_modes/);
    await refuses((w) => (w.users[1].id = 'alice'), 'users.1.id', /repeats/);
    await refuses((w) => (w.channels[1].agents = ['ghost']), 'channels.1.agents.0', /no agent/);
  });

  it("a user's role is admin or member (default member); no agent may be handed the service's own secrets", async () => {
    const value = await demo();
    value.users[0].role = 'admin';
    const parsed = parseWorld(value);
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.error));
    assert.deepEqual(parsed.value.users.map((u) => u.role), ['admin', 'member']);
    await refuses((w) => (w.users[0].role = 'owner'), 'users.0.role', /admin or member/);
    for (const secret of ['OIDC_CLIENT_SECRET', 'DATABASE_URL', 'METRICS_TOKEN']) {
      await refuses((w) => (w.agents[0].env_pass = [secret]), 'agents.0.env_pass.0', /a secret of the service itself/);
    }
  });

  it("no agent may be handed a chat channel's credentials: the Slack tokens' and the XMPP password's variables", async () => {
    const withChats = (w: any) => {
      w.channels.push(
        { id: 'team-slack', kind: 'slack', name: 'Team Slack', shared: true, browsable: true, agents: [w.agents[0].id],
          slack: { app_token_env: 'TEAM_SLACK_APP', bot_token_env: 'TEAM_SLACK_BOT', api_url: null }, links: {} },
        { id: 'team-xmpp', kind: 'xmpp', name: 'Team XMPP', shared: true, browsable: true, agents: [w.agents[0].id],
          xmpp: { service: 'xmpp://127.0.0.1:5222', domain: 'localhost', muc: 'conference.localhost', jid: 'console@localhost', password_env: 'TEAM_XMPP_PASSWORD', nick: 'console' },
          links: {} },
      );
    };
    const value = await demo();
    withChats(value);
    value.agents[0].env_pass = ['TEAM_SLACK_HOME'];
    const parsed = parseWorld(value);
    assert.ok(parsed.ok, `a variable no channel names passes: ${JSON.stringify(!parsed.ok && parsed.error)}`);
    for (const [secret, channel] of [['TEAM_SLACK_APP', 'team-slack'], ['TEAM_SLACK_BOT', 'team-slack'], ['TEAM_XMPP_PASSWORD', 'team-xmpp']]) {
      await refuses((w) => {
        withChats(w);
        w.agents[0].env_pass = [secret];
      }, 'agents.0.env_pass.0', new RegExp(`a secret of the channel ${channel}`));
    }
  });

  it("a channel's defaults for the threads chat messages start name what the world has, each refusal with its path", async () => {
    const value = await demo();
    value.channels[1].defaults = { project: 'infra', route: 'claude:sonnet', permission_mode: 'plan', effort: 'high' };
    const parsed = parseWorld(value);
    assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.error));
    assert.deepEqual(parsed.value.channels[1]!.defaults, { project: 'infra', route: 'claude:sonnet', permission_mode: 'plan', effort: 'high' });
    assert.equal(parsed.value.channels[0]!.defaults, null, 'absent: none');
    const partial = await demo();
    partial.channels[1].defaults = { permission_mode: 'plan' };
    const some = parseWorld(partial);
    assert.ok(some.ok, JSON.stringify(!some.ok && some.error));
    assert.deepEqual(some.value.channels[1]!.defaults, { project: null, route: null, permission_mode: 'plan', effort: null });
    const set = (defaults: unknown) => (w: any) => (w.channels[1].defaults = defaults);
    await refuses(set({ project: 'nowhere' }), 'channels.1.defaults.project', /names no project \(nowhere\)/);
    await refuses(set({ route: 'codex' }), 'channels.1.defaults.route', /names no agent of the channel \(claude\)/);
    await refuses(set({ route: 'claude:gpt-5' }), 'channels.1.defaults.route', /gpt-5, which is not a model of claude/);
    await refuses(set({ route: 'claude: opus' }), 'channels.1.defaults.route', /agent or agent:model/);
    await refuses(set({ permission_mode: 'yolo' }), 'channels.1.defaults.permission_mode', /not a permission mode of claude/);
    await refuses(set({ route: 'claude:opus', effort: 'max' }), 'channels.1.defaults.effort', /not an effort of claude/);
    await refuses(set({ projects: 'infra' }), 'channels.1.defaults.projects', /project, route, permission_mode and effort only/);
    await refuses(set('infra'), 'channels.1.defaults', /object/i);
  });

  it('takes a project as a name, a directory, or a git repository and its base branch, naming what is wrong with one', async () => {
    const world = await demo();
    const parsed = parseWorld({ ...world, projects: [...world.projects, 'plain', { name: 'disk', directory: '/srv/disk/' }, { name: 'repo', repo: '/srv/x/../repo', base: 'release/1.2' }] });
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(parsed.value.projects.slice(-3), [
      { name: 'plain', directory: null, repo: null, base: null },
      { name: 'disk', directory: '/srv/disk', repo: null, base: null },
      { name: 'repo', directory: null, repo: '/srv/repo', base: 'release/1.2' },
    ]);
    const project = (p: unknown) => (w: Record<string, unknown>) => (w.projects = [...(w.projects as unknown[]), p]);
    const at = (world.projects as unknown[]).length;
    await refuses(project({ name: 'r', repo: 'relative/repo', base: 'main' }), `projects.${at}.repo`, /absolute/);
    await refuses(project({ name: 'r', repo: 'https://deploy:s3cret@example.com/app.git', base: 'main' }), `projects.${at}.repo`, /password/);
    await refuses(project({ name: 'r', repo: 'ext::sh -c id', base: 'main' }), `projects.${at}.repo`, /git URL/);
    const url = parseWorld({ ...world, projects: [...world.projects, { name: 'remote', repo: 'file:///srv/git/app.git', base: 'main' }] });
    assert.ok(url.ok, JSON.stringify(url));
    assert.equal(url.value.projects.at(-1)?.repo, 'file:///srv/git/app.git', 'a URL is kept as written');
    await refuses(project({ name: 'r', repo: '/srv/repo' }), `projects.${at}.base`, /branch/);
    await refuses(project({ name: 'r', base: 'main' }), `projects.${at}.base`, /needs repo/);
    await refuses(project({ name: 'r', repo: '/srv/repo', base: 'main', directory: '/srv/d' }), `projects.${at}.directory`, /not be given with repo/);
    for (const base of ['--upload-pack=x', '-b', '.hidden', 'a..b', 'x.lock', 'a//b', 'a b', 'ma:in']) {
      await refuses(project({ name: 'r', repo: '/srv/repo', base }), `projects.${at}.base`, /branch name/);
    }
  });

  it('refuses a cycle of forks', async () => {
    await refuses((w) => {
      w.threads[0].fork_of = w.threads[1].id;
      w.threads[0].fork_cutoff = w.threads[1].messages[0].id;
    }, 'threads.0.fork_of', /cycle/);
  });

  it('says when the file cannot be read or is not JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'world-'));
    const missing = await loadWorldFile(join(dir, 'missing.json'));
    assert.ok(!missing.ok && /cannot be read \(ENOENT\)/.test(missing.error[0]!.message));
    writeFileSync(join(dir, 'broken.json'), '{"users": [');
    const broken = await loadWorldFile(join(dir, 'broken.json'));
    assert.ok(!broken.ok && /is not JSON/.test(broken.error[0]!.message));
  });
});
