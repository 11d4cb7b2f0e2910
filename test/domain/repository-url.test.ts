// Which project repositories are git URLs, and which URLs the world file refuses (domain/worktree.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isRepositoryUrl, repositoryUrlRefusal } from '../../domain/worktree.ts';

describe('repository URLs', () => {
  it('takes file:///, ssh://, https:// and scp-like URLs; paths are not URLs', () => {
    for (const url of ['file:///srv/git/app.git', 'ssh://git@example.com/team/app.git', 'https://example.com/team/app.git', 'git@example.com:team/app.git']) {
      assert.ok(isRepositoryUrl(url), url);
      assert.equal(repositoryUrlRefusal(url), null, url);
    }
    for (const path of ['/srv/git/app', '/home/a@b:c', 'C:\\\\repo']) assert.equal(isRepositoryUrl(path), false, path);
  });

  it('refuses a password in the URL, options, whitespace, other transports and a file:// URL that names no absolute path', () => {
    const refused = [
      'https://user:secret@example.com/app.git', 'ssh://git:hunter2@example.com/app.git', '-uhttps://x', 'https://example.com/a b.git',
      'ext::sh -c touch% /tmp/pwned', 'fd::17', 'file://relative/path', 'https://', 'file:///x\u0000y',
    ];
    for (const url of refused) assert.notEqual(repositoryUrlRefusal(url), null, url);
    // A user name is no secret: it stays.
    assert.equal(repositoryUrlRefusal('https://deploy@example.com/app.git'), null);
  });

  it('never takes a URL that holds a password, whatever else it holds', () => {
    fc.assert(fc.property(fc.webUrl(), fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[A-Za-z0-9]{1,12}$/), (url, user, password) => {
      const withPassword = url.replace('://', `://${user}:${password}@`);
      assert.notEqual(repositoryUrlRefusal(withPassword), null, withPassword);
    }));
  });
});
