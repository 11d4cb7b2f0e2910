import { Migration } from '@mikro-orm/migrations';

/**
 * A sandboxed agent's network (`host` or `none`). Existing agents keep the host's, as they had; the
 * default is dropped after, as the mapping declares none (the schema-diff test).
 */
export class AgentNetwork extends Migration {
  override up(): void {
    this.addSql(`alter table "agents" add column "network" text not null default 'host'`);
    this.addSql(`alter table "agents" alter column "network" drop default`);
  }

  override down(): void {
    this.addSql('alter table "agents" drop column if exists "network"');
  }
}
