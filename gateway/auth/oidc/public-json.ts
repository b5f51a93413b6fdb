import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, resolvePublicUrl, type AddressPolicy } from '../../../subgraphs/platform/public-address.ts';

/** Bytes of a discovery document or key set read at most: real ones are a few KiB. */
const MAX_BYTES = 256 * 1024;

/** Why an issuer's document could not be had; the message names the URL and the cause, never the body. */
export class IssuerFetchError extends Error {
  override name = 'IssuerFetchError';
}

/**
 * GETs a JSON document from an issuer under the address rules: the host's every address checked and
 * the connection pinned to them, redirects never followed (a 3xx is a failure), at most MAX_BYTES,
 * the whole exchange within `signal`.
 */
export async function fetchIssuerJson(raw: string, policy: AddressPolicy, signal: AbortSignal): Promise<unknown> {
  const fail = (why: string) => new IssuerFetchError(`${raw}: ${why}`);
  let url: URL;
  let addresses: Awaited<ReturnType<typeof resolvePublicUrl>>;
  try {
    url = new URL(raw);
    addresses = await Promise.race([resolvePublicUrl(url, policy), new Promise<never>((_, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    })]);
  } catch (error) {
    throw fail((error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message);
  }
  const client = url.protocol === 'https:' ? https : http;
  const body = await new Promise<string>((resolve, reject) => {
    const request = client.get(url, { lookup: pinnedLookup(addresses), headers: { accept: 'application/json' }, signal }, (response) => {
      const status = response.statusCode ?? 0;
      if (status !== 200) {
        response.destroy();
        reject(fail(status >= 300 && status < 400 ? `redirected (${status}); redirects are not followed` : `status ${status}`));
        return;
      }
      const chunks: Buffer[] = [];
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_BYTES) {
          response.destroy();
          reject(fail(`answer over ${MAX_BYTES} bytes`));
        } else chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', (error) => reject(fail(error.message)));
    });
    request.on('error', (error) => reject(fail(error.name === 'AbortError' || error.name === 'TimeoutError' ? 'timed out' : error.message)));
  });
  try {
    return JSON.parse(body);
  } catch {
    throw fail('answer is not JSON');
  }
}
