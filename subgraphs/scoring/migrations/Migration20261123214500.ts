import { Migration } from '@mikro-orm/migrations';

/**
 * MVR key state: the key new records are written with and its check value (mvr/keyring-db.ts).
 * Records stay append-only, except re-encryption under another key (`npm run mvr -- rotate-key`),
 * which must change the ciphertext and the key id and nothing else.
 */
export class Migration20261123214500 extends Migration {

  override name = 'Migration20261123214500';

  override up(): void | Promise<void> {
    this.addSql(`create table "scoring"."mvr_key_state" ("id" int not null check ("id" = 1), "key_id" varchar(32) not null, "check_value" varchar(64) not null, "updated_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "mvr_records_key_idx" on "scoring"."mvr_records" ("key_id");`);
    this.addSql(`create or replace function "scoring"."mvr_records_immutable"() returns trigger language plpgsql as $$ begin
      if new.key_id is distinct from old.key_id and new.report_ciphertext is distinct from old.report_ciphertext
        and (new.id, new.org_id, new.user_id, new.source, new.seq, new.created_at) is not distinct from (old.id, old.org_id, old.user_id, old.source, old.seq, old.created_at)
      then return new; end if;
      raise exception 'MVR records are never updated';
    end; $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create or replace function "scoring"."mvr_records_immutable"() returns trigger language plpgsql as $$ begin raise exception 'MVR records are never updated'; end; $$;`);
    this.addSql(`drop index if exists "scoring"."mvr_records_key_idx";`);
    this.addSql(`drop table if exists "scoring"."mvr_key_state";`);
  }

}
