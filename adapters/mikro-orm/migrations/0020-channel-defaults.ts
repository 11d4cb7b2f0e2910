import { Migration } from '@mikro-orm/migrations';

/**
 * A channel's defaults for the threads its chat messages start (the world file's `defaults`: project, route,
 * posture, effort), one JSON document; null when the world gives none.
 */
export class ChannelDefaults extends Migration {
  override up(): void {
    this.addSql('alter table "channels" add column "defaults" jsonb null');
  }

  override down(): void {
    this.addSql('alter table "channels" drop column if exists "defaults"');
  }
}
