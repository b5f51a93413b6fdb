import { Migration } from '@mikro-orm/migrations';

export class Migration20261122020609 extends Migration {

  override name = 'Migration20261122020609';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "scoring";`);
    this.addSql(`create table "scoring"."users" ("id" uuid not null, "org_id" varchar(128) not null, "user_id" varchar(255) not null, "date_of_birth" varchar(10) null, "home_zip" varchar(10) null, "enrollment_status" text not null default 'pending', "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "scoring"."users" add constraint "users_org_user_unique" unique ("org_id", "user_id");`);

    this.addSql(`alter table "scoring"."users" add constraint "users_enrollment_status_check" check ("enrollment_status" in ('accepted', 'pending', 'rejected'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "scoring"."users" cascade;`);

    this.addSql(`drop schema if exists "scoring";`);
  }

}
