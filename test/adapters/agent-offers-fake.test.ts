import type { Agent } from '../../domain/model.ts';
import { agentOffersContract } from '../contracts/agent-offers.contract.ts';
import { fakeAgentOffers } from '../support/fake-agent-offers.ts';

const agent = (id: string): Agent => ({ id, models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null });
const claude = { modes: ['default', 'plan'], currentMode: 'default', models: ['opus'], efforts: [] };
const codex = { modes: ['read-only', 'auto'], currentMode: 'read-only', models: [], efforts: ['low', 'high'] };

agentOffersContract('fake', async () => ({
  offers: fakeAgentOffers({ claude, codex, ghost: 'broken', mute: 'silent' }, { boundMs: 300 }),
  working: [{ agent: agent('claude'), offer: claude }, { agent: agent('codex'), offer: codex }],
  broken: agent('ghost'),
  silent: agent('mute'),
  boundMs: 300,
  close: async () => {},
}));
