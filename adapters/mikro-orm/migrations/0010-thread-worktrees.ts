import { Migration } from '@mikro-orm/migrations';

/**
 * Projects as git repositories (contract section 8): a project may name a repository (`repo`) and
 * the branch its threads' worktrees start from (`base`); a thread records its worktree
 * (`{"branch", "base", "path"}`, null until its first turn on a repository project makes it).
 */
export class ThreadWorktrees extends Migration {
  override up(): void {
    this.addSql('alter table "projects" add column "repo" text null, add column "base" text null');
    this.addSql('alter table "threads" add column "worktree" jsonb null');
  }

  override down(): void {
    this.addSql('alter table "threads" drop column if exists "worktree"');
    this.addSql('alter table "projects" drop column if exists "repo", drop column if exists "base"');
  }
}
