/**
 * A row's Delete button that asks first: Delete, then "Delete it?" with "Yes, delete" and Cancel. `label` names what
 * goes (the button's accessible name; the question's group is named by it with a question mark). Browser code.
 */
import { useSignal } from '@preact/signals';

export function ConfirmDelete({ label, onDelete }: { readonly label: string; readonly onDelete: () => void }) {
  const asking = useSignal(false);
  if (!asking.value) return <button type="button" class="danger" onClick={() => (asking.value = true)} aria-label={label}>Delete</button>;
  return (
    <span class="confirm" role="group" aria-label={`${label}?`}>
      <span>Delete it?</span>
      <button type="button" class="danger" onClick={() => { asking.value = false; onDelete(); }}>Yes, delete</button>
      <button type="button" onClick={() => (asking.value = false)}>Cancel</button>
    </span>
  );
}
