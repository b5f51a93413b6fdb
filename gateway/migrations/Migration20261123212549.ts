import { Migration } from '@mikro-orm/migrations';

export class Migration20261123212549 extends Migration {

  override name = 'Migration20261123212549';

  override up(): void | Promise<void> {
    this.addSql(`create table "platform"."idempotency_keys" ("id" uuid not null, "client_id" varchar(128) not null, "organisation" varchar(128) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "state" text not null, "locked_at" timestamptz not null, "status" int null, "headers" jsonb null, "body_ciphertext" bytea null, "key_id" varchar(32) null, "created_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "idempotency_keys_expires_at_index" on "platform"."idempotency_keys" ("expires_at");`);
    this.addSql(`alter table "platform"."idempotency_keys" add constraint "idempotency_keys_client_org_key_unique" unique ("client_id", "organisation", "key");`);

    this.addSql(`alter table "platform"."idempotency_keys" add constraint "idempotency_keys_state_check" check ("state" in ('in_progress', 'done'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "platform"."idempotency_keys" cascade;`);
  }

}
