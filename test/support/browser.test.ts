/**
 * The browser tests' Chromium provisions what a fresh machine lacks. This machine has the system
 * libraries and fonts, so the fallbacks are exercised directly: the packaged library folder alone
 * resolves what the binary links against, and the packaged fonts alone render text.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { chromiumExecutable, launchBrowser, missingLibraries, packagedLibraries } from './browser.ts';

const SHIPPED = ['libnss3.so', 'libnssutil3.so', 'libnspr4.so', 'libplc4.so', 'libplds4.so', 'libexpat.so.1'];

describe('packaged Chromium prerequisites', () => {
  it('the shared libraries shipped in the package resolve everything the binary needs, from their own folder', async () => {
    const binary = await chromiumExecutable();
    const lib = await packagedLibraries();
    const env = { ...process.env, LD_LIBRARY_PATH: lib };
    const { stdout } = await promisify(execFile)('ldd', [binary], { env });
    expect(stdout).not.toContain('not found');
    // Each library the system packages would provide comes from the packaged folder instead.
    for (const name of SHIPPED) expect(stdout).toMatch(new RegExp(`^\\s*${name.replaceAll('.', '\\.')} => ${lib}/${name.replaceAll('.', '\\.')} `, 'm'));
    expect(await missingLibraries(binary, env)).toEqual([]);
  });

  let browser: Browser | undefined;
  afterAll(async () => { await browser?.close(); });

  it('renders text with only the packaged fonts (a machine without fonts)', async () => {
    browser = await launchBrowser({ systemFonts: false });
    const page = await browser.newPage();
    // A string expression: the project compiles without the DOM library.
    const [narrow, wide] = await page.evaluate<[number, number]>(`(() => {
      const context = document.createElement('canvas').getContext('2d');
      context.font = '20px sans-serif';
      return [context.measureText('iiiiii').width, context.measureText('WWWWWW').width];
    })()`);
    // Without any font, glyphs have no width at all; with tofu boxes every glyph has the same width.
    expect(narrow).toBeGreaterThan(0);
    expect(wide).toBeGreaterThan(narrow * 2);
  });
});
