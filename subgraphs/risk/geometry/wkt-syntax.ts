/**
 * Where WKT text first goes wrong. `@terraformer/wkt` (a jison parser) says only "Parse error on
 * line 1" with a caret under an excerpt; this walks the same grammar (its tokens: numbers as
 * `-?digits[.digits][e[+-]digits]`, the keywords, `(`, `)`, `,`) and names the first token it
 * cannot take, by its character offset in the text as sent.
 */

export interface WktSyntaxProblem {
  /** 0-based character offset of the first token the grammar cannot take. */
  offset: number;
  /** That token (or "end of input"). */
  found: string;
  /** What the grammar takes there. */
  expected: string;
  /** Up to 20 characters either side of the offset. */
  near: string;
}

const NUMBER = /-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const WORD = /[A-Za-z]+\b/y;
const OTHER = /[^\s(),]{1,20}/y;
const SPACE = /\s*/y;
const TYPES = ['POINT', 'LINESTRING', 'POLYGON', 'MULTIPOINT', 'MULTILINESTRING', 'MULTIPOLYGON', 'GEOMETRYCOLLECTION'];
const DIMENSIONS = ['Z', 'M', 'ZM'];
const NEAR = 20;

class Failure extends Error {
  readonly problem: Omit<WktSyntaxProblem, 'near'>;
  constructor(problem: Omit<WktSyntaxProblem, 'near'>) {
    super(problem.expected);
    this.problem = problem;
  }
}

type Token = { kind: 'number' | 'word' | 'punct' | 'end' | 'other'; text: string; offset: number };

class Cursor {
  private at = 0;
  private readonly text: string;
  constructor(text: string) { this.text = text; }

  peek(): Token {
    SPACE.lastIndex = this.at;
    SPACE.exec(this.text);
    const offset = SPACE.lastIndex;
    if (offset >= this.text.length) return { kind: 'end', text: '', offset };
    const c = this.text[offset];
    if (c === '(' || c === ')' || c === ',') return { kind: 'punct', text: c, offset };
    for (const [kind, re] of [['number', NUMBER], ['word', WORD], ['other', OTHER]] as const) {
      re.lastIndex = offset;
      const m = re.exec(this.text);
      if (m) return { kind, text: m[0], offset };
    }
    return { kind: 'other', text: c, offset };
  }

  take(token: Token) { this.at = token.offset + token.text.length; }

  fail(expected: string): never {
    const t = this.peek();
    throw new Failure({ offset: t.offset, found: t.kind === 'end' ? 'end of input' : t.text, expected });
  }

  punct(p: string, expected = `'${p}'`) {
    const t = this.peek();
    if (t.kind !== 'punct' || t.text !== p) this.fail(expected);
    this.take(t);
  }

  /** Takes `p` when it comes next. */
  maybe(p: string): boolean {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === p) { this.take(t); return true; }
    return false;
  }

  keyword(words: string[]): string | null {
    const t = this.peek();
    const word = t.kind === 'word' ? t.text.toUpperCase() : '';
    if (!words.includes(word)) return null;
    this.take(t);
    return word;
  }

  number(expected = 'a number') {
    const t = this.peek();
    if (t.kind !== 'number') this.fail(expected);
    this.take(t);
  }

  /** 2 to 4 numbers; returns how many, so a list's "expected" can say another number was possible. */
  coordinate(): number {
    this.number('a coordinate (a number)');
    this.number('a second number (a position needs longitude and latitude)');
    let n = 2;
    while (n < 4 && this.peek().kind === 'number') { this.number(); n++; }
    return n;
  }

  /** `item (',' item)* ')'`; an item returning its count of numbers lets the message offer another one. */
  list(item: () => number | void) {
    for (;;) {
      const dims = item();
      if (this.maybe(',')) continue;
      this.punct(')', typeof dims === 'number' && dims < 4 ? "a number, ',' or ')'" : "',' or ')'");
      return;
    }
  }

  ring = () => { this.punct('(', "'(' opening a list of positions"); this.list(() => this.coordinate()); };
  polygon = () => { this.punct('(', "'(' opening a polygon's rings"); this.list(this.ring); };
  point = () => {
    if (!this.maybe('(')) return this.coordinate();
    this.coordinate();
    this.punct(')', "')' closing the point");
  };

  geometry = () => {
    const type = this.keyword(TYPES);
    if (!type) this.fail(`a geometry type (${TYPES.join(', ')})`);
    this.keyword(DIMENSIONS);
    if (this.keyword(['EMPTY'])) return;
    this.punct('(', "'(' or EMPTY");
    switch (type) {
      case 'POINT': this.coordinate(); this.punct(')', "a number or ')'"); return;
      case 'LINESTRING': return this.list(() => this.coordinate());
      case 'POLYGON': case 'MULTILINESTRING': return this.list(this.ring);
      case 'MULTIPOINT': return this.list(this.point);
      case 'MULTIPOLYGON': return this.list(this.polygon);
      default: return this.list(this.geometry);
    }
  };

  end() {
    if (this.peek().kind !== 'end') this.fail('end of input');
  }
}

/** The first syntax problem of `text`, or null when the grammar takes it whole. */
export function wktSyntaxProblem(text: string): WktSyntaxProblem | null {
  const cursor = new Cursor(text);
  try {
    cursor.geometry();
    cursor.end();
    return null;
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    const { offset, found, expected } = error.problem;
    const from = Math.max(0, offset - NEAR);
    const to = Math.min(text.length, offset + NEAR);
    const near = `${from > 0 ? '…' : ''}${text.slice(from, to)}${to < text.length ? '…' : ''}`;
    return { offset, found, expected, near };
  }
}
