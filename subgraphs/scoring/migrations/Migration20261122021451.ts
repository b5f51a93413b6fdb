import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021451 extends Migration {

  override name = 'Migration20261122021451';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "scoring";`);
    this.addSql(`create table "scoring"."mvr_records" ("id" uuid not null, "org_id" varchar(128) not null, "user_id" varchar(255) not null, "source" text not null, "seq" bigserial, "report_ciphertext" bytea not null, "key_id" varchar(32) not null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "mvr_records_user_seq_idx" on "scoring"."mvr_records" ("org_id", "user_id", "seq");`);

    this.addSql(`create table "scoring"."users" ("id" uuid not null, "org_id" varchar(128) not null, "user_id" varchar(255) not null, "date_of_birth" varchar(10) null, "home_zip" varchar(10) null, "enrollment_status" text not null default 'pending', "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "scoring"."users" add constraint "users_org_user_unique" unique ("org_id", "user_id");`);

    this.addSql(`alter table "scoring"."mvr_records" add constraint "mvr_records_source_check" check ("source" in ('SOURCE_A', 'SOURCE_B'));`);

    this.addSql(`alter table "scoring"."users" add constraint "users_enrollment_status_check" check ("enrollment_status" in ('accepted', 'pending', 'rejected'));`);

    // Every MVR belongs to a user of the same organisation.
    this.addSql(`alter table "scoring"."mvr_records" add constraint "mvr_records_user_fk" foreign key ("org_id", "user_id") references "scoring"."users" ("org_id", "user_id");`);
    // MVR records are append-only: the database refuses any update.
    this.addSql(`create function "scoring"."mvr_records_immutable"() returns trigger language plpgsql as $$ begin raise exception 'MVR records are never updated'; end; $$;`);
    this.addSql(`create trigger "mvr_records_no_update" before update on "scoring"."mvr_records" for each row execute function "scoring"."mvr_records_immutable"();`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "scoring"."mvr_records" cascade;`);
    this.addSql(`drop function if exists "scoring"."mvr_records_immutable"();`);
    this.addSql(`drop table if exists "scoring"."users" cascade;`);

    this.addSql(`drop schema if exists "scoring";`);
  }

}
