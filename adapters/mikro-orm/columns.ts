import { iso } from './sql.ts';

/** The columns of each row as the reads answer it (times as ISO strings), for `select` and `returning`. */
export const THREAD = `id, key, channel, owner, project, title, fork_of, fork_cutoff, ${iso('created_at')} as created_at`;
export const CONVERSATION = `id, thread_id, agent, model, permission_mode, effort, address, turn_running, ${iso('created_at')} as created_at, moved_to`;
export const RUN = `id, conversation_id, directory, status, error, ${iso('started_at')} as started_at, ${iso('ended_at')} as ended_at`;
