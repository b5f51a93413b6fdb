import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021709 extends Migration {

  override name = 'Migration20261122021709';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "roadside";`);
    this.addSql(`create table "roadside"."provider_files" ("content_id" varchar(64) not null, "org_id" varchar(128) not null, "req_id" varchar(64) null, "member_id" varchar(128) null, "file_type" varchar(32) not null, "file_name" varchar(255) not null, "content_type" varchar(128) not null, "size" int not null, "sha256" varchar(64) not null, "data" bytea not null, "created_at" timestamptz not null, primary key ("content_id"));`);
    this.addSql(`create index "provider_files_req_id_index" on "roadside"."provider_files" ("req_id");`);
    this.addSql(`create index "provider_files_member_id_index" on "roadside"."provider_files" ("member_id");`);

    this.addSql(`create table "roadside"."assets" ("id" uuid not null, "org_id" varchar(128) not null, "partner_code" varchar(64) not null, "member_id" varchar(128) not null, "asset_integration_id" varchar(128) not null, "make" varchar(64) null, "model" varchar(128) null, "year" int null, "vin" varchar(17) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "assets_vin_index" on "roadside"."assets" ("vin");`);
    this.addSql(`alter table "roadside"."assets" add constraint "assets_org_partner_member_asset_unique" unique ("org_id", "partner_code", "member_id", "asset_integration_id");`);

    this.addSql(`create table "roadside"."feedback" ("id" uuid not null, "org_id" varchar(128) not null, "req_id" varchar(64) not null, "rating" int not null, "comment" varchar(2000) null, "created_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "roadside"."feedback" add constraint "feedback_org_req_unique" unique ("org_id", "req_id");`);

    this.addSql(`create table "roadside"."members" ("id" uuid not null, "org_id" varchar(128) not null, "partner_code" varchar(64) not null, "member_id" varchar(128) not null, "product_type" varchar(64) not null, "first_name" varchar(128) not null, "last_name" varchar(128) not null, "address1" varchar(255) null, "address2" varchar(255) null, "city" varchar(128) null, "state" varchar(2) null, "zip" varchar(10) null, "email_address" varchar(255) null, "phone" varchar(32) null, "company_name" varchar(255) null, "effective_end_date" varchar(10) null, "miles_per_tow" double precision null, "number_of_events" int null, "partner_pay" boolean not null default false, "service_weight" varchar(16) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "roadside"."members" add constraint "members_org_partner_member_unique" unique ("org_id", "partner_code", "member_id");`);

    this.addSql(`create table "roadside"."plans" ("plan_code" varchar(64) not null, "name" varchar(255) not null, "max_claim_count" int not null, "service_max_claims" jsonb not null, "fuel_qty" double precision not null, "fuel_qty_unit" varchar(16) not null, "tow_miles" double precision not null, "tow_to_dealership_required" boolean not null default false, primary key ("plan_code"));`);

    this.addSql(`create table "roadside"."providers" ("provider_id" varchar(64) not null, "name" varchar(255) not null, "phone" varchar(32) not null, "metro" varchar(64) not null, "state" varchar(2) not null, "latitude" double precision not null, "longitude" double precision not null, "coverage_miles" double precision not null, "services" text[] not null, "time_zone" varchar(64) not null, "opens_at" varchar(5) null, "closes_at" varchar(5) null, "drivers" text[] not null, "active" boolean not null default true, primary key ("provider_id"));`);

    this.addSql(`create table "roadside"."rescues" ("req_id" varchar(64) not null, "org_id" varchar(128) not null, "session_id" varchar(64) not null, "member_ref" uuid null, "service" text not null, "status" text not null, "pay_per_use" boolean not null, "claim_consumed" boolean not null, "customer" jsonb not null, "vehicle" jsonb not null, "disablement" jsonb not null, "destination" jsonb null, "details" jsonb not null, "cost" jsonb not null, "provider_id" varchar(64) not null, "driver_name" varchar(128) not null, "provider_latitude" double precision not null, "provider_longitude" double precision not null, "eta_at" timestamptz not null, "cancel_reason" varchar(500) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("req_id"));`);
    this.addSql(`create index "rescues_session_id_index" on "roadside"."rescues" ("session_id");`);
    this.addSql(`create index "rescues_member_ref_index" on "roadside"."rescues" ("member_ref");`);

    this.addSql(`create table "roadside"."sessions" ("session_id" varchar(64) not null, "org_id" varchar(128) not null, "app_id" varchar(128) not null, "benefits" jsonb not null, "other_info" jsonb not null, "pay_per_use" boolean not null default false, "member_ref" uuid null, "created_at" timestamptz not null, primary key ("session_id"));`);

    this.addSql(`create table "roadside"."status_events" ("id" uuid not null, "org_id" varchar(128) not null, "req_id" varchar(64) not null, "status" text not null, "latitude" double precision null, "longitude" double precision null, "eta_minutes" int null, "note" varchar(500) null, "at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "status_events_req_id_index" on "roadside"."status_events" ("req_id");`);

    this.addSql(`create table "roadside"."tow_locations" ("location_id" varchar(64) not null, "name" varchar(255) not null, "type" text not null, "brands" text[] not null, "address1" varchar(255) not null, "city" varchar(128) not null, "state" varchar(2) not null, "zip" varchar(10) not null, "phone" varchar(32) not null, "latitude" double precision not null, "longitude" double precision not null, primary key ("location_id"));`);

    this.addSql(`create table "roadside"."vehicle_models" ("id" uuid not null, "make_key" varchar(64) not null, "make" varchar(64) not null, "model_key" varchar(128) not null, "model" varchar(128) not null, primary key ("id"));`);
    this.addSql(`create index "vehicle_models_make_key_index" on "roadside"."vehicle_models" ("make_key");`);
    this.addSql(`alter table "roadside"."vehicle_models" add constraint "vehicle_models_make_model_unique" unique ("make_key", "model_key");`);

    this.addSql(`alter table "roadside"."rescues" add constraint "rescues_service_check" check ("service" in ('TIRE', 'LOCKOUT', 'GAS', 'TOW', 'BATTERY'));`);
    this.addSql(`alter table "roadside"."rescues" add constraint "rescues_status_check" check ("status" in ('BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED', 'CANCELLED'));`);

    this.addSql(`alter table "roadside"."status_events" add constraint "status_events_status_check" check ("status" in ('BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED', 'CANCELLED'));`);

    this.addSql(`alter table "roadside"."tow_locations" add constraint "tow_locations_type_check" check ("type" in ('REPAIR_SHOP', 'DEALER'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "roadside"."provider_files" cascade;`);
    this.addSql(`drop table if exists "roadside"."assets" cascade;`);
    this.addSql(`drop table if exists "roadside"."feedback" cascade;`);
    this.addSql(`drop table if exists "roadside"."members" cascade;`);
    this.addSql(`drop table if exists "roadside"."plans" cascade;`);
    this.addSql(`drop table if exists "roadside"."providers" cascade;`);
    this.addSql(`drop table if exists "roadside"."rescues" cascade;`);
    this.addSql(`drop table if exists "roadside"."sessions" cascade;`);
    this.addSql(`drop table if exists "roadside"."status_events" cascade;`);
    this.addSql(`drop table if exists "roadside"."tow_locations" cascade;`);
    this.addSql(`drop table if exists "roadside"."vehicle_models" cascade;`);

    this.addSql(`drop schema if exists "roadside";`);
  }

}
