import { describe, expect, it } from 'vitest';
import { PostgreSqlPlatform } from '@mikro-orm/postgresql';
import pg from 'pg';
import { escapeLiteral, useFastLiterals, type WritesLiterals } from '../../subgraphs/platform/db/literals.ts';

const ALPHABET = ["'", '\\', '"', 'a', 'é', '😀', '\n', '\t', ' ', 'E', '$'];
const randomText = (n: number) => Array.from({ length: n }, () => ALPHABET[Math.floor(Math.random() * ALPHABET.length)]).join('');

describe('string literals', () => {
  it("are written as MikroORM's platform and pg write them, for any text", () => {
    const platform = new PostgreSqlPlatform() as unknown as WritesLiterals;
    const texts = ['', "'", '\\', "it's", 'C:\\path', "a'b\\c", JSON.stringify({ note: "it's \\ \"quoted\"" }),
      ...Array.from({ length: 500 }, (_, i) => randomText(i % 40))];
    for (const text of texts) {
      expect(escapeLiteral(text)).toBe(platform.escapeLiteral(text));
      expect(escapeLiteral(text)).toBe(pg.Client.prototype.escapeLiteral(text));
    }
  });

  it("replace the platform's own in every statement it formats", () => {
    const platform = new PostgreSqlPlatform();
    useFastLiterals(platform);
    expect((platform as unknown as WritesLiterals).escapeLiteral).toBe(escapeLiteral);
    expect(platform.formatQuery('select ? as a, ? as b', ["it's", 'back\\slash'])).toBe("select 'it''s' as a,  E'back\\\\slash' as b");
  });
});
