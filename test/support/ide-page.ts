/** Driving the IDE (GraphiQL 5 at GET /graphql) in a browser as an analyst does: its Monaco editors and buttons. */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { watchedPage } from './browser.ts';

/**
 * The whole text of a Monaco editor of the page (Monaco renders only the visible lines): selected and
 * copied as a user would, read from the clipboard (the page's context must allow it).
 */
export async function editorText(page: Page, where: string): Promise<string> {
  await page.locator(`${where} .monaco-editor:visible`).first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Control+C');
  return page.evaluate('navigator.clipboard.readText()') as Promise<string>;
}
export const responseText = (page: Page) => editorText(page, '.graphiql-response');
export const queryText = (page: Page) => editorText(page, '.graphiql-query-editor');

/** Replaces the content of a Monaco editor of the page. */
export async function fill(page: Page, where: string, text: string) {
  await page.locator(`${where} .monaco-editor:visible`).first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

export async function fillVariables(page: Page, text: string) {
  await page.locator('.graphiql-editor-tools').getByRole('button', { name: 'Variables', exact: true }).click();
  await fill(page, '.graphiql-editor-tool', text);
}

/** A browser context whose pages may use the clipboard (to read editors, and copied links). */
export const clipboardContext = (browser: Browser) => browser.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });

/** The IDE at `url` in a new watched page (CSP violations recorded), once its query editor shows. */
export async function openIde(context: BrowserContext, url: string) {
  const watched = await watchedPage(context);
  await watched.page.goto(url, { waitUntil: 'load' });
  await watched.page.locator('.graphiql-query-editor .view-lines').waitFor();
  return watched;
}

export const runOperation = (page: Page) => page.locator('.graphiql-execute-button').click();

/** Opens the Sign in panel unless it shows. */
export async function showSignIn(page: Page) {
  if (!(await page.locator('.ide-sign-in').first().isVisible())) await page.getByRole('button', { name: 'Show Sign in' }).click();
}

/**
 * Installs Playwright's fake clock: time stands until a test moves it. Its fake `performance` lists no
 * entries, yet Monaco's keystroke-latency tracker reads the first entry of a measure it just made, and
 * would throw inside a timer that `fastForward` runs; here every name lists one entry of no duration.
 */
export async function installClock(page: Page) {
  await page.clock.install();
  const entries = 'performance.getEntriesByName = (name) => [{ name, entryType: "measure", startTime: 0, duration: 0 }]';
  await page.context().addInitScript(entries);
  await page.evaluate(entries);
}
