// A thread's Changes in Chromium (contract section 8, issue 27), through the page only: on a repository
// project made by the test, a person opens Changes of a thread whose worktree has a change, sees the files
// with their status and counts, opens a file's diff (its text drawn as text, never as HTML), comments on a
// line, sends the review and sees it run as the thread's next turn, then merges (squash, with a message) and
// the base has the change; a second thread changing the same line then shows the conflict with its file and
// the base stays as it was. Set CONSOLE_SCREENSHOTS to a directory to save the view there (docs/screenshots).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { findChromium, launchChromium, NO_CHROMIUM } from '../support/chromium.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { startService, type TestService } from '../support/service.ts';

const WAIT = 20_000;
const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';

describe("a thread's Changes in the console UI", { skip: findChromium() === null ? NO_CHROMIUM : false }, () => {
  let service: TestService;
  let browser: Browser;
  let repo: string;
  let page: Page;
  const errors: Error[] = [];

  before(async () => {
    repo = gitRepository();
    const storage = createMemoryStorage();
    const fixture = fixtureWorld();
    await storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo, base: 'main' }] });
    service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage });
    browser = (await launchChromium())!;
    const context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
    await context.addCookies([{ name: 'console_session', value: 'token-alice', domain: 'localhost', path: '/' }]);
    page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error));
  });
  after(async () => {
    await browser?.close();
    await service?.close();
    rmSync(repo, { recursive: true, force: true });
  });

  const get = (path: string) => service.ask({ path: `${P}/${path}`, headers: ALICE });
  const idle = async (threadId: string) => {
    for (let i = 0; i < 600; i += 1) {
      const conversations = (await get(`${threadId}/conversations`)).json() as { turn_running: boolean }[];
      if (!conversations.some((c) => c.turn_running)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail('the turn did not end');
  };
  /** A thread of alice's on the repository project, its first turn over: its id and worktree path. */
  const thread = async (text: string) => {
    const res = await service.ask({ method: 'POST', path: `${P}/${randomUUID()}/directives`, headers: ALICE, body: JSON.stringify({ text, project: 'repo-web', model: 'claude:opus' }) });
    assert.equal(res.status, 202, res.text);
    const { thread_id: id } = res.json() as { thread_id: string };
    await idle(id);
    const row = (await get(id)).json() as { worktree: { path: string } | null };
    assert.ok(row.worktree !== null, 'the first turn made the worktree');
    return { id, path: row.worktree.path };
  };
  const shot = async (name: string) => {
    if (!process.env.CONSOLE_SCREENSHOTS) return;
    mkdirSync(process.env.CONSOLE_SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(process.env.CONSOLE_SCREENSHOTS, `console-${name}.png`), fullPage: true });
  };
  /** Writes `text` as the third line of src/app.js in `checkout`. */
  const changeLine3 = (checkout: string, text: string) => {
    const lines = readFileSync(join(checkout, 'src/app.js'), 'utf8').split('\n');
    lines[2] = text;
    write(checkout, 'src/app.js', lines.join('\n'));
  };
  const openChanges = async (id: string, title: string) => {
    await page.goto(`${service.consoleOrigin}/#/threads/${id}`);
    // A hash change alone keeps the page: wait until it shows this thread before opening its Changes.
    await page.waitForFunction((t) => document.getElementById('thread-title')?.textContent === t, title, { timeout: WAIT });
    await page.getByRole('button', { name: 'Changes' }).click();
    await page.locator('.changes .files li').first().waitFor({ timeout: WAIT });
  };

  it('shows the files and a diff, sends line comments as a review that runs, and merges into the base', { timeout: 120_000 }, async () => {
    const t = await thread('Tidy the app');
    // What the agent might write: markup in a file stays text on the page.
    changeLine3(t.path, '<img src=x onerror="document.title=\'owned\'"> line three');
    write(t.path, 'notes.md', 'one\ntwo\n');
    // A long line with no space to break at: the diff wraps it rather than scroll sideways.
    write(t.path, 'long.txt', `${'x'.repeat(600)}\n`);
    await openChanges(t.id, 'Tidy the app');
    const files = await page.locator('.changes .files li button').evaluateAll((buttons) => buttons.map((b) =>
      [b.querySelector('.status')?.textContent, b.querySelector('.path')?.textContent, b.querySelector('.counts')?.textContent]));
    assert.deepEqual(files, [['added', 'long.txt', '+1 -0'], ['added', 'notes.md', '+2 -0'], ['modified', 'src/app.js', '+1 -1']]);
    // The agent committed nothing: the header says what waits uncommitted, not just "0 ahead".
    assert.match((await page.locator('.changes > header .meta').textContent()) ?? '', new RegExp(`console/${t.id} · \\d+ commits? ahead, 0 behind main · 3 files changed, not committed`));
    assert.equal(await page.getByRole('button', { name: 'Merge', exact: true }).isDisabled(), false);

    await page.locator('.changes .files button', { hasText: 'long.txt' }).click();
    const long = page.getByRole('table', { name: 'Diff of long.txt' });
    await long.waitFor({ timeout: WAIT });
    const widths = await page.locator('figure.file-diff').evaluate((figure) => ({ scroll: figure.scrollWidth, client: figure.clientWidth, row: figure.querySelector('tr.added')!.getBoundingClientRect().height, line: parseFloat(getComputedStyle(figure.querySelector('td.code')!).lineHeight) }));
    assert.ok(widths.scroll <= widths.client, `the diff does not overflow sideways (${widths.scroll} > ${widths.client})`);
    assert.ok(widths.row > 2 * widths.line, 'the long line wraps onto several');

    await page.locator('.changes .files button', { hasText: 'src/app.js' }).click();
    const diff = page.getByRole('table', { name: 'Diff of src/app.js' });
    await diff.waitFor({ timeout: WAIT });
    const added = diff.locator('tr.added td.code');
    assert.equal(await added.textContent(), '+<img src=x onerror="document.title=\'owned\'"> line three');
    assert.equal(await diff.locator('tr.deleted td.code').textContent(), '-line 3');
    assert.equal(await diff.locator('img').count(), 0, 'the diff is text, never markup');
    assert.notEqual(await page.title(), 'owned');

    await page.getByRole('button', { name: 'Comment on src/app.js line 3' }).click();
    await page.getByLabel('Comment on line 3').fill('Plain text here, please');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.getByRole('button', { name: 'Comment on src/app.js line 5' }).click();
    await page.getByLabel('Comment on line 5').fill('And keep this one');
    await page.getByRole('button', { name: 'Add comment' }).click();
    assert.deepEqual(await diff.locator('.comment').allTextContents(), ['Your comment on line 3Plain text here, please', 'Your comment on line 5And keep this one']);
    assert.deepEqual(await page.getByRole('list', { name: 'Review comments' }).locator('li .where').allTextContents(), ['src/app.js:3', 'src/app.js:5']);
    await page.getByLabel('Review note (optional)').fill('Two small things.');
    await shot('changes');
    await page.getByRole('button', { name: 'Send review' }).click();
    await page.getByRole('status').filter({ hasText: 'Review sent: 2 comments.' }).waitFor({ timeout: WAIT });
    assert.equal(await page.getByRole('list', { name: 'Review comments' }).count(), 0, 'the review is emptied once sent');

    // The review is the thread's next directive: its prompt quotes each comment, and the agent runs it.
    await page.waitForFunction(() => [...document.querySelectorAll('.ledger li[data-role="user"]')].some((li) => li.textContent?.includes('> Plain text here, please')), undefined, { timeout: WAIT });
    const review = (await page.locator('.ledger li[data-role="user"] p').allTextContents()).at(-1) ?? '';
    assert.match(review, /^Two small things\./);
    assert.match(review, /src\/app\.js, line 3:/);
    assert.match(review, /> And keep this one/);
    await page.waitForFunction(() => document.querySelectorAll('article.run[data-status="succeeded"]').length === 2, undefined, { timeout: WAIT });
    await idle(t.id);

    const before = git(repo, 'rev-parse', 'main');
    await page.getByLabel('Strategy').selectOption('squash');
    await page.getByLabel('Commit message (optional)').fill('Tidy the app (from the console)');
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    const merged = page.getByRole('status').filter({ hasText: 'Merged into main at' });
    await merged.waitFor({ timeout: WAIT });
    const main = git(repo, 'rev-parse', 'main');
    assert.notEqual(main, before);
    assert.match((await merged.textContent()) ?? '', new RegExp(`at ${main.slice(0, 12)}\\.`));
    assert.equal(git(repo, 'log', '-1', '--format=%s', 'main'), 'Tidy the app (from the console)');
    assert.equal(git(repo, 'log', '-1', '--format=%P', 'main').split(' ').length, 1, 'squashed: one parent');
    assert.match(git(repo, 'show', 'main:src/app.js'), /^<img src=x onerror="document.title='owned'"> line three$/m);
    assert.equal(git(repo, 'show', 'main:notes.md'), 'one\ntwo');
    // Merged, the worktree holds what main has: nothing to merge, so Merge is off.
    await page.locator('.changes .hint', { hasText: 'No changes against main.' }).waitFor({ timeout: WAIT });
    assert.equal(await page.getByRole('button', { name: 'Merge', exact: true }).isDisabled(), true);
    assert.match((await page.locator('form.merge').textContent()) ?? '', /Nothing to merge\./);
    assert.deepEqual(errors.map(String), []);
  });

  it('shows a conflicting merge with its files and leaves the base as it was', { timeout: 90_000 }, async () => {
    const t = await thread('Another take');
    changeLine3(t.path, 'line three, another way');
    // Meanwhile main changes the same line.
    changeLine3(repo, 'line 3, as main has it');
    git(repo, 'commit', '--quiet', '-am', 'main edits line 3');
    const before = git(repo, 'rev-parse', 'main');
    await openChanges(t.id, 'Another take');
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    const conflicts = page.getByRole('list', { name: 'Conflicting files' });
    await conflicts.waitFor({ timeout: WAIT });
    assert.deepEqual(await conflicts.locator('li').allTextContents(), ['src/app.js']);
    assert.match((await page.locator('.conflicts').textContent()) ?? '', /conflict with main; nothing was merged/);
    assert.equal(git(repo, 'rev-parse', 'main'), before);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    await shot('changes-conflict');

    // Another refusal is said beside the Merge button, not in a banner: a turn running refuses the merge.
    const held = await service.ask({ method: 'POST', path: `${P}/${t.id}/directives`, headers: ALICE, body: JSON.stringify({ text: 'hold [wait]' }) });
    assert.equal(held.status, 202, held.text);
    await page.waitForSelector('article.run[data-status="running"]', { timeout: WAIT });
    await page.getByRole('button', { name: 'Merge', exact: true }).click();
    const alert = page.locator('form.merge .actions [role="alert"]');
    await alert.waitFor({ timeout: WAIT });
    assert.match((await alert.textContent()) ?? '', /turn/i);
    assert.equal(await page.locator('section.thread > p[role="alert"]').count(), 0);
    await page.getByRole('button', { name: 'Cancel run' }).click();
    await idle(t.id);
    assert.equal(git(repo, 'rev-parse', 'main'), before);
    assert.deepEqual(errors.map(String), []);
  });
});
