import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020613 extends Migration {

  override name = 'Migration20261122020613';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "platform";`);
    this.addSql(`create table "platform"."clients" ("id" uuid not null, "client_id" varchar(128) not null, "secret_hash" varchar(255) not null, "organisation" varchar(128) not null, "scopes" text[] not null, "disabled" boolean not null default false, "created_at" timestamptz not null, "secret_rotated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "platform"."clients" add constraint "clients_client_id_unique" unique ("client_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "platform"."clients" cascade;`);

    this.addSql(`drop schema if exists "platform";`);
  }

}
