import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PostgreSqlPlatform } from '@mikro-orm/postgresql';
import { statementText } from '../../adapters/mikro-orm/sql.ts';

/**
 * Issue 28: runStatement fills a statement's `?` bindings itself (strings without a quote or a
 * backslash in plain quotes, rather than pg's escapeLiteral building them a character at a time).
 * The text must stay what MikroORM's `formatQuery` makes of it, byte for byte: the same statements
 * reach the database, and the reads bench's bare baseline runs the very texts the service sent.
 */
describe('statement text (runStatement)', () => {
  const platform = new PostgreSqlPlatform();
  const values: unknown[] = [
    'alice',
    '',
    "it's",
    "''",
    'back\\slash',
    "both ' and \\",
    'a ? inside a value',
    '??',
    'ünïcødé ✓ 😀',
    'line\nbreak\ttab',
    '019b76da-b3b8-7ecc-be00-0be1f891f93d',
    'c26a7f01074b72beff2295b5cb02eb0b0fa871f4aca30367c51ffcd0c68d4832',
    0,
    -1.5,
    51,
    Number.NaN,
    true,
    false,
    null,
    undefined,
    new Date(Date.UTC(2026, 0, 1, 12, 30, 45, 123)),
    { a: 1, b: "q'uote", c: [1, 2] },
    [1, 'two', null],
    Buffer.from('bytes'),
  ];

  it('is what MikroORM makes of every kind of value', () => {
    for (const value of values) {
      for (const sql of ['select ?', 'select * from t where a = ? and b = ?', '? = x', 'x = ? limit 1']) {
        const params = sql.split('?').slice(1).map(() => value);
        assert.equal(statementText(platform, sql, params), platform.formatQuery(sql, [...params]), `${sql} with ${String(value)}`);
      }
    }
  });

  it('keeps identifiers (`??`), escaped question marks and a statement without bindings as MikroORM does', () => {
    const cases: [string, unknown[]][] = [
      ['select ?? from t where a = ?', ['col.name', "o'k"]],
      ['?? = ?', ['x', 1]],
      ['select \\? , ?', ['v']],
      ['select 1', []],
      ['select ?, ?', ['a?', '?b']],
      ["select '?' as q, ?", ['x']],
    ];
    for (const [sql, params] of cases) assert.equal(statementText(platform, sql, params), platform.formatQuery(sql, [...params]), sql);
  });

  it('quotes a plain string, a number and null itself: pg\'s escapeLiteral is left for strings with a quote or a backslash', () => {
    let escaped = 0;
    const counting = Object.assign(Object.create(platform) as PostgreSqlPlatform, {
      escape(value: unknown) {
        escaped += 1;
        return platform.escape(value);
      },
    });
    statementText(counting, 'select ? ? ? ?', ['alice', '019b76da-b3b8-7ecc-be00-0be1f891f93d', 51, null]);
    assert.equal(escaped, 0);
    statementText(counting, 'select ?', ["it's"]);
    assert.equal(escaped, 1);
  });

  it("is the reads' statements exactly, with their real values", () => {
    const user = 'alice';
    const thread = '019b76da-b3b8-7ecc-be00-0be1f891f93d';
    const sql = `select t.id from threads t left join thread_members m on m.thread_id = t.id and m.user_id = ?
where t.id = ? and (t.owner = ? or m.user_id is not null) limit ?`;
    assert.equal(statementText(platform, sql, [user, thread, user, 51]), platform.formatQuery(sql, [user, thread, user, 51]));
  });
});
