import { Migration } from '@mikro-orm/migrations';

export class Migration20261122022916 extends Migration {

  override name = 'Migration20261122022916';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "registration";`);
    // The exclusion constraint on device association periods needs btree_gist (trusted in PostgreSQL; PGlite loads it).
    this.addSql(`create extension if not exists btree_gist with schema public;`);
    this.addSql(`create table "registration"."consents" ("id" uuid not null, "org_id" varchar(128) not null, "user_id" varchar(255) not null, "type" varchar(100) not null, "version" varchar(50) not null, "action" text not null, "timestamp" timestamptz not null, "source" varchar(100) not null, "recorded_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "consents_user_type_idx" on "registration"."consents" ("org_id", "user_id", "type");`);

    this.addSql(`create table "registration"."device_associations" ("id" uuid not null, "org_id" varchar(128) not null, "device_id" varchar(255) not null, "user_id" varchar(255) null, "vehicle_id" varchar(255) null, "effective_from" date not null, "effective_to" date null, "end_reason" text null, "created_at" timestamptz not null, "ended_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "device_associations_user_idx" on "registration"."device_associations" ("org_id", "user_id");`);
    this.addSql(`create index "device_associations_vehicle_idx" on "registration"."device_associations" ("org_id", "vehicle_id");`);
    this.addSql(`create unique index "device_associations_one_open_per_device" on "registration"."device_associations" ("org_id", "device_id") where effective_to is null;`);

    this.addSql(`create table "registration"."product_registrations" ("id" uuid not null, "org_id" varchar(128) not null, "product_name" varchar(100) not null, "user_id" varchar(255) null, "vehicle_id" varchar(255) null, "status" text not null default 'enrolled', "additional_parameters" jsonb null, "registered_at" timestamptz not null, "unenrolled_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "registration"."product_registrations" add constraint "product_registrations_user_unique" unique ("org_id", "user_id", "product_name");`);
    this.addSql(`alter table "registration"."product_registrations" add constraint "product_registrations_vehicle_unique" unique ("org_id", "vehicle_id", "product_name");`);

    this.addSql(`create table "registration"."registered_devices" ("id" uuid not null, "org_id" varchar(128) not null, "device_id" varchar(255) not null, "type" text not null default 'mobile', "status" text not null default 'Active', "replaced_by_device_id" varchar(255) null, "replaces_device_id" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "registration"."registered_devices" add constraint "registered_devices_org_device_unique" unique ("org_id", "device_id");`);

    this.addSql(`create table "registration"."registered_users" ("id" uuid not null, "org_id" varchar(128) not null, "user_id" varchar(255) not null, "status" text not null default 'Active', "activation_reason" varchar(500) null, "activation_effective_date" date null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "registration"."registered_users" add constraint "registered_users_org_user_unique" unique ("org_id", "user_id");`);

    this.addSql(`create table "registration"."registered_vehicles" ("id" uuid not null, "org_id" varchar(128) not null, "vehicle_id" varchar(255) not null, "vin" varchar(17) null, "make" varchar(100) null, "model" varchar(100) null, "year" int null, "user_id" varchar(255) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "registration"."registered_vehicles" add constraint "registered_vehicles_org_vehicle_unique" unique ("org_id", "vehicle_id");`);

    this.addSql(`alter table "registration"."consents" add constraint "consents_action_check" check ("action" in ('granted', 'withdrawn'));`);
    this.addSql(`create or replace function "registration"."consents_append_only_fn"() returns trigger as $$ begin raise exception 'consent records are append-only' using errcode = 'restrict_violation'; end; $$ language plpgsql;`);
    this.addSql(`create trigger "append_only" BEFORE UPDATE OR DELETE on "registration"."consents" for each ROW execute function "registration"."consents_append_only_fn"();`);

    this.addSql(`alter table "registration"."device_associations" add constraint "device_associations_subject_check" check (user_id is not null or vehicle_id is not null);`);
    this.addSql(`alter table "registration"."device_associations" add constraint "device_associations_period_check" check (effective_to is null or effective_to >= effective_from);`);
    this.addSql(`alter table "registration"."device_associations" add constraint "device_associations_no_overlap" EXCLUDE USING gist (org_id WITH =, device_id WITH =, daterange(effective_from, effective_to, '[)'::text) WITH &&);`);
    this.addSql(`alter table "registration"."device_associations" add constraint "device_associations_end_reason_check" check ("end_reason" in ('ended', 'replaced', 'reassociated'));`);
    this.addSql(`create or replace function "registration"."device_associations_history_kept_fn"() returns trigger as $$ begin if tg_op = 'DELETE' or old.effective_to is not null or new.device_id <> old.device_id or new.org_id <> old.org_id or new.user_id is distinct from old.user_id or new.vehicle_id is distinct from old.vehicle_id or new.effective_from <> old.effective_from then raise exception 'device association history is never rewritten' using errcode = 'restrict_violation'; end if; return new; end; $$ language plpgsql;`);
    this.addSql(`create trigger "history_kept" BEFORE UPDATE OR DELETE on "registration"."device_associations" for each ROW execute function "registration"."device_associations_history_kept_fn"();`);

    this.addSql(`alter table "registration"."product_registrations" add constraint "product_registrations_subject_check" check ((user_id is null) <> (vehicle_id is null));`);
    this.addSql(`alter table "registration"."product_registrations" add constraint "product_registrations_status_check" check ("status" in ('enrolled', 'unenrolled'));`);

    this.addSql(`alter table "registration"."registered_devices" add constraint "registered_devices_type_check" check ("type" in ('mobile', 'obd'));`);
    this.addSql(`alter table "registration"."registered_devices" add constraint "registered_devices_status_check" check ("status" in ('Active', 'Inactive'));`);

    this.addSql(`alter table "registration"."registered_users" add constraint "registered_users_status_check" check ("status" in ('Active', 'Inactive'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "append_only" on "registration"."consents";`);
    this.addSql(`drop function if exists "registration"."consents_append_only_fn"();`);
    this.addSql(`drop table if exists "registration"."consents" cascade;`);
    this.addSql(`drop trigger if exists "history_kept" on "registration"."device_associations";`);
    this.addSql(`drop function if exists "registration"."device_associations_history_kept_fn"();`);
    this.addSql(`drop table if exists "registration"."device_associations" cascade;`);
    this.addSql(`drop table if exists "registration"."product_registrations" cascade;`);
    this.addSql(`drop table if exists "registration"."registered_devices" cascade;`);
    this.addSql(`drop table if exists "registration"."registered_users" cascade;`);
    this.addSql(`drop table if exists "registration"."registered_vehicles" cascade;`);

    this.addSql(`drop schema if exists "registration";`);
  }

}
