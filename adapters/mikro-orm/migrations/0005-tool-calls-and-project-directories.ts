import { Migration } from '@mikro-orm/migrations';

/**
 * Tool calls in full and projects on disk. A pending approval keeps the ACP tool call it asks about
 * (`tool_call`, null for questions and older items), and each option its ACP `kind` (existing
 * options get `"kind": null`, so every stored option has the same shape). A project may name its
 * directory on disk (`directory`, null: the default under `DATA_DIR`).
 */
export class ToolCallsAndProjectDirectories extends Migration {
  override up(): void {
    const statements = [
      `alter table "pending" add column "tool_call" jsonb null`,
      `update "pending" set "options" = (
        select coalesce(jsonb_agg(case when o ? 'kind' then o else o || '{"kind": null}'::jsonb end order by i), '[]'::jsonb)
        from jsonb_array_elements("options") with ordinality as e(o, i))`,
      `alter table "projects" add column "directory" text null`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('alter table "projects" drop column if exists "directory"');
    this.addSql('alter table "pending" drop column if exists "tool_call"');
  }
}
