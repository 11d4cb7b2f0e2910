import { Migration } from '@mikro-orm/migrations';

/**
 * An agent's vocabularies are what the agent advertises: the world's lists only narrow them, and
 * may be left out (null: no narrowing), as may the default mode (null: the mode a new session of
 * the agent starts in). Existing rows keep their lists, which now narrow.
 */
export class AgentOffers extends Migration {
  override up(): void {
    for (const column of ['models', 'efforts', 'permission_modes', 'default_permission_mode']) {
      this.addSql(`alter table "agents" alter column "${column}" drop not null`);
    }
  }

  override down(): void {
    this.addSql(`update "agents" set "models" = coalesce("models", '{}'), "efforts" = coalesce("efforts", '{}'),
      "permission_modes" = coalesce("permission_modes", '{}'), "default_permission_mode" = coalesce("default_permission_mode", '')`);
    for (const column of ['models', 'efforts', 'permission_modes', 'default_permission_mode']) {
      this.addSql(`alter table "agents" alter column "${column}" set not null`);
    }
  }
}
