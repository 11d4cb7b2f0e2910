import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { offerOf } from '../../adapters/acp/offer.ts';

const select = (id: string, category: string | undefined, values: string[], currentValue = values[0]!) =>
  ({ id, name: id, type: 'select' as const, currentValue, options: values.map((value) => ({ value, name: value })), ...(category ? { category } : {}) });

describe('what an ACP session advertises (offerOf)', () => {
  it('Gemini-like: modes, and models only in the session `models` field', () => {
    const offer = offerOf({
      modes: { currentModeId: 'default', availableModes: ['default', 'autoEdit', 'yolo', 'plan'].map((id) => ({ id, name: id })) },
      configOptions: [],
      models: { availableModels: [{ modelId: 'gemini-2.5-pro' }, { modelId: 'gemini-2.5-flash' }], currentModelId: 'gemini-2.5-pro' },
    }, null);
    assert.deepEqual(offer, { modes: ['default', 'autoEdit', 'yolo', 'plan'], currentMode: 'default', models: ['gemini-2.5-pro', 'gemini-2.5-flash'], efforts: [] });
  });

  it('Codex-like: the model option wins over a `models` field; reasoning_effort without a category is the effort', () => {
    const offer = offerOf({
      modes: null,
      configOptions: [select('mode', 'mode', ['read-only', 'auto', 'full-access']), select('model', 'model', ['gpt-5-codex']), select('reasoning_effort', undefined, ['low', 'high'])],
      models: { availableModels: [{ modelId: 'other' }], currentModelId: 'other' },
    }, null);
    assert.deepEqual(offer, { modes: ['read-only', 'auto', 'full-access'], currentMode: 'read-only', models: ['gpt-5-codex'], efforts: ['low', 'high'] });
  });

  it('a later update refreshes the lists but keeps the mode a new session starts in', () => {
    const state = { modes: { currentModeId: 'plan', availableModes: [{ id: 'default', name: 'd' }, { id: 'plan', name: 'p' }] }, configOptions: [], models: null };
    const fresh = offerOf({ ...state, modes: { ...state.modes, currentModeId: 'default' } }, null);
    assert.equal(offerOf(state, fresh).currentMode, 'default');
    assert.equal(offerOf(state, null).currentMode, 'plan');
  });
});
