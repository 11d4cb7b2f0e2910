import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import type { Page, PageRequest } from '../../domain/model.ts';
import type { LedgerEntry } from '../../ports/ledger-store.ts';
import type { World, WorldThread } from '../../domain/world.ts';
import type { Storage } from '../../ports/storage.ts';
import { UNARCHIVED, type ThreadListFilter } from '../../ports/thread-store.ts';
import { matchesEveryWord, searchWords } from '../../domain/thread-search.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { sha256, testId } from '../support/ids.ts';

/** Builds an empty storage backend; the suite imports the worlds it needs. */
export type StorageFactory = () => Promise<Storage>;

const ids = (page: Page<{ id: string }>) => page.items.map((item) => item.id);
const desc = (list: readonly string[]) => [...list].sort().reverse();

/** Reads every page of a paged read, checking that cursors chain. */
async function walk<T extends { id: string }>(read: (page: PageRequest) => Promise<Page<T> | null>, limit: number): Promise<string[]> {
  const seen: string[] = [];
  let before: string | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await read({ limit, before });
    assert.ok(page !== null);
    assert.ok(page.items.length <= limit);
    seen.push(...ids(page));
    if (page.next === null) return seen;
    assert.equal(page.next, page.items.at(-1)!.id, 'the cursor is the last item id');
    before = page.next;
  }
  throw new Error('paging did not end');
}

/**
 * The storage contract: every adapter (memory, embedded PGlite, PostgreSQL) must pass it as is.
 * It describes the reads the console answers, the fork-visibility rule, idempotent import, and managing
 * threads (archive, rename, the thread list's search).
 */
export function storageContract(name: string, factory: StorageFactory): void {
  describe(`storage contract: ${name}`, () => {
    let storage: Storage;
    let emptyAtFirst = false;
    before(async () => {
      storage = await factory();
      emptyAtFirst = await storage.isEmpty();
      await storage.importWorld(fixtureWorld());
    });
    after(() => storage.close());

    it('is ready', async () => {
      assert.equal(await storage.ready(), true);
    });

    it('is empty until a world is imported', async () => {
      assert.equal(emptyAtFirst, true);
      assert.equal(await storage.isEmpty(), false);
    });

    it('finds a user by token hash only', async () => {
      const now = new Date().toISOString();
      assert.deepEqual(await storage.accounts.userByCredential(sha256('token-alice'), now), { id: 'alice', name: 'Alice', via: 'world', expires_at: null });
      assert.equal(await storage.accounts.userByCredential(sha256('token-nobody'), now), null);
      assert.equal(await storage.accounts.userByCredential('token-alice', now), null);
    });

    it('answers the thread row, exactly as stored, to its owner and members only', async () => {
      const found = await storage.threads.findAccessible('alice', F.root);
      assert.deepEqual(found?.row, {
        id: F.root, key: null, channel: 'console', owner: 'alice', project: 'acme-web', title: 'Fix the build',
        fork_of: null, fork_cutoff: null, created_at: '2026-01-01T00:00:01.000Z', worktree: null, archived: false,
      });
      assert.equal(await storage.threads.findAccessible('bob', F.root), null);
      assert.equal((await storage.threads.findAccessible('alice', F.shared))?.row.owner, 'bob', 'a member reads it');
      assert.equal(await storage.threads.findAccessible('alice', F.bobThread), null);
      assert.equal(await storage.threads.findAccessible('alice', testId(99_999)), null, 'unknown');
      assert.equal(await storage.threads.findAccessible('nobody', F.root), null);
    });

    it('answers the row alone by findRow, as findAccessible answers it, to the same callers', async () => {
      for (const [user, thread] of [['alice', F.root], ['alice', F.forkOfFork], ['alice', F.shared], ['bob', F.shared], ['bob', F.bobThread]] as const) {
        assert.deepEqual(await storage.threads.findRow(user, thread), (await storage.threads.findAccessible(user, thread))?.row, `${user} ${thread}`);
      }
      for (const [user, thread] of [['bob', F.root], ['alice', F.bobThread], ['alice', testId(99_999)], ['nobody', F.root], ['alice', 'not-a-uuid']] as const) {
        assert.equal(await storage.threads.findRow(user, thread), null, `${user} ${thread}`);
      }
    });

    it('answers the row with its latest conversation by findRowWithLatest, as findRow and latestByThread answer them, to the same callers', async () => {
      for (const [user, thread] of [['alice', F.root], ['alice', F.fork], ['alice', F.shared], ['bob', F.shared], ['bob', F.bobThread]] as const) {
        const row = await storage.threads.findRow(user, thread);
        const both = await storage.threads.findRowWithLatest(user, thread);
        assert.deepEqual(both, { row, latest: await storage.conversations.latestByThread(thread) }, `${user} ${thread}`);
        // The same bytes too: a conversation's fields in the order latestByThread answers them.
        assert.equal(JSON.stringify(both?.latest ?? null), JSON.stringify(await storage.conversations.latestByThread(thread)), `${user} ${thread}`);
      }
      assert.equal((await storage.threads.findRowWithLatest('alice', F.fork))?.latest, null, 'a thread without a conversation');
      for (const [user, thread] of [['bob', F.root], ['alice', F.bobThread], ['alice', testId(99_999)], ['nobody', F.root], ['alice', 'not-a-uuid']] as const) {
        assert.equal(await storage.threads.findRowWithLatest(user, thread), null, `${user} ${thread}`);
      }
    });

    it("answers a thread's latest conversation, the list's last, or null", async () => {
      const all = await storage.conversations.listByThread(F.root);
      assert.ok(all.length >= 2);
      assert.deepEqual(await storage.conversations.latestByThread(F.root), all.at(-1));
      assert.equal(await storage.conversations.latestByThread(F.fork), null);
      assert.equal(await storage.conversations.latestByThread(testId(99_999)), null);
      assert.equal(await storage.conversations.latestByThread('not-a-uuid'), null);
    });

    it('tells whether a thread row exists, whoever may read it', async () => {
      assert.equal(await storage.threads.exists(F.bobThread), true);
      assert.equal(await storage.threads.exists(F.root), true);
      assert.equal(await storage.threads.exists(testId(99_999)), false);
    });

    it('finds a conversation for a user who can access its thread only', async () => {
      assert.equal((await storage.conversations.findForUser('alice', F.conv))?.thread_id, F.root);
      assert.equal(await storage.conversations.findForUser('bob', F.conv), null);
      assert.equal(await storage.conversations.findForUser('alice', F.bobConv), null);
      assert.equal(await storage.conversations.findForUser('alice', testId(99_999)), null);
    });

    it('answers the fork chain with the thread, nearest first', async () => {
      const found = await storage.threads.findAccessible('alice', F.forkOfFork);
      assert.deepEqual(found?.chain, [
        { id: F.forkOfFork, fork_of: F.fork, fork_cutoff: F.forkMsgs[0] },
        { id: F.fork, fork_of: F.root, fork_cutoff: F.rootMsgs[2] },
        { id: F.root, fork_of: null, fork_cutoff: null },
      ]);
    });

    it('lists the threads a user can access, newest first, in pages', async () => {
      assert.deepEqual(await walk((page) => storage.threads.listAccessible('alice', page), 2), desc([F.root, F.fork, F.forkOfFork, F.shared]));
      assert.deepEqual(await walk((page) => storage.threads.listAccessible('bob', page), 50), desc([F.bobThread, F.shared]));
      assert.deepEqual(await storage.threads.listAccessible('nobody', { limit: 50, before: null }), { items: [], next: null });
    });

    it("answers each listed thread's activity: a turn running, approvals and questions pending, directives queued", async () => {
      const { items } = (await storage.threads.listAccessible('alice', { limit: 50, before: null }))!;
      const activityOf = (id: string) => items.find((item) => item.id === id)?.activity;
      assert.deepEqual(activityOf(F.root), { turn_running: true, approvals: 1, questions: 1, queued: 0 });
      assert.deepEqual(activityOf(F.fork), { turn_running: false, approvals: 0, questions: 0, queued: 0 });
      const { activity, ...row } = items.find((item) => item.id === F.root)!;
      assert.deepEqual(row, (await storage.threads.findRow('alice', F.root))!, 'the row is the thread row');
      assert.ok(activity);
    });

    it('pages the ledger newest first, with rows exactly as stored', async () => {
      const thread = await storage.threads.findAccessible('alice', F.root);
      const page = await storage.ledger.page(ledgerSegments(thread!.chain), { limit: 2, before: null });
      assert.deepEqual(page.items, [
        { id: F.rootMsgs[4], role: 'user', text: 'root 4', artifact_id: F.artifact, created_at: '2026-01-01T00:00:01.005Z', origin: null,
          app: { title: 'Forecast', provider_name: 'Weather' } },
        { id: F.rootMsgs[3], role: 'assistant', text: 'root 3', artifact_id: null, created_at: '2026-01-01T00:00:01.004Z', origin: null },
      ] satisfies LedgerEntry[]);
      assert.equal(page.next, F.rootMsgs[3]);
      const rest = await storage.ledger.page(ledgerSegments(thread!.chain), { limit: 10, before: page.next });
      assert.deepEqual(ids(rest), [F.rootMsgs[2], F.rootMsgs[1], F.rootMsgs[0]]);
      assert.equal(rest.items[1]!.artifact_id, F.artifact);
      assert.equal(rest.next, null);
    });

    it('shows a fork its parent up to the cutoff, and a fork of a fork both cutoffs', async () => {
      const fork = await storage.threads.findAccessible('alice', F.fork);
      assert.deepEqual(
        await walk((page) => storage.ledger.page(ledgerSegments(fork!.chain), page), 2),
        desc([...F.forkMsgs, F.rootMsgs[0], F.rootMsgs[1], F.rootMsgs[2]]),
      );
      const grand = await storage.threads.findAccessible('alice', F.forkOfFork);
      assert.deepEqual(
        await walk((page) => storage.ledger.page(ledgerSegments(grand!.chain), page), 3),
        desc([...F.forkOfForkMsgs, F.forkMsgs[0], F.rootMsgs[0], F.rootMsgs[1], F.rootMsgs[2]]),
      );
    });

    it('finds an owned artifact with its installation, credentials included, for the owner only', async () => {
      const world = fixtureWorld();
      const owned = await storage.artifacts.findOwned('alice', F.artifact);
      assert.deepEqual(owned, {
        artifact: { ...world.artifacts[0], created_at: '2026-01-01T00:00:10.001Z' },
        installation: world.installations[0],
      });
      assert.equal(await storage.artifacts.findOwned('bob', F.artifact), null);
      assert.equal(await storage.artifacts.findOwned('alice', F.artifactBob), null);
      assert.equal(await storage.artifacts.findOwned('alice', testId(99_999)), null);
      const foreign = await storage.artifacts.findOwned('alice', F.artifactForeignInstallation);
      assert.equal(foreign?.installation?.owner, 'bob', 'the installation is answered as stored; the read rules judge it');
    });

    it("answers an owned artifact's title and provider name, for the owner only", async () => {
      const world = fixtureWorld();
      const installation = world.installations.find((i) => i.id === world.artifacts[0]!.installation)!;
      assert.deepEqual(await storage.artifacts.findOverview('alice', F.artifact), {
        title: world.artifacts[0]!.title,
        provider_name: installation.provider_name,
      });
      assert.equal(await storage.artifacts.findOverview('bob', F.artifact), null);
      assert.equal(await storage.artifacts.findOverview('alice', F.artifactBob), null);
      assert.equal(await storage.artifacts.findOverview('alice', testId(99_999)), null);
      assert.equal(await storage.artifacts.findOverview('alice', 'not-a-uuid'), null);
      const foreign = await storage.artifacts.findOverview('alice', F.artifactForeignInstallation);
      assert.equal(foreign?.provider_name, world.installations.find((i) => i.owner === 'bob')?.provider_name);
    });

    it('finds a ledger reference only where the message is visible, cutoffs applied', async () => {
      const segmentsOf = async (id: string) => ledgerSegments((await storage.threads.findAccessible('alice', id))!.chain);
      const root = await segmentsOf(F.root);
      const fork = await segmentsOf(F.fork);
      assert.equal(await storage.artifacts.findReference(root, F.rootMsgs[1]), F.artifact);
      assert.equal(await storage.artifacts.findReference(root, F.rootMsgs[4]), F.artifact);
      assert.equal(await storage.artifacts.findReference(root, F.rootMsgs[0]), null, 'no reference on that message');
      assert.equal(await storage.artifacts.findReference(fork, F.rootMsgs[1]), F.artifact, 'inherited before the cutoff');
      assert.equal(await storage.artifacts.findReference(fork, F.rootMsgs[4]), null, 'after the cutoff');
      assert.equal(await storage.artifacts.findReference(root, F.bobMsg), null, "another thread's message");
      assert.equal(await storage.artifacts.findReference(root, testId(99_999)), null);
    });

    it('answers a thread conversations, exactly as stored', async () => {
      const list = await storage.conversations.listByThread(F.root);
      assert.deepEqual(list, [
        { id: F.conv, thread_id: F.root, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null,
          turn_running: false, created_at: '2026-01-01T00:00:06.000Z', moved_to: null },
        { id: F.conv2, thread_id: F.root, agent: 'codex', model: null, permission_mode: null, effort: null,
          address: { channel: 'console', id: F.root }, turn_running: true, created_at: '2026-01-01T00:00:06.001Z', moved_to: null },
      ]);
      assert.deepEqual(await storage.conversations.listByThread(F.fork), []);
    });

    it('pages runs under a conversation of the thread only', async () => {
      const page = await storage.conversations.runsPage(F.root, F.conv, { limit: 2, before: null });
      assert.deepEqual(page?.items[0], {
        id: F.runs[2], conversation_id: F.conv, directory: null, status: 'running', error: null,
        started_at: '2026-01-01T00:00:07.003Z', ended_at: null, rewound: false,
      });
      assert.deepEqual(ids(page!), [F.runs[2], F.runs[1]]);
      assert.deepEqual(await walk((p) => storage.conversations.runsPage(F.root, F.conv, p), 1), desc(F.runs));
      assert.deepEqual(await storage.conversations.runsPage(F.root, F.conv2, { limit: 5, before: null }), { items: [], next: null });
      assert.equal(await storage.conversations.runsPage(F.root, F.bobConv, { limit: 5, before: null }), null);
      assert.equal(await storage.conversations.runsPage(F.root, testId(99_999), { limit: 5, before: null }), null);
    });

    it('pages a run model messages under the thread only', async () => {
      const page = await storage.conversations.modelMessagesPage(F.root, F.runs[0], { limit: 3, before: null });
      assert.deepEqual(page?.items[0], {
        id: F.modelMsgs[3], run_id: F.runs[0], role: 'assistant', content: 'step 3', created_at: '2026-01-01T00:00:08.004Z',
      });
      assert.deepEqual(await walk((p) => storage.conversations.modelMessagesPage(F.root, F.runs[0], p), 3), desc(F.modelMsgs));
      assert.deepEqual(await storage.conversations.modelMessagesPage(F.root, F.runs[1], { limit: 3, before: null }), { items: [], next: null });
      assert.equal(await storage.conversations.modelMessagesPage(F.root, F.bobRun, { limit: 3, before: null }), null);
      assert.equal(await storage.conversations.modelMessagesPage(F.fork, F.runs[0], { limit: 3, before: null }), null);
    });

    it('answers pending approvals and questions of the thread', async () => {
      assert.deepEqual(await storage.conversations.pendingByThread(F.root), [
        { id: F.pending, kind: 'approval', conversation_id: F.conv, run_id: F.runs[2], title: 'Run tests?',
          options: [{ id: 'allow', name: 'Allow', kind: 'allow_once' }, { id: 'deny', name: 'Deny', kind: 'reject_once' }],
          tool_call: { id: 'call-1', title: 'Run tests?', kind: 'execute', rawInput: { command: 'npm test' } } },
        { id: F.question, kind: 'question', conversation_id: F.conv, run_id: null, title: 'Which branch?', options: [], tool_call: null },
      ]);
      assert.deepEqual(await storage.conversations.pendingByThread(F.bobThread), []);
    });

    it('answers the catalog', async () => {
      const world = fixtureWorld();
      const withEnv = (agents: World['agents']) => agents.map((a) => ({ ...a, env: a.env ?? {}, env_pass: a.env_pass ?? [], network: a.network ?? 'host' }));
      assert.deepEqual(await storage.catalog.agents(), withEnv(world.agents));
      assert.deepEqual(await storage.catalog.channels(), world.channels);
      assert.deepEqual(await storage.catalog.projects(), world.projects.map((project) => project.name));
      assert.deepEqual(await storage.catalog.project('acme-web'), { name: 'acme-web', directory: null, repo: null, base: null });
      assert.equal(await storage.catalog.project('nope'), null);
    });

    it("keeps a project's directory on disk, and a re-import replaces it", async () => {
      const world = fixtureWorld();
      await storage.importWorld({ ...world, projects: [{ name: 'acme-web', directory: '/srv/acme web', repo: null, base: null }, { name: 'infra', directory: null, repo: '/srv/infra', base: 'main' }] });
      assert.deepEqual(await storage.catalog.project('acme-web'), { name: 'acme-web', directory: '/srv/acme web', repo: null, base: null });
      assert.deepEqual(await storage.catalog.project('infra'), { name: 'infra', directory: null, repo: '/srv/infra', base: 'main' });
      assert.deepEqual(await storage.catalog.projects(), ['acme-web', 'infra']);
      await storage.importWorld(world);
      assert.deepEqual(await storage.catalog.project('acme-web'), { name: 'acme-web', directory: null, repo: null, base: null });
      assert.deepEqual(await storage.catalog.project('infra'), { name: 'infra', directory: null, repo: null, base: null });
    });

    it("keeps an agent's env literals and env_pass names (names only), and a re-import replaces them", async () => {
      const world = fixtureWorld();
      const agents = world.agents.map((a) => (a.id === 'codex' ? { ...a, env: { BASE_URL: 'http://127.0.0.1:1', EMPTY: '' }, env_pass: ['CODEX_API_KEY'] } : a));
      await storage.importWorld({ ...world, agents });
      const codex = (await storage.catalog.agents()).find((a) => a.id === 'codex');
      assert.deepEqual(codex?.env, { BASE_URL: 'http://127.0.0.1:1', EMPTY: '' });
      assert.deepEqual(codex?.env_pass, ['CODEX_API_KEY']);
      await storage.importWorld(world);
      const again = (await storage.catalog.agents()).find((a) => a.id === 'codex');
      assert.deepEqual([again?.env, again?.env_pass], [{ DEMO_AGENT_PROFILE: 'codex' }, []]);
    });

    it("keeps an agent's absent lists and default mode as null (no narrowing of what it advertises), and a re-import gives them back", async () => {
      const world = fixtureWorld();
      const open = { models: null, efforts: null, permission_modes: null, default_permission_mode: null };
      await storage.importWorld({ ...world, agents: world.agents.map((a) => (a.id === 'codex' ? { ...a, ...open } : a)) });
      const codex = (await storage.catalog.agents()).find((a) => a.id === 'codex')!;
      assert.deepEqual([codex.models, codex.efforts, codex.permission_modes, codex.default_permission_mode], [null, null, null, null]);
      await storage.importWorld(world);
      const again = (await storage.catalog.agents()).find((a) => a.id === 'codex')!;
      assert.deepEqual([again.models, again.permission_modes, again.default_permission_mode], [[], ['auto', 'read-only'], 'auto']);
    });

    it('imports idempotently: the same world again changes nothing and doubles nothing', async () => {
      await storage.importWorld(fixtureWorld());
      assert.deepEqual(await walk((page) => storage.threads.listAccessible('alice', page), 50), desc([F.root, F.fork, F.forkOfFork, F.shared]));
      const thread = await storage.threads.findAccessible('alice', F.root);
      assert.equal((await storage.ledger.page(ledgerSegments(thread!.chain), { limit: 50, before: null })).items.length, 5);
      assert.equal((await storage.conversations.pendingByThread(F.root)).length, 2);
      assert.equal((await storage.catalog.agents()).length, 2);
    });

    describe('thread management (contract section 4): archive, rename, search', () => {
      const T = { deploy: testId(20_000), flaky: testId(20_100), idle: testId(20_200), shared: testId(20_300), daveOnly: testId(20_400), fork: testId(20_500) };
      const msg = (n: number, text: string) => ({ id: testId(n), role: 'user', text, artifact_id: null });
      const search = (q: string, archived = false) => ({ archived, words: searchWords(q) });
      const list = async (user: string, filter: ThreadListFilter, limit = 50) => walk((page) => storage.threads.listAccessible(user, page, filter), limit);
      before(async () => {
        const base = fixtureWorld();
        const thread = (t: Pick<WorldThread, 'id' | 'owner' | 'title'> & Partial<WorldThread>): WorldThread =>
          ({ key: null, channel: 'console', members: [], project: null, fork_of: null, fork_cutoff: null, messages: [], conversations: [], ...t });
        await storage.importWorld({
          ...base,
          users: [...base.users, { id: 'carol', name: 'Carol', token_hash: sha256('token-carol'), role: 'member' }, { id: 'dave', name: 'Dave', token_hash: sha256('token-dave'), role: 'member' }],
          threads: [
            thread({ id: T.deploy, owner: 'carol', title: 'Deploy the staging cluster', messages: [msg(20_001, 'Check the Kubernetes manifests'), msg(20_002, 'rollback plan ready')] }),
            thread({ id: T.flaky, owner: 'carol', title: 'Fix flaky tests', messages: [msg(20_101, 'the deploy job timed out')] }),
            thread({ id: T.idle, owner: 'carol', title: 'Nothing much' }),
            thread({ id: T.shared, owner: 'dave', members: ['carol'], title: 'Shared notes', messages: [msg(20_301, 'staging credentials rotated')] }),
            thread({ id: T.daveOnly, owner: 'dave', title: 'Deploy staging secretly', messages: [msg(20_401, 'kubernetes quokka')] }),
            thread({ id: T.fork, owner: 'carol', title: 'A fork', fork_of: T.deploy, fork_cutoff: testId(20_001), messages: [msg(20_501, 'something else')] }),
          ],
        });
      });

      it('lists a thread not archived by default, and archived ones only when asked', async () => {
        assert.deepEqual(await list('carol', UNARCHIVED), desc([T.deploy, T.flaky, T.idle, T.shared, T.fork]));
        assert.deepEqual(await walk((page) => storage.threads.listAccessible('carol', page), 2), desc([T.deploy, T.flaky, T.idle, T.shared, T.fork]), 'no filter: the threads not archived');
        assert.deepEqual(await list('carol', { archived: true, words: [] }), []);
      });

      it("edits a thread by its owner only, answering the row as it is after; a member's or a stranger's edit finds nothing", async () => {
        const before = (await storage.threads.findRow('carol', T.idle))!;
        const renamed = await storage.writer.editThread('carol', T.idle, { title: 'Quiet for now' });
        assert.deepEqual(renamed, { ...before, title: 'Quiet for now' });
        assert.deepEqual(await storage.threads.findRow('carol', T.idle), renamed);
        const archived = await storage.writer.editThread('carol', T.idle, { archived: true });
        assert.deepEqual(archived, { ...before, title: 'Quiet for now', archived: true });
        assert.deepEqual(await storage.writer.editThread('carol', T.idle, {}), archived, 'no change: the row');
        assert.equal(await storage.writer.editThread('carol', T.shared, { title: 'Mine now' }), null, 'a member is no owner');
        assert.equal(await storage.writer.editThread('dave', T.idle, { archived: false }), null, 'a stranger');
        assert.equal(await storage.writer.editThread('carol', testId(99_999), { archived: true }), null, 'unknown');
        assert.equal(await storage.writer.editThread('carol', 'not-a-uuid', { archived: true }), null, 'not a UUID');
        assert.equal((await storage.threads.findRow('dave', T.shared))!.title, 'Shared notes');
        assert.equal((await storage.threads.findRow('carol', T.idle))!.archived, true);
      });

      it('keeps an archived thread out of the list, in the archived list only, for its members too, until it is unarchived', async () => {
        assert.deepEqual(await list('carol', UNARCHIVED), desc([T.deploy, T.flaky, T.shared, T.fork]));
        assert.deepEqual(await list('carol', { archived: true, words: [] }), [T.idle]);
        await storage.writer.editThread('dave', T.shared, { archived: true });
        assert.deepEqual(await list('carol', { archived: true, words: [] }, 1), desc([T.idle, T.shared]), 'a member sees it archived');
        await storage.writer.editThread('dave', T.shared, { archived: false });
        assert.deepEqual(await list('carol', UNARCHIVED, 1), desc([T.deploy, T.flaky, T.shared, T.fork]));
      });

      it('finds the threads whose title or own ledger holds every word, each as the beginning of a word, in any case', async () => {
        assert.deepEqual(await list('carol', search('deploy')), desc([T.deploy, T.flaky]), 'a title, and a message');
        assert.deepEqual(await list('carol', search('DEPLOY Staging')), [T.deploy], 'every word');
        assert.deepEqual(await list('carol', search('depl stag')), [T.deploy], 'prefixes');
        assert.deepEqual(await list('carol', search('staging rollback')), [T.deploy], 'one word in the title, one in a message');
        assert.deepEqual(await list('carol', search('staging'), 1), desc([T.deploy, T.shared]), "a member's thread, page by page");
        assert.deepEqual(await list('carol', search('ploy')), [], 'not inside a word');
        assert.deepEqual(await list('carol', search('nowhere')), []);
        assert.deepEqual(await list('carol', search('"&|!:*()')), desc([T.deploy, T.flaky, T.shared, T.fork]), 'no word: no search');
      });

      it("never finds a thread the caller cannot read, nor matches on its text, nor on what a fork inherits", async () => {
        assert.deepEqual(await list('carol', search('kubernetes')), [T.deploy], "not dave's private thread, not the fork's inherited message");
        assert.deepEqual(await list('carol', search('quokka')), [], "a word only dave's private thread holds");
        assert.deepEqual(await list('carol', search('secretly')), []);
        assert.deepEqual(await list('dave', search('kubernetes')), [T.daveOnly]);
        assert.deepEqual(await list('dave', search('rollback')), [], "carol's own thread");
        assert.deepEqual(await list('nobody', search('deploy')), []);
      });

      it('searches archived threads when asked for them', async () => {
        assert.deepEqual(await list('carol', search('quiet', true)), [T.idle]);
        assert.deepEqual(await list('carol', search('quiet')), []);
        assert.deepEqual(await list('carol', search('deploy', true)), []);
      });

      it('model-based: a search finds what the domain rule finds (every word the beginning of a word of the title or an own message)', async () => {
        const vocabulary = ['alpha', 'Alps', 'beta', 'bet', 'gamma-ray', 'snake_case', 'Delta', '42', 'déjà', 'vu'];
        const text = fc.array(fc.constantFrom(...vocabulary), { maxLength: 4 }).map((words) => words.join(' '));
        const shape = fc.array(fc.record({ title: text, messages: fc.array(text, { maxLength: 3 }), archived: fc.boolean() }), { minLength: 1, maxLength: 6 });
        const query = fc.array(fc.constantFrom('al', 'alp', 'ALPHA', 'be', 'bet', 'ray', 'gam', 'snake', 'case', 'del', '4', 'dé', 'vu', 'zzz'), { maxLength: 3 });
        let run = 0;
        await fc.assert(
          fc.asyncProperty(shape, fc.array(query, { minLength: 1, maxLength: 4 }), async (threads, queries) => {
            run += 1;
            const owner = `searcher-${run}`;
            const base = fixtureWorld();
            const made = threads.map((t, i) => ({
              id: testId(30_000 + i * 10, run), owner, title: t.title === '' ? 'untitled' : t.title, archived: t.archived,
              messages: t.messages.map((m, j) => ({ id: testId(30_001 + i * 10 + j, run), role: 'user', text: m, artifact_id: null })),
            }));
            await storage.importWorld({
              ...base,
              users: [...base.users, { id: owner, name: owner, token_hash: sha256(owner), role: 'member' }],
              threads: made.map(({ archived: _, ...t }) => ({ key: null, channel: 'console', members: [], project: null, fork_of: null, fork_cutoff: null, conversations: [], ...t })),
            });
            for (const t of made) if (t.archived) await storage.writer.editThread(owner, t.id, { archived: true });
            for (const words of queries) {
              for (const archived of [false, true]) {
                const filter = search(words.join(' '), archived);
                const expected = made.filter((t) => t.archived === archived && matchesEveryWord(filter.words, [t.title, ...t.messages.map((m) => m.text)])).map((t) => t.id);
                assert.deepEqual(await list(owner, filter, 2), desc(expected), `${JSON.stringify(words)} archived=${archived}`);
              }
            }
          }),
          { numRuns: 12 },
        );
      });

      it('answers any words without failing: other scripts, digits, odd letters, long words', async () => {
        for (const q of ['日本語', 'Ärger ß', '½ ² ٣', '0', 'x'.repeat(200), "o'brien; drop table threads; --", 'a:* & b', '\\ %_ ?', 'e\u0301']) {
          const page = await storage.threads.listAccessible('carol', { limit: 5, before: null }, search(q));
          assert.ok(Array.isArray(page.items), q);
        }
      });
    });

    it('model-based: ledger pages of random fork trees match the model', async () => {
      let salt = 1;
      await fc.assert(
        fc.asyncProperty(forestArb, fc.integer({ min: 1, max: 7 }), async (shape, limit) => {
          const world = forestWorld(shape, salt++);
          await storage.importWorld(world);
          for (const thread of world.threads) {
            const found = await storage.threads.findAccessible('alice', thread.id);
            assert.ok(found);
            const got = await walk((page) => storage.ledger.page(ledgerSegments(found.chain), page), limit);
            assert.deepEqual(got, modelLedger(world, thread.id));
          }
        }),
        { numRuns: 15 },
      );
    });
  });
}

/** A forest shape: per thread, its message count and (for a fork) its parent index and cutoff position. */
const forestArb = fc.array(
  fc.record({ messages: fc.integer({ min: 0, max: 6 }), parent: fc.nat(), cutoff: fc.nat(), fork: fc.boolean() }),
  { minLength: 1, maxLength: 5 },
);

/** Threads in creation order; message ids interleave in time across threads, as real ledgers do. */
function forestWorld(shape: readonly { messages: number; parent: number; cutoff: number; fork: boolean }[], salt: number): World {
  const base = fixtureWorld();
  let clock = 100_000 + salt * 1_000;
  const threads: WorldThread[] = [];
  shape.forEach((spec, index) => {
    const id = testId(clock++, salt);
    const parent = index > 0 && spec.fork ? threads[spec.parent % index]! : null;
    const parentIds = parent === null ? [] : modelLedgerOf(threads, parent.id);
    const cutoff = parentIds.length === 0 ? null : [...parentIds].sort()[spec.cutoff % parentIds.length]!;
    threads.push({
      id, key: null, channel: 'console', owner: 'alice', members: [], project: null, title: `t${index}`,
      fork_of: parent?.id ?? null, fork_cutoff: parent === null ? null : cutoff, conversations: [],
      messages: Array.from({ length: spec.messages }, () => ({ id: testId(clock++, salt), role: 'user', text: 'm', artifact_id: null })),
    });
  });
  return { ...base, threads };
}

/** The model: a thread's own ids, plus its parent's visible ids up to its cutoff, newest first. */
function modelLedgerOf(threads: readonly WorldThread[], threadId: string): string[] {
  const thread = threads.find((t) => t.id === threadId)!;
  const own = thread.messages.map((m) => m.id);
  const inherited =
    thread.fork_of === null || thread.fork_cutoff === null
      ? []
      : modelLedgerOf(threads, thread.fork_of).filter((id) => id <= thread.fork_cutoff!);
  return desc([...own, ...inherited]);
}

const modelLedger = (world: World, threadId: string) => modelLedgerOf(world.threads, threadId);
