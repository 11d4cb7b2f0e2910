import { Migration } from '@mikro-orm/migrations';

/**
 * What a delivery asks and whom it is for (`deliveries.ask`, `deliveries.recipient`): a platform with
 * buttons (Slack's Block Kit) draws an approval's or a question's options from `ask`, and one that can
 * show a post to one person only (Slack's ephemeral messages) shows a reply to `recipient` alone. Rows
 * from before ask nothing and are for everyone at the place, as they were.
 */
export class DeliveryAsks extends Migration {
  override up(): void {
    this.addSql('alter table "deliveries" add column "ask" jsonb null, add column "recipient" text null');
  }

  override down(): void {
    this.addSql('alter table "deliveries" drop column if exists "ask", drop column if exists "recipient"');
  }
}
