import { Migration } from '@mikro-orm/migrations';

export class Migration20261124084739 extends Migration {

  override name = 'Migration20261124084739';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."webhook_subscriptions" add "consecutive_failures" int not null default 0, add "paused_until" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "webhooks"."webhook_subscriptions" drop column "consecutive_failures", drop column "paused_until";`);
  }

}
