/**
 * The automation page's schedules (`/api/console/schedules`): the caller's list (expression, zone, text, where it
 * sends, whether it is on, its next due time), a new one (cron, zone, text, a thread or a new thread's project and
 * route), enabling or disabling one, removing one after a confirm. A refusal is shown beside the button that caused it. The text is
 * the caller's: shown as text. Browser code.
 */
import { useSignal } from '@preact/signals';
import { api } from './api.ts';
import { useAutomationList } from './automation-list.ts';
import { ConfirmDelete } from './confirm-delete.tsx';
import { OptionPicker, ThreadPicker, threadTitle, type AutomationTargets } from './automation-targets.tsx';

interface Schedule {
  readonly id: string;
  readonly cron: string;
  readonly timezone: string;
  readonly text: string;
  readonly thread_id: string | null;
  readonly project: string | null;
  readonly model: string | null;
  readonly enabled: boolean;
  readonly next_run_at: string | null;
  readonly created_at: string;
}

const moment = (iso: string) => new Date(iso).toLocaleString([], { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

export function SchedulesSection({ targets }: { targets: AutomationTargets }) {
  const { items: schedules, listError, createError, rowError, busy, create: send, act } = useAutomationList<Schedule>(() => api.GET('/api/console/schedules'));
  const cron = useSignal('');
  const timezone = useSignal('UTC');
  const text = useSignal('');
  const thread = useSignal('');
  const project = useSignal('');
  const model = useSignal('');

  const create = async (event: Event) => {
    event.preventDefault();
    const target = thread.value !== ''
      ? { thread_id: thread.value }
      : { project: project.value === '' ? null : project.value, model: model.value === '' ? null : model.value };
    const body = { cron: cron.value.trim(), timezone: timezone.value.trim() === '' ? 'UTC' : timezone.value.trim(), text: text.value, ...target };
    if ((await send(() => api.POST('/api/console/schedules', { body }))) === undefined) return;
    cron.value = '';
    text.value = '';
  };

  const setEnabled = (schedule: Schedule, enabled: boolean) =>
    act(schedule.id, () => api.PATCH('/api/console/schedules/{id}', { params: { path: { id: schedule.id } }, body: { enabled } }));
  const remove = (schedule: Schedule) => act(schedule.id, () => api.DELETE('/api/console/schedules/{id}', { params: { path: { id: schedule.id } } }), true);

  return (
    <section class="automation-section schedules" aria-labelledby="schedules-title">
      <h3 id="schedules-title">Schedules</h3>
      <p class="hint">A schedule sends its text as your directive at the times its cron expression names, in its time zone: to a thread (queued when a turn runs), or to a new thread each time.</p>
      {listError.value !== '' && <p role="alert" class="error">{listError.value}</p>}
      {schedules.value === null ? <p class="hint">Loading…</p> : schedules.value.length === 0 ? <p class="empty">You have no schedules.</p> : (
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col">Cron</th><th scope="col">Time zone</th><th scope="col">Text</th><th scope="col">Sends to</th>
              <th scope="col">State</th><th scope="col">Next run</th><th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {schedules.value.map((schedule) => (
              <tr key={schedule.id} data-schedule-id={schedule.id} data-enabled={String(schedule.enabled)}>
                <td class="cron"><code>{schedule.cron}</code></td>
                <td class="timezone">{schedule.timezone}</td>
                <td class="text">{schedule.text}</td>
                <td class="target">
                  {schedule.thread_id !== null
                    ? <a href={`#/threads/${schedule.thread_id}`}>{threadTitle(targets, schedule.thread_id)}</a>
                    : <span>New thread{schedule.project !== null && ` in ${schedule.project}`}{schedule.model !== null && ` (${schedule.model})`}</span>}
                </td>
                <td class="state">{schedule.enabled ? 'enabled' : 'disabled'}</td>
                <td class="next-run">{schedule.next_run_at === null ? <span class="hint">none</span> : <time dateTime={schedule.next_run_at} title={schedule.next_run_at}>{moment(schedule.next_run_at)}</time>}</td>
                <td class="row-actions">
                  <button type="button" onClick={() => void setEnabled(schedule, !schedule.enabled)} aria-label={`${schedule.enabled ? 'Disable' : 'Enable'} schedule ${schedule.cron}`}>
                    {schedule.enabled ? 'Disable' : 'Enable'}
                  </button>
                  <ConfirmDelete label={`Delete schedule ${schedule.cron}`} onDelete={() => void remove(schedule)} />
                  {(rowError.value[schedule.id] ?? '') !== '' && <span role="alert" class="error">{rowError.value[schedule.id]}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="automation-form new-schedule" onSubmit={(event) => void create(event)}>
        <h4>New schedule</h4>
        <div class="fields">
          <label for="schedule-cron">Cron
            <input id="schedule-cron" required placeholder="0 9 * * 1-5" value={cron.value} onInput={(e) => (cron.value = (e.target as HTMLInputElement).value)} />
          </label>
          <label for="schedule-timezone">Time zone
            <input id="schedule-timezone" placeholder="UTC" value={timezone.value} onInput={(e) => (timezone.value = (e.target as HTMLInputElement).value)} />
          </label>
          <ThreadPicker id="schedule-thread" value={thread.value} set={(v) => (thread.value = v)} targets={targets} />
          {thread.value === '' && <OptionPicker id="schedule-project" label="Project" value={project.value} set={(v) => (project.value = v)} options={targets.projects} none="No project" />}
          {thread.value === '' && <OptionPicker id="schedule-model" label="Agent and model" value={model.value} set={(v) => (model.value = v)} options={targets.routes} none="Default" />}
        </div>
        <label for="schedule-text">Directive</label>
        <textarea id="schedule-text" rows={2} required value={text.value} onInput={(e) => (text.value = (e.target as HTMLTextAreaElement).value)} />
        <p class="hint">Five fields (minute hour day month weekday), or six with seconds first; the time zone is an IANA name such as Europe/Berlin.</p>
        <div class="actions">
          <button type="submit" disabled={busy.value}>Create schedule</button>
          {createError.value !== '' && <span role="alert" class="error">{createError.value}</span>}
        </div>
      </form>
    </section>
  );
}
