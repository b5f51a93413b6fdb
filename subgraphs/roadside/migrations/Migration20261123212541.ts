import { Migration } from '@mikro-orm/migrations';

export class Migration20261123212541 extends Migration {

  override name = 'Migration20261123212541';

  override up(): void | Promise<void> {
    this.addSql(`create table "roadside"."webhook_outbox" ("seq" bigserial primary key, "event_id" uuid not null, "org_id" varchar(128) not null, "type" varchar(64) not null, "resource_key" varchar(300) not null, "resource_path" varchar(500) not null, "resource" jsonb not null, "occurred_at" timestamptz not null);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "roadside"."webhook_outbox" cascade;`);
  }

}
