import { Migration } from '@mikro-orm/migrations';

/** Trusted OpenID Connect issuers (gateway/auth/issuers.ts): one organisation per (issuer, audience). */
export class Migration20261127122704 extends Migration {

  override name = 'Migration20261127122704';

  override up(): void | Promise<void> {
    this.addSql(`create table "platform"."issuers" ("id" varchar(64) not null, "issuer" varchar(2048) not null, "audience" varchar(255) not null, "organisation" varchar(128) not null, "user_claim" varchar(64) not null, "scopes_claim" varchar(64) null, "scope_map" jsonb null, "scopes" text[] not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "platform"."issuers" add constraint "issuers_issuer_audience_unique" unique ("issuer", "audience");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "platform"."issuers" cascade;`);
  }

}
