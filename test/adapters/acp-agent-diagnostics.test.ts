import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authenticationReason, redactor, startupReason } from '../../adapters/acp/agent-diagnostics.ts';
import { agentSecrets } from '../../domain/agent-env.ts';

describe('agent diagnostics', () => {
  it('redacts every occurrence of every secret, the longest first', () => {
    const redact = redactor(['abc123', 'abc123-long', '']);
    assert.equal(redact('key=abc123-long and abc123, abc123'), 'key=[redacted] and [redacted], [redacted]');
    assert.equal(redactor([])('as is'), 'as is');
  });

  it("an agent's secrets: every env_pass value it got, and env literals of four characters or more", () => {
    const agent = { env: { BASE_URL: 'http://127.0.0.1:9', FLAG: '1', YES: 'yes' }, env_pass: ['API_KEY', 'ABSENT', 'EMPTY'] };
    const env = { API_KEY: 'k', EMPTY: '', BASE_URL: 'http://127.0.0.1:9', FLAG: '1', YES: 'yes', PATH: '/usr/bin' };
    assert.deepEqual(agentSecrets(agent, env), ['k', 'http://127.0.0.1:9']);
  });

  it('names auth methods by their ids, made plain and few; says what to do', () => {
    assert.equal(authenticationReason([]), 'the agent needs authentication (it offers no method); give it credentials through its env or env_pass');
    assert.equal(
      authenticationReason([{ id: 'chatgpt', name: 'Log in' }, { id: 'api-key <script>', name: 'Key' }]),
      'the agent needs authentication (it offers chatgpt, api-keyscript); give it credentials through its env or env_pass',
    );
  });

  it('start-up failures read as sentences', () => {
    assert.equal(startupReason(new Error('the agent process could not start: spawn /x ENOENT')), 'the agent could not start: its command was not found');
    assert.equal(startupReason(new Error('the agent process exited with status 3')), 'the agent could not start: exited with status 3');
    assert.equal(startupReason(new Error('the agent speaks ACP version 9, not 1')), 'the agent could not start: speaks ACP version 9, not 1');
    const auth = authenticationReason([]);
    assert.equal(startupReason(new Error(auth)), auth);
  });
});
