import { readFile } from 'node:fs/promises';

/** A fenced code block of a Markdown page: its info string (the language) and its text. */
export interface CodeBlock { lang: string; code: string }

/**
 * The fenced code blocks of one section of a Markdown page (from its heading to the next heading of
 * the same or a higher level), in order: what a test runs so that the page and the test cannot drift.
 */
export async function codeBlocks(page: string, heading: string): Promise<CodeBlock[]> {
  const lines = (await readFile(page, 'utf8')).split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`${page} has no "${heading}"`);
  const level = heading.match(/^#+/)![0].length;
  const blocks: CodeBlock[] = [];
  let open: CodeBlock | null = null;
  for (const line of lines.slice(start + 1)) {
    if (open) {
      if (!line.startsWith('```')) {
        open.code += `${line}\n`;
      } else {
        blocks.push(open);
        open = null;
      }
    } else if (line.startsWith('```')) {
      open = { lang: line.slice(3).trim(), code: '' };
    } else if (/^#+ /.test(line) && line.match(/^#+/)![0].length <= level) {
      break;
    }
  }
  return blocks;
}
