import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { agentEnvironment, ENV_NAME_PATTERN } from '../domain/agent-env.ts';
import { parseWorld } from '../src/world/load.ts';

const SERVICE = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/svc',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  LC_CTYPE: 'C.UTF-8',
  TMPDIR: '/tmp/svc',
  DATABASE_URL: 'postgres://console:db-secret@db/console',
  ANTHROPIC_API_KEY: 'sk-secret',
  NODE_OPTIONS: '--inspect',
  LOG_LEVEL: 'debug',
  UNSET: undefined,
};

describe("an agent's environment", () => {
  it('holds the allow-listed base variables and nothing else of the service', () => {
    const { env, missing } = agentEnvironment({}, SERVICE);
    assert.deepEqual({ ...env }, { PATH: '/usr/bin:/bin', HOME: '/home/svc', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', LC_CTYPE: 'C.UTF-8', TMPDIR: '/tmp/svc' });
    assert.deepEqual(missing, []);
  });

  it('adds the env_pass variables from the service, then the env literals, which win', () => {
    const { env } = agentEnvironment({ env: { BASE_URL: 'http://127.0.0.1:9', PATH: '/opt/agent/bin' }, env_pass: ['ANTHROPIC_API_KEY'] }, SERVICE);
    assert.equal(env.ANTHROPIC_API_KEY, 'sk-secret');
    assert.equal(env.BASE_URL, 'http://127.0.0.1:9');
    assert.equal(env.PATH, '/opt/agent/bin');
    assert.equal(env.DATABASE_URL, undefined);
    assert.equal(env.NODE_OPTIONS, undefined);
  });

  it('reports env_pass names the service does not hold, by name, and leaves them out', () => {
    const { env, missing } = agentEnvironment({ env_pass: ['UNSET', 'NOWHERE', 'toString', 'HOME'] }, SERVICE);
    assert.deepEqual(missing, ['UNSET', 'NOWHERE', 'toString']);
    assert.ok(!('UNSET' in env) && !('NOWHERE' in env));
    assert.equal(env.HOME, '/home/svc');
  });

  it('keeps a literal named __proto__ as a variable, not a prototype', () => {
    const { env } = agentEnvironment({ env: JSON.parse('{"__proto__": "x"}') }, {});
    assert.deepEqual(Object.keys(env), ['__proto__']);
  });

  it('property: whatever the service holds, the agent gets only allow-listed, passed or literal names', () => {
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,12}$/);
    fc.assert(
      fc.property(fc.dictionary(name, fc.string()), fc.array(name, { maxLength: 4 }), fc.dictionary(name, fc.string(), { maxKeys: 4 }), (base, pass, literals) => {
        const { env, missing } = agentEnvironment({ env: literals, env_pass: pass }, base);
        for (const key of Object.keys(env)) {
          assert.ok(['PATH', 'HOME', 'LANG', 'TMPDIR'].includes(key) || key.startsWith('LC_') || pass.includes(key) || Object.hasOwn(literals, key), key);
        }
        for (const key of Object.keys(literals)) assert.equal(env[key], literals[key]);
        for (const key of missing) assert.ok(pass.includes(key) && !Object.hasOwn(base, key));
      }),
      { numRuns: 200 },
    );
  });
});

describe('env and env_pass in the world file', () => {
  const demo = async () => JSON.parse(await readFile(new URL('../src/world/demo-world.json', import.meta.url), 'utf8'));
  const issuesOf = async (agent: Record<string, unknown>) => {
    const world = await demo();
    Object.assign(world.agents[0], agent);
    const parsed = parseWorld(world);
    return parsed.ok ? { world: parsed.value, issues: [] } : { world: null, issues: parsed.error };
  };

  it('are read, and default to none', async () => {
    const { world } = await issuesOf({ env: { BASE_URL: 'http://127.0.0.1:9' }, env_pass: ['API_KEY'] });
    assert.deepEqual(world?.agents[0]?.env, { BASE_URL: 'http://127.0.0.1:9' });
    assert.deepEqual(world?.agents[0]?.env_pass, ['API_KEY']);
    const plain = parseWorld(await demo());
    assert.ok(plain.ok);
    // The demo's claude names neither (its codex names the demo agent's profile).
    const claude = plain.value.agents.find((agent) => agent.id === 'claude');
    assert.deepEqual(claude?.env, {});
    assert.deepEqual(claude?.env_pass, []);
  });

  it('refuse a variable name that is not a name (A=B, NUL, empty, a digit first, a space), naming the path', async () => {
    for (const bad of ['A=B', 'A\u0000B', '', '1A', 'A B', 'É']) {
      const literal = await issuesOf({ env: { [bad]: 'x' } });
      assert.ok(literal.issues.some((i) => i.path === `agents.0.env.${bad}` && /variable name/.test(i.message)), `env ${JSON.stringify(bad)}: ${JSON.stringify(literal.issues)}`);
      const passed = await issuesOf({ env_pass: [bad] });
      assert.ok(passed.issues.some((i) => i.path === 'agents.0.env_pass.0' && /variable name/.test(i.message)), `env_pass ${JSON.stringify(bad)}`);
    }
  });

  it('refuse a value PostgreSQL cannot store, a non-string value, and a name both literal and passed', async () => {
    assert.ok((await issuesOf({ env: { A: 'x\u0000y' } })).issues.some((i) => i.path === 'agents.0.env.A' && /NUL/.test(i.message)));
    assert.ok((await issuesOf({ env: { A: 'x\ud800' } })).issues.some((i) => i.path === 'agents.0.env.A'));
    assert.ok((await issuesOf({ env: { A: 1 } })).issues.some((i) => i.path === 'agents.0.env.A'));
    assert.ok((await issuesOf({ env_pass: 'A' })).issues.some((i) => i.path === 'agents.0.env_pass'));
    const both = await issuesOf({ env: { API_KEY: 'x' }, env_pass: ['API_KEY'] });
    assert.ok(both.issues.some((i) => i.path === 'agents.0.env_pass.0' && /also set in env/.test(i.message)), JSON.stringify(both.issues));
  });

  it('the name pattern is the one the schema uses', () => {
    assert.ok(ENV_NAME_PATTERN.test('OPENAI_API_KEY') && !ENV_NAME_PATTERN.test('A=B'));
  });
});
