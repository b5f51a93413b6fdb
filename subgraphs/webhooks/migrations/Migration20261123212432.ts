import { Migration } from '@mikro-orm/migrations';

export class Migration20261123212432 extends Migration {

  override name = 'Migration20261123212432';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "webhooks";`);
    this.addSql(`create table "webhooks"."webhook_deliveries" ("id" uuid not null, "org_id" varchar(128) not null, "subscription_id" uuid not null, "event_id" uuid not null, "event_type" varchar(64) not null, "resource_key" varchar(340) not null, "source_seq" bigint not null, "payload" text not null, "status" text not null, "attempts" int not null default 0, "next_attempt_at" timestamptz not null, "locked_until" timestamptz null, "last_attempt_at" timestamptz null, "last_response_status" int null, "last_error" text null, "delivered_at" timestamptz null, "attempt_log" jsonb not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_due_index" on "webhooks"."webhook_deliveries" ("status", "next_attempt_at");`);
    this.addSql(`create index "webhook_deliveries_order_index" on "webhooks"."webhook_deliveries" ("subscription_id", "resource_key", "source_seq");`);
    this.addSql(`create index "webhook_deliveries_log_index" on "webhooks"."webhook_deliveries" ("org_id", "subscription_id", "created_at");`);
    this.addSql(`alter table "webhooks"."webhook_deliveries" add constraint "webhook_deliveries_subscription_event_unique" unique ("subscription_id", "event_id");`);

    this.addSql(`create table "webhooks"."webhook_subscriptions" ("id" uuid not null, "org_id" varchar(128) not null, "url" varchar(2048) not null, "event_types" jsonb not null, "description" varchar(255) null, "secret" varchar(100) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "webhook_subscriptions_org_created_index" on "webhooks"."webhook_subscriptions" ("org_id", "created_at");`);

    this.addSql(`alter table "webhooks"."webhook_deliveries" add constraint "webhook_deliveries_status_check" check ("status" in ('PENDING', 'SUCCEEDED', 'FAILED'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "webhooks"."webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhooks"."webhook_subscriptions" cascade;`);

    this.addSql(`drop schema if exists "webhooks";`);
  }

}
