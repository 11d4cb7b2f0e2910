/**
 * A unified diff (the text of `GET /threads/{id}/changes/diff`) as rows to draw: jsdiff's `parsePatch` reads
 * it, and each line becomes a row with its old and new line numbers. The text is the agent's, untrusted: it
 * is only ever drawn as text (Preact text nodes), never as HTML. Browser code, but pure.
 */
import { parsePatch } from 'diff';

export interface DiffRow {
  readonly kind: 'hunk' | 'context' | 'added' | 'deleted' | 'note';
  /** The line in the base's file (context and deleted lines). */
  readonly old: number | null;
  /** The line in the worktree's file (context and added lines): what a review comment names. */
  readonly new: number | null;
  readonly text: string;
}

/** The rows of every file in `diff`, each hunk headed by its `@@` line. */
export function diffRows(diff: string): DiffRow[] {
  const rows: DiffRow[] = [];
  for (const file of parsePatch(diff)) {
    for (const hunk of file.hunks) {
      rows.push({ kind: 'hunk', old: null, new: null, text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@` });
      let old = hunk.oldStart;
      let now = hunk.newStart;
      for (const line of hunk.lines) {
        const text = line.slice(1);
        if (line.startsWith('+')) rows.push({ kind: 'added', old: null, new: now++, text });
        else if (line.startsWith('-')) rows.push({ kind: 'deleted', old: old++, new: null, text });
        else if (line.startsWith('\\')) rows.push({ kind: 'note', old: null, new: null, text: line });
        else rows.push({ kind: 'context', old: old++, new: now++, text });
      }
    }
  }
  return rows;
}
