import { uuid7Time } from '../../domain/vocabulary.ts';
import type { World } from '../../domain/world.ts';
import type { MemoryState } from './state.ts';

/** Writes a world into the state, replacing rows with the same id, so importing twice doubles nothing. */
export function importWorld(state: MemoryState, world: World): void {
  for (const user of world.users) {
    // A world user's name, token and role are the world's; whether an admin deactivated them is kept.
    const stored = state.users.get(user.id);
    state.users.set(user.id, {
      id: user.id, name: user.name, token_hash: user.token_hash, role: user.role ?? 'member', email: stored?.email ?? null,
      active: stored?.active ?? true, issuer: null, subject: null, created_at: stored?.created_at ?? new Date().toISOString(),
    });
  }
  for (const project of world.projects) state.projects.set(project.name, project);
  for (const agent of world.agents) state.agents.set(agent.id, { ...agent, env: agent.env ?? {}, env_pass: agent.env_pass ?? [], network: agent.network ?? 'host' });
  for (const channel of world.channels) state.channels.set(channel.id, channel);
  for (const installation of world.installations) state.installations.set(installation.id, installation);
  for (const artifact of world.artifacts) state.artifacts.set(artifact.id, { ...artifact, created_at: uuid7Time(artifact.id) });
  for (const t of world.threads) {
    state.threads.set(t.id, {
      id: t.id, key: t.key, channel: t.channel, owner: t.owner, project: t.project, title: t.title,
      fork_of: t.fork_of, fork_cutoff: t.fork_cutoff, created_at: uuid7Time(t.id),
      worktree: state.threads.get(t.id)?.worktree ?? null, archived: state.threads.get(t.id)?.archived ?? false,
    });
    state.members.set(t.id, new Set(t.members));
    for (const m of t.messages) {
      state.messages.set(m.id, { id: m.id, role: m.role, text: m.text, artifact_id: m.artifact_id, created_at: uuid7Time(m.id), origin: null, thread_id: t.id });
    }
    for (const c of t.conversations) {
      state.conversations.set(c.id, {
        id: c.id, thread_id: t.id, agent: c.agent, model: c.model, permission_mode: c.permission_mode, effort: c.effort,
        address: c.address, turn_running: c.turn_running, created_at: uuid7Time(c.id), moved_to: null,
      });
      for (const p of c.pending) {
        state.pending.set(p.id, { id: p.id, kind: p.kind, conversation_id: c.id, run_id: p.run_id, title: p.title, options: p.options, tool_call: p.tool_call });
      }
      for (const r of c.runs) {
        state.runs.set(r.id, {
          id: r.id, conversation_id: c.id, directory: r.directory, status: r.status, error: r.error,
          started_at: uuid7Time(r.id), ended_at: r.ended_at, rewound: false,
        });
        for (const mm of r.model_messages) {
          state.modelMessages.set(mm.id, { id: mm.id, run_id: r.id, role: mm.role, content: mm.content, created_at: uuid7Time(mm.id) });
        }
      }
    }
  }
}
