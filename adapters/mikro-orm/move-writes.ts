import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import type { WireEvent } from '../../domain/events.ts';
import type { Conversation, Message, MovedTo, Run, Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { MoveOutcome, MoveWrite, MoveWrites } from '../../ports/move-writes.ts';
import { CONVERSATION, THREAD } from './columns.ts';
import { askJson } from './delivery-outbox.ts';
import { APPEND } from './event-log.ts';
import { transaction } from './transaction.ts';
import { insertConversation, retriedOnSeqRace } from './write-helpers.ts';

/** Teleports and summons, each one transaction (retried as a whole when an event's seq was taken by a racing append). */
export function mikroOrmMoveWrites(orm: MikroORM): MoveWrites {
  return { writeMove: (move) => writeMove(orm, move) };
}

/**
 * A teleport or summon as one transaction (MoveWrites.writeMove): the source thread and its
 * conversations locked, the busy check, then the landing thread, the conversation, the ledger line,
 * the gateway events and the first turn with its event.
 */
function writeMove(orm: MikroORM, move: MoveWrite): Promise<MoveOutcome> {
  return retriedOnSeqRace(() =>
  transaction(orm, async (sql) => {
    // The source's row, then its conversations, locked, in the order a directive locks them (one
    // order: no deadlock): a concurrent move or directive of this thread waits here until this
    // transaction ends, so the busy check and the latest conversation below hold until commit.
    const [source] = await sql<Thread>(`select ${THREAD} from threads where id = ? for update`, [move.source_thread_id]);
    if (source === undefined) throw new Error(`No thread ${move.source_thread_id}`);
    const running = await sql<{ id: string; turn_running: boolean; moved_to: MovedTo | null }>(
      'select id, turn_running, moved_to from conversations where thread_id = ? order by id for update', [source.id]);
    const latest = running.at(-1);
    if (latest?.moved_to != null) return { kind: 'moved_away', moved_to: latest.moved_to };
    const pending = await sql<{ kind: string; n: number }>(`
      select p.kind, count(*)::int as n from pending p join conversations c on c.id = p.conversation_id
      where c.thread_id = ? group by p.kind`, [source.id]);
    const [queue] = await sql<{ n: number }>('select count(*)::int as n from directive_queue where thread_id = ?', [source.id]);
    const busy = {
      turnRunning: running.some((row) => row.turn_running),
      approvals: pending.find((row) => row.kind === 'approval')?.n ?? 0,
      questions: pending.find((row) => row.kind === 'question')?.n ?? 0,
      queued: queue?.n ?? 0,
    };
    if (busy.turnRunning || busy.approvals > 0 || busy.questions > 0 || busy.queued > 0) return { kind: 'busy', busy };
    const expected = move.moving ?? move.replaces;
    if (expected !== null && latest?.id !== expected) return { kind: 'changed' };
    if (move.landing !== null && move.conversation.address !== null) {
      const [taken] = await sql('select 1 from conversations where address = ?::jsonb and moved_to is null limit 1', [JSON.stringify(move.conversation.address)]);
      if (taken !== undefined) return { kind: 'occupied' };
    }
    let thread = source;
    if (move.landing !== null) {
      const l = move.landing;
      // A fork of the source at its latest visible message: its own newest, or what it inherits up to its cutoff.
      [thread] = await sql<Thread>(`
        insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
        values (?, null, ?, ?, ?, ?, ?::uuid, (
          select greatest((select id from messages where thread_id = ?::uuid order by id desc limit 1), case when ?::uuid is null then null else ?::uuid end)
        ), ?) returning ${THREAD}`,
      [l.id, l.channel, l.owner, l.project, l.title, source.id, source.id, source.fork_of, source.fork_cutoff, uuid7Time(l.id)]) as [Thread];
      // Whoever could read the source reads where it went: its members, and the mover.
      await sql('insert into thread_members (thread_id, user_id) select ?, user_id from thread_members where thread_id = ? and user_id <> ?',
        [l.id, source.id, l.owner]);
      for (const member of l.members.filter((user) => user !== l.owner)) {
        await sql('insert into thread_members (thread_id, user_id) values (?, ?) on conflict do nothing', [l.id, member]);
      }
    }
    let conversation = await insertConversation(sql, thread, move.conversation, move.conversation.id);
    if (move.moving !== null) {
      const movedTo: MovedTo = { thread_id: thread.id, conversation_id: conversation.id, address: conversation.address! };
      // The moved conversation's new address, and its agent session carried to the conversation there.
      await sql('update conversations set moved_to = ?::jsonb, address = ?::jsonb where id = ?', [JSON.stringify(movedTo), JSON.stringify(movedTo.address), move.moving]);
      await sql('update conversations set session_id = (select session_id from conversations where id = ?) where id = ?', [move.moving, conversation.id]);
    }
    const system = async (threadId: string, text: string) => {
      const id = uuidv7();
      await sql(`insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'system', ?, null, ?)`, [id, threadId, text, uuid7Time(id)]);
    };
    if (move.ledger !== null) await system(source.id, move.ledger);
    if (move.landing_ledger !== null) await system(thread.id, move.landing_ledger);
    if (move.delivery !== null) {
      const d = move.delivery;
      await sql(`insert into deliveries (id, channel, place, new_thread, address, title, text, ask, recipient, attempts, due_at, holder)
        values (?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb, ?, 0, now(), null)`,
      [d.id, d.channel, d.place, d.new_thread, JSON.stringify(d.address), d.title, d.text, askJson(d), d.to ?? null]);
    }
    const gateway = JSON.stringify(move.gateway);
    const events = await sql<WireEvent>(APPEND, [source.id, 'gateway', gateway, source.id]);
    if (move.landing !== null) events.push(...await sql<WireEvent>(APPEND, [thread.id, 'gateway', gateway, thread.id]));
    let run: Run | null = null;
    if (move.turn !== null) {
      const messageId = uuidv7();
      const runId = uuidv7();
      const message: Message = { id: messageId, role: 'user', text: move.turn.text, artifact_id: null, created_at: uuid7Time(messageId), origin: null };
      run = { id: runId, conversation_id: conversation.id, directory: move.turn.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null, rewound: false };
      await sql(`insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'user', ?, null, ?)`,
        [messageId, thread.id, message.text, message.created_at]);
      await sql(`insert into runs (id, conversation_id, directory, status, error, started_at, ended_at, message_id) values (?, ?, ?, 'running', null, ?, null, ?)`,
        [runId, conversation.id, run.directory, run.started_at, messageId]);
      [conversation] = await sql<Conversation>(`
        update conversations set turn_running = true, turn_run_id = ?, turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
        where id = ? returning ${CONVERSATION}`, [runId, move.turn.lease.holder, move.turn.lease.ms / 1000, conversation.id]) as [Conversation];
      events.push(...await sql<WireEvent>(APPEND, [thread.id, 'message', JSON.stringify({ run_id: runId, message }), thread.id]));
    }
    return { kind: 'moved', thread, conversation, events, run };
  }));
}
