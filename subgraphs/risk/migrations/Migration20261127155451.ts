import { Migration } from '@mikro-orm/migrations';

/** Batch scoring: jobs (an organisation's, kept 7 days) and their input rows with each row's result. */
export class Migration20261127155451 extends Migration {

  override name = 'Migration20261127155451';

  override up(): void | Promise<void> {
    this.addSql(`create table "risk"."risk_batches" ("id" uuid not null, "org_id" varchar(128) not null, "client_id" varchar(128) not null, "status" text not null, "total" int not null, "processed" int not null default 0, "failed_rows" int not null default 0, "busy_ms" bigint not null default '0', "error" varchar(500) null, "runner" varchar(64) null, "lease_until" timestamptz null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "risk_batches_client_idx" on "risk"."risk_batches" ("client_id");`);
    this.addSql(`create index "risk_batches_expires_idx" on "risk"."risk_batches" ("expires_at");`);
    this.addSql(`create index "risk_batches_status_idx" on "risk"."risk_batches" ("status", "created_at");`);
    this.addSql(`alter table "risk"."risk_batches" add constraint "risk_batches_status_check" check ("status" in ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'));`);

    // Deleted with their job (pruning after 7 days).
    this.addSql(`create table "risk"."risk_batch_rows" ("batch_id" uuid not null references "risk"."risk_batches" ("id") on delete cascade, "seq" int not null, "row_id" varchar(200) not null, "wkt" text null, "radius" double precision null, "done" boolean not null default false, "risk_index" double precision null, "crashes" int null, "fatalities" int null, "area_km2" double precision null, "error" varchar(500) null, primary key ("batch_id", "seq"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "risk"."risk_batch_rows" cascade;`);
    this.addSql(`drop table if exists "risk"."risk_batches" cascade;`);
  }

}
