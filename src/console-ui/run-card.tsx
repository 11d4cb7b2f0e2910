/** A run as it happens (streamed text, tool calls with their diffs, the plan, its end, a rewind), and a pending item. Browser code. */
import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import type { PendingView, RunView, ToolCallView } from './timeline.ts';

function ToolCallContent({ item }: { item: Record<string, unknown> }) {
  if (item.type === 'diff') {
    return (
      <figure class="diff">
        <figcaption>{String(item.path ?? '')}</figcaption>
        {typeof item.oldText === 'string' && <pre class="old" aria-label="Before">{item.oldText}</pre>}
        <pre class="new" aria-label="After">{String(item.newText ?? '')}</pre>
      </figure>
    );
  }
  if (item.type === 'content' && typeof item.content === 'object' && item.content !== null && typeof (item.content as { text?: unknown }).text === 'string') {
    return <pre class="output">{(item.content as { text: string }).text}</pre>;
  }
  return null;
}

export function ToolCall({ call }: { call: ToolCallView }) {
  return (
    <div class="tool-call" data-status={call.status ?? ''}>
      <p><span class="kind">{call.kind ?? 'tool'}</span> {call.title ?? call.id} <span class="status">{call.status ?? ''}</span></p>
      {(call.content ?? []).map((item, index) => <ToolCallContent key={index} item={item} />)}
    </div>
  );
}

/** `rewind`: what the card offers to take the run back ("Rewind to before this"), when the viewer may. */
export function RunCard({ run, rewind = null }: { run: RunView; rewind?: ComponentChildren }) {
  return (
    <article class="run" data-run-id={run.id} data-status={run.status} data-rewound={run.rewound ? 'true' : undefined} aria-label={`Run ${run.status}${run.rewound ? ', rewound' : ''}`}>
      <header>
        Run <span class="status">{run.status}</span>{run.rewound && <span class="rewound-label">Rewound</span>}{run.error !== null && <span class="error"> {run.error}</span>}
        {rewind}
      </header>
      {run.plan.length > 0 && (
        <ol class="plan" aria-label="Plan">{run.plan.map((entry, i) => <li key={i} data-status={entry.status}>{entry.content}</li>)}</ol>
      )}
      {run.toolCalls.map((call) => <ToolCall key={call.id} call={call} />)}
      {run.thoughts !== '' && <details class="thoughts"><summary>Thoughts</summary><p>{run.thoughts}</p></details>}
      {run.status === 'running' && <p class="stream" aria-live="polite">{run.text}</p>}
    </article>
  );
}

export function PendingCard({ item, answer }: { item: PendingView; answer: (response: { id: string; option: string } | { id: string; answer: string }) => void }) {
  const text = useSignal('');
  return (
    <section class="pending" data-kind={item.kind} aria-label={item.kind === 'approval' ? `Approval: ${item.title}` : `Question: ${item.title}`}>
      <h3>{item.kind === 'approval' ? 'Approval' : 'Question'}: {item.title}</h3>
      {item.tool_call !== null && <ToolCall call={item.tool_call} />}
      <div class="options">
        {item.options.map((option) => (
          <button key={option.id} type="button" data-kind={option.kind ?? ''} onClick={() => answer({ id: item.id, option: option.id })}>{option.name}</button>
        ))}
      </div>
      {item.kind === 'question' && (
        <form onSubmit={(e) => { e.preventDefault(); if (text.value.trim() !== '') answer({ id: item.id, answer: text.value }); }}>
          <label for={`answer-${item.id}`}>Answer</label>
          <input id={`answer-${item.id}`} value={text.value} onInput={(e) => (text.value = (e.target as HTMLInputElement).value)} />
          <button type="submit">Send answer</button>
        </form>
      )}
    </section>
  );
}
