/**
 * What the automation page's forms offer as targets, and their pickers: shared by its sections (schedules, hooks,
 * webhooks), read once by the page. Browser code.
 */

/** What a schedule or a hook may send to: one of the caller's threads, or a new thread with a project and a route. */
export interface AutomationTargets {
  readonly threads: readonly { readonly id: string; readonly title: string }[];
  readonly projects: readonly string[];
  readonly routes: readonly string[];
}

/** A thread's title for a target cell, or its id when it is not among the caller's first threads. */
export function threadTitle(targets: AutomationTargets, id: string): string {
  return targets.threads.find((thread) => thread.id === id)?.title || id;
}

/** The target picker of a form: a new thread each time (value ''), or one of the caller's threads. */
export function ThreadPicker({ id, value, set, targets }: { id: string; value: string; set: (value: string) => void; targets: AutomationTargets }) {
  return (
    <label for={id}>
      Sends to
      <select id={id} value={value} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
        <option value="">A new thread each time</option>
        {targets.threads.map((thread) => <option key={thread.id} value={thread.id}>{thread.title || thread.id}</option>)}
      </select>
    </label>
  );
}

/** A picker of a new thread's project or route ('' picks none: the service's default). */
export function OptionPicker({ id, label, value, set, options, none }: { id: string; label: string; value: string; set: (value: string) => void; options: readonly string[]; none: string }) {
  return (
    <label for={id}>
      {label}
      <select id={id} value={value} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
        <option value="">{none}</option>
        {options.map((option) => <option key={option} value={option}>{option}</option>)}
      </select>
    </label>
  );
}
