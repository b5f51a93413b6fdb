import { Migration } from '@mikro-orm/migrations';

export class Migration20261127122507 extends Migration {

  override name = 'Migration20261127122507';

  override up(): void | Promise<void> {
    this.addSql(`create table "webhooks"."events" ("id" uuid not null, "source" varchar(64) not null, "seq" bigint not null, "org_id" varchar(128) not null, "type" varchar(64) not null, "resource_key" varchar(300) not null, "resource_path" varchar(500) not null, "resource" jsonb not null, "occurred_at" timestamptz not null, "recorded_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "events_org_occurred_index" on "webhooks"."events" ("org_id", "occurred_at", "id");`);
    this.addSql(`create index "events_org_resource_index" on "webhooks"."events" ("org_id", "resource_key", "seq");`);
    this.addSql(`create index "events_org_type_index" on "webhooks"."events" ("org_id", "type", "occurred_at", "id");`);
    this.addSql(`create index "events_occurred_index" on "webhooks"."events" ("occurred_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "webhooks"."events" cascade;`);
  }

}
