import { Migration } from '@mikro-orm/migrations';

/** Sandbox organisations (docs/sandbox.md): `<ORG>-sandbox`, each linked to its live organisation; sandbox clients. */
export class Migration20261127160000 extends Migration {

  override name = 'Migration20261127160000';

  override up(): void | Promise<void> {
    this.addSql(`create table "platform"."sandbox_organisations" ("organisation" varchar(128) not null, "live_organisation" varchar(128) not null, "created_at" timestamptz not null, primary key ("organisation"));`);
    this.addSql(`alter table "platform"."sandbox_organisations" add constraint "sandbox_organisations_live_organisation_unique" unique ("live_organisation");`);
    this.addSql(`alter table "platform"."clients" add column "sandbox" boolean not null default false;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "platform"."clients" drop column "sandbox";`);
    this.addSql(`drop table if exists "platform"."sandbox_organisations" cascade;`);
  }

}
