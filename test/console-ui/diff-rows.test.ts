// diff-rows.ts: a unified diff (as GET /threads/{id}/changes/diff answers it) as the rows the Changes view
// draws, each with its old and new line numbers (a review comment names the new one).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffRows } from '../../src/console-ui/diff-rows.ts';

describe('diff rows', () => {
  it('numbers context, deleted and added lines across hunks, and keeps the text as it is', () => {
    const diff = [
      'diff --git a/src/app.js b/src/app.js',
      'index 1111111..2222222 100644',
      '--- a/src/app.js',
      '+++ b/src/app.js',
      '@@ -2,3 +2,3 @@',
      ' line 2',
      '-line 3',
      '+<b>line three</b>',
      ' line 4',
      '@@ -9,2 +9,3 @@',
      ' line 9',
      ' line 10',
      '+line 11',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    assert.deepEqual(diffRows(diff).map((row) => [row.kind, row.old, row.new, row.text]), [
      ['hunk', null, null, '@@ -2,3 +2,3 @@'],
      ['context', 2, 2, 'line 2'],
      ['deleted', 3, null, 'line 3'],
      ['added', null, 3, '<b>line three</b>'],
      ['context', 4, 4, 'line 4'],
      ['hunk', null, null, '@@ -9,2 +9,3 @@'],
      ['context', 9, 9, 'line 9'],
      ['context', 10, 10, 'line 10'],
      ['added', null, 11, 'line 11'],
      ['note', null, null, '\\ No newline at end of file'],
    ]);
  });

  it('answers no rows for a diff without hunks (a binary file, or nothing)', () => {
    assert.deepEqual(diffRows('diff --git a/logo.png b/logo.png\nnew file mode 100644\nBinary files /dev/null and b/logo.png differ\n'), []);
    assert.deepEqual(diffRows(''), []);
  });

  it('numbers an added file from line 1', () => {
    const rows = diffRows('diff --git a/notes.md b/notes.md\nnew file mode 100644\n--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+one\n+two\n');
    assert.deepEqual(rows.map((row) => [row.kind, row.old, row.new]), [['hunk', null, null], ['added', null, 1], ['added', null, 2]]);
  });
});
