import { Migration } from '@mikro-orm/migrations';

export class Migration20261122021435 extends Migration {

  override name = 'Migration20261122021435';

  override up(): void | Promise<void> {
    this.addSql(`create schema if not exists "risk";`);
    this.addSql(`create table "risk"."risk_crashes" ("id" varchar(40) not null, "source" text not null, "case_number" int not null, "state" smallint not null, "year" smallint not null, "month" smallint not null, "day" smallint not null, "hour" smallint null, "minute" smallint null, "hour_of_week" smallint null, "latitude" double precision not null, "longitude" double precision not null, "severity" text not null, "fatalities" smallint not null default 0, "persons" smallint null, "vehicles" smallint null, "county" int null, "city" int null, "weather" smallint null, "weather_name" varchar(80) null, "light_condition" smallint null, "light_condition_name" varchar(80) null, "functional_system" smallint null, "functional_system_name" varchar(80) null, "h3r5" varchar(16) not null, "h3r7" varchar(16) not null, "h3r9" varchar(16) not null, primary key ("id"));`);
    this.addSql(`create index "risk_crashes_h3r5_idx" on "risk"."risk_crashes" ("h3r5");`);
    this.addSql(`create index "risk_crashes_h3r7_idx" on "risk"."risk_crashes" ("h3r7");`);
    this.addSql(`create index "risk_crashes_h3r9_idx" on "risk"."risk_crashes" ("h3r9");`);

    this.addSql(`create table "risk"."risk_crash_cells" ("resolution" smallint not null, "cell" varchar(16) not null, "fatal" int not null, "injury" int not null, "pdo" int not null, "fatalities" int not null, "weighted_per_year" double precision not null, "exposure_mvkt" double precision not null, "risk_index" double precision not null, "by_year" jsonb not null, "by_hour_of_week" jsonb not null, primary key ("resolution", "cell"));`);

    this.addSql(`create table "risk"."risk_traffic_cells" ("resolution" smallint not null, "cell" varchar(16) not null, "sensors" int not null, "volume_sum" jsonb not null, "speed_volume_sum" jsonb not null, primary key ("resolution", "cell"));`);

    this.addSql(`create table "risk"."risk_traffic_observations" ("id" uuid not null, "sensor_id" varchar(64) not null, "observed_at" timestamptz not null, "latitude" double precision not null, "longitude" double precision not null, "speed_kph" double precision not null, "volume_vph" double precision null, "h3r5" varchar(16) not null, "h3r7" varchar(16) not null, "h3r9" varchar(16) not null, primary key ("id"));`);
    this.addSql(`create index "risk_observations_observed_at_idx" on "risk"."risk_traffic_observations" ("observed_at");`);
    this.addSql(`create index "risk_observations_h3r5_idx" on "risk"."risk_traffic_observations" ("h3r5");`);
    this.addSql(`create index "risk_observations_h3r7_idx" on "risk"."risk_traffic_observations" ("h3r7");`);
    this.addSql(`create index "risk_observations_h3r9_idx" on "risk"."risk_traffic_observations" ("h3r9");`);
    this.addSql(`alter table "risk"."risk_traffic_observations" add constraint "risk_observations_sensor_time_unique" unique ("sensor_id", "observed_at");`);

    this.addSql(`create table "risk"."risk_traffic_sensors" ("sensor_id" varchar(64) not null, "source" text not null, "state" smallint not null, "latitude" double precision not null, "longitude" double precision not null, "functional_system" smallint not null, "volume" jsonb not null, "speed" jsonb not null, "h3r5" varchar(16) not null, "h3r7" varchar(16) not null, "h3r9" varchar(16) not null, primary key ("sensor_id"));`);
    this.addSql(`create index "risk_sensors_h3r5_idx" on "risk"."risk_traffic_sensors" ("h3r5");`);
    this.addSql(`create index "risk_sensors_h3r7_idx" on "risk"."risk_traffic_sensors" ("h3r7");`);
    this.addSql(`create index "risk_sensors_h3r9_idx" on "risk"."risk_traffic_sensors" ("h3r9");`);

    this.addSql(`alter table "risk"."risk_crashes" add constraint "risk_crashes_source_check" check ("source" in ('sample', 'fars', 'feed'));`);
    this.addSql(`alter table "risk"."risk_crashes" add constraint "risk_crashes_severity_check" check ("severity" in ('fatal', 'injury', 'pdo'));`);

    this.addSql(`alter table "risk"."risk_traffic_sensors" add constraint "risk_traffic_sensors_source_check" check ("source" in ('sample', 'fars', 'feed'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "risk"."risk_crashes" cascade;`);
    this.addSql(`drop table if exists "risk"."risk_crash_cells" cascade;`);
    this.addSql(`drop table if exists "risk"."risk_traffic_cells" cascade;`);
    this.addSql(`drop table if exists "risk"."risk_traffic_observations" cascade;`);
    this.addSql(`drop table if exists "risk"."risk_traffic_sensors" cascade;`);

    this.addSql(`drop schema if exists "risk";`);
  }

}
