import { Migration } from '@mikro-orm/migrations';

/**
 * Trusted documents (issue 40): manifests published for an owner (an API client or an issuer
 * registration), their documents, each owner's mode, and the change log every gateway process polls.
 */
export class Migration20261127122623 extends Migration {

  override name = 'Migration20261127122623';

  override up(): void | Promise<void> {
    this.addSql(`create table "platform"."trusted_document_changes" ("seq" bigserial primary key, "owner_kind" text not null, "owner_id" varchar(128) not null, "changed_at" timestamptz not null);`);

    this.addSql(`create table "platform"."trusted_documents" ("id" uuid not null, "manifest_id" uuid not null, "document_id" varchar(256) not null, "body" text not null, "body_hash" varchar(64) not null, "operation_name" varchar(256) null, primary key ("id"));`);
    this.addSql(`alter table "platform"."trusted_documents" add constraint "trusted_documents_manifest_document_unique" unique ("manifest_id", "document_id");`);

    this.addSql(`create table "platform"."trusted_manifests" ("id" uuid not null, "owner_kind" text not null, "owner_id" varchar(128) not null, "name" varchar(200) null, "format" text not null, "document_count" int not null, "published_at" timestamptz not null, "retired_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "trusted_manifests_owner_index" on "platform"."trusted_manifests" ("owner_kind", "owner_id");`);

    this.addSql(`create table "platform"."trusted_document_modes" ("id" uuid not null, "owner_kind" text not null, "owner_id" varchar(128) not null, "mode" text not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`alter table "platform"."trusted_document_modes" add constraint "trusted_document_modes_owner_unique" unique ("owner_kind", "owner_id");`);

    this.addSql(`alter table "platform"."trusted_document_changes" add constraint "trusted_document_changes_owner_kind_check" check ("owner_kind" in ('client', 'issuer'));`);

    this.addSql(`alter table "platform"."trusted_manifests" add constraint "trusted_manifests_owner_kind_check" check ("owner_kind" in ('client', 'issuer'));`);
    this.addSql(`alter table "platform"."trusted_manifests" add constraint "trusted_manifests_format_check" check ("format" in ('apollo', 'codegen'));`);

    this.addSql(`alter table "platform"."trusted_document_modes" add constraint "trusted_document_modes_owner_kind_check" check ("owner_kind" in ('client', 'issuer'));`);
    this.addSql(`alter table "platform"."trusted_document_modes" add constraint "trusted_document_modes_mode_check" check ("mode" in ('off', 'audit', 'enforce'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "platform"."trusted_document_changes" cascade;`);
    this.addSql(`drop table if exists "platform"."trusted_documents" cascade;`);
    this.addSql(`drop table if exists "platform"."trusted_manifests" cascade;`);
    this.addSql(`drop table if exists "platform"."trusted_document_modes" cascade;`);
  }

}
