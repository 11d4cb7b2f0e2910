import { Migration } from '@mikro-orm/migrations';

/**
 * An agent's environment: `env`, its literal variables, and `env_pass`, the names of variables
 * passed through from the service's environment (their values are never stored). Existing agents
 * get none; the defaults are dropped after, as the mapping declares none (the schema-diff test).
 */
export class AgentEnv extends Migration {
  override up(): void {
    const statements = [
      `alter table "agents" add column "env" jsonb not null default '{}'`,
      `alter table "agents" add column "env_pass" text[] not null default '{}'`,
      `alter table "agents" alter column "env" drop default`,
      `alter table "agents" alter column "env_pass" drop default`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('alter table "agents" drop column if exists "env_pass"');
    this.addSql('alter table "agents" drop column if exists "env"');
  }
}
