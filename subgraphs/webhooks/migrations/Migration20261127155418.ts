import { Migration } from '@mikro-orm/migrations';

export class Migration20261127155418 extends Migration {

  override name = 'Migration20261127155418';

  override up(): void | Promise<void> {
    this.addSql(`create index "events_org_resource_time_index" on "webhooks"."events" ("org_id", "resource_key", "occurred_at", "id");`);

    this.addSql(`create index "webhook_deliveries_event_index" on "webhooks"."webhook_deliveries" ("event_id", "status");`);
    this.addSql(`create index "webhook_deliveries_org_status_index" on "webhooks"."webhook_deliveries" ("org_id", "status", "event_id");`);

    this.addSql(`alter table "webhooks"."webhook_subscriptions" add "previous_secret" varchar(100) null, add "previous_secret_until" timestamptz null, add "paused" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "webhooks"."events_org_resource_time_index";`);

    this.addSql(`drop index "webhooks"."webhook_deliveries_event_index";`);
    this.addSql(`drop index "webhooks"."webhook_deliveries_org_status_index";`);

    this.addSql(`alter table "webhooks"."webhook_subscriptions" drop column "previous_secret", drop column "previous_secret_until", drop column "paused";`);
  }

}
