/**
 * Automation (`#/automation`, contract section 12): the caller's schedules and hooks in and webhooks out, one
 * section (and one file) each, beside each other. The page reads once what the sections' forms offer as targets
 * (the caller's threads, the projects, the routes) and passes it down. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api } from './api.ts';
import { HooksSection } from './automation-hooks.tsx';
import { SchedulesSection } from './automation-schedules.tsx';
import type { AutomationTargets } from './automation-targets.tsx';
import { WebhooksSection } from './automation-webhooks.tsx';

export function Automation() {
  const targets = useSignal<AutomationTargets>({ threads: [], projects: [], routes: [] });
  useEffect(() => {
    void Promise.all([
      api.GET('/api/console/threads', { params: { query: { limit: '200' } } }),
      api.GET('/api/console/projects'),
      api.GET('/api/console/routes'),
    ]).then(([threads, projects, routes]) => {
      targets.value = {
        threads: (threads.data?.items ?? []).map((thread) => ({ id: thread.id, title: thread.title })),
        projects: projects.data ?? [],
        routes: (routes.data ?? []).map((route) => route.id),
      };
    });
  }, []);
  return (
    <section class="automation" aria-labelledby="automation-title">
      <h2 id="automation-title">Automation</h2>
      <p class="hint">Directives sent as you without you typing them: on a schedule, or when another service calls a hook. Each one says where it came from in its thread. Webhooks tell another service what happens in your threads.</p>
      <SchedulesSection targets={targets.value} />
      <HooksSection targets={targets.value} />
      <WebhooksSection targets={targets.value} />
    </section>
  );
}
