import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { createLogger, REDACTED, redactUrls, safeError } from '../src/logging.ts';

describe('error logging', () => {
  it("keeps a database error's reason and drops its statement, where the driver inlined the values", () => {
    const error = Object.assign(
      new Error(`insert into "installations" ("headers") values ('{"Authorization":"Bearer provider-secret"}') - duplicate key value violates unique constraint`),
      { code: '23505' },
    );
    const logged = JSON.stringify(safeError(error));
    assert.ok(!logged.includes('provider-secret'));
    assert.match(logged, /duplicate key value/);
    assert.match(logged, /23505/);
  });

  it('logs other errors in full, with their stack', () => {
    const logged = safeError(new Error('a bug')) as { message: string; stack: string };
    assert.equal(logged.message, 'a bug');
    assert.match(logged.stack, /logging.test/);
  });
});

describe('credentials in URLs are redacted from every log line', () => {
  it('redacts the password of user:password@ and the values of credential query parameters', () => {
    assert.equal(redactUrls('postgres://console:s3cret@db.internal:5432/console'), `postgres://console:${REDACTED}@db.internal:5432/console`);
    assert.equal(redactUrls('postgresql://u:p%40ss@h/db?sslmode=require&password=x'), `postgresql://u:${REDACTED}@h/db?sslmode=require&password=${REDACTED}`);
    assert.equal(redactUrls('a raw @ in it: postgres://u:p@ss@h/db'), `a raw @ in it: postgres://u:${REDACTED}@h/db`);
    for (const name of ['token', 'access_token', 'key', 'api_key', 'apiKey', 'password', 'secret', 'client_secret', 'auth', 'Authorization',
      'X-Amz-Signature', 'sig', 'code', 'session_id', 'passwd', 'pwd', 'credential', 'api%5Fkey']) {
      const line = redactUrls(`GET https://mcp.example/x?city=Paris&${name}=hunter2#top failed`);
      assert.ok(!line.includes('hunter2'), `${name}: ${line}`);
      assert.ok(line.includes('city=Paris') && line.includes(`${name}=${REDACTED}`), line);
    }
  });

  it('keeps what is not a credential: other parameters, a user alone, text without URLs', () => {
    for (const text of ['/api/console/live?thread=abc&after=3', '/api/console/threads?limit=50&before=x', 'ssh://git@example.com/repo',
      'a = b, c@d', 'http://127.0.0.1:8080/mcp', 'mode=plan effort=high']) {
      assert.equal(redactUrls(text), text);
    }
  });

  it('a captured logger never writes them: message, fields, nested values, URL objects, errors, bindings', () => {
    const lines: string[] = [];
    const log = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString('utf8')), done()) }));
    const child = log.child({ target: '/cb?code=oauth-code-1' });
    child.info({ url: 'postgres://app:db-pass-1@db/app', nested: { list: ['https://h/mcp?api_key=key-1'] }, object: new URL('https://u:url-pass-1@h/x?token=tok-1') },
      'calling https://h/x?access_token=tok-2 now');
    child.warn({ err: Object.assign(new Error('connect ECONNREFUSED postgres://app:db-pass-2@db/app'), { url: 'http://h/?secret=sec-1' }) }, 'failed');
    child.error(new Error('fetch https://u:url-pass-2@h/mcp?password=pw-1 failed', { cause: new Error('see https://h/?key=key-2') }));
    const text = lines.join('');
    for (const secret of ['oauth-code-1', 'db-pass-1', 'key-1', 'url-pass-1', 'tok-1', 'tok-2', 'db-pass-2', 'sec-1', 'url-pass-2', 'pw-1', 'key-2']) {
      assert.ok(!text.includes(secret), `${secret} was logged: ${text}`);
    }
    assert.equal(lines.length, 3);
    assert.match(text, /postgres:\/\/app:\[redacted\]@db\/app/);
    assert.match(text, /calling https:\/\/h\/x\?access_token=\[redacted\] now/);
    // The database-error rule still holds underneath.
    const sql = JSON.stringify(JSON.parse(lines[1]!).err);
    assert.match(sql, /ECONNREFUSED/);
  });
});
