import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021227 extends Migration {

  override name = 'Migration20261122021227';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "booking";`);
    // Added by hand: the exclusion constraint bookings_no_overlap compares org_id and vin with = in a
    // GiST index, which needs btree_gist (PostgreSQL ships it as a trusted extension; PGlite loads it).
    this.addSql(`create extension if not exists btree_gist with schema public;`);
    this.addSql(`create table "booking"."bookings" ("id" uuid not null, "org_id" varchar(128) not null, "booking_id" varchar(255) not null, "vin" varchar(17) not null, "user_id" varchar(255) not null, "device_id" varchar(64) not null, "start_timestamp" bigint not null, "estimated_end_timestamp" bigint null, "actual_end_timestamp" bigint null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "bookings_org_vin_start_index" on "booking"."bookings" ("org_id", "vin", "start_timestamp");`);
    this.addSql(`create index "bookings_org_user_start_index" on "booking"."bookings" ("org_id", "user_id", "start_timestamp");`);
    this.addSql(`create index "bookings_org_start_index" on "booking"."bookings" ("org_id", "start_timestamp");`);
    this.addSql(`alter table "booking"."bookings" add constraint "bookings_org_booking_unique" unique ("org_id", "booking_id");`);

    this.addSql(`create table "booking"."vehicles" ("id" uuid not null, "org_id" varchar(128) not null, "vin" varchar(17) not null, "device_id" varchar(64) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "booking"."vehicles" add constraint "vehicles_org_vin_unique" unique ("org_id", "vin");`);
    this.addSql(`alter table "booking"."vehicles" add constraint "vehicles_org_device_unique" unique ("org_id", "device_id");`);

    this.addSql(`alter table "booking"."bookings" add constraint "bookings_estimated_end_after_start" check (estimated_end_timestamp is null or estimated_end_timestamp > start_timestamp);`);
    this.addSql(`alter table "booking"."bookings" add constraint "bookings_actual_end_after_start" check (actual_end_timestamp is null or actual_end_timestamp > start_timestamp);`);
    this.addSql(`alter table "booking"."bookings" add constraint "bookings_no_overlap" exclude using gist (org_id with =, vin with =, int8range(start_timestamp, coalesce(actual_end_timestamp, estimated_end_timestamp)) with &&);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "booking"."bookings" cascade;`);
    this.addSql(`drop table if exists "booking"."vehicles" cascade;`);

    this.addSql(`drop schema if exists "booking";`);
  }

}
