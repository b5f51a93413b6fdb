/** Results serialised once, whatever the subscriptions they go to (a shared execution's one result). */
const serialised = new WeakMap<object, string>();
const encoded = new WeakMap<object, Buffer>();
/** What stands for a pre-serialised payload in a transport's message until `fill` puts the payload in: a string no result is. */
const PLACEHOLDER = '\u0000pre-serialised:';
const PLACEHOLDER_JSON = JSON.stringify(PLACEHOLDER).slice(0, -1);
/** What may follow the payload: the end of the message object (a reserved SSE stream's), of an SSE event, or both. */
const MESSAGE_ENDS = new Set(['}', '\n\n', '}\n\n']);

/** A result's JSON, serialised on its first use and kept while the result is. */
export function serialisedResult(result: object): string {
  let json = serialised.get(result);
  if (json === undefined) {
    json = JSON.stringify(result);
    serialised.set(result, json);
  }
  return json;
}

/** A result's JSON as UTF-8, encoded on its first use and kept while the result is. */
export function serialisedBytes(result: object): Buffer {
  let bytes = encoded.get(result);
  if (bytes === undefined) {
    bytes = Buffer.from(serialisedResult(result));
    encoded.set(result, bytes);
  }
  return bytes;
}

/**
 * The pre-serialised payloads of one SSE stream. graphql-sse serialises its whole message once per
 * subscription; handed a placeholder as the payload, it serialises only the
 * message around it, and `fill` puts in the result's JSON, serialised once for every subscriber.
 */
export class PreSerialised {
  /** Payloads by their placeholder's number, until their message is written. */
  private readonly payloads = new Map<number, string>();
  private placed = 0;

  /** What the library is to put in the message as its payload. */
  placeholder(result: object): object {
    const n = this.placed++;
    this.payloads.set(n, serialisedResult(result));
    return { toJSON: () => `${PLACEHOLDER}${n}` };
  }

  /** The message the library serialised, with the payload its placeholder (its last value) stands for. */
  fill(message: string): string {
    const at = message.lastIndexOf(PLACEHOLDER_JSON);
    if (at < 0) return message;
    const end = message.indexOf('"', at + PLACEHOLDER_JSON.length);
    if (end < 0 || !MESSAGE_ENDS.has(message.slice(end + 1))) return message;
    const n = Number(message.slice(at + PLACEHOLDER_JSON.length, end));
    const payload = this.payloads.get(n);
    if (payload === undefined) return message;
    this.payloads.delete(n);
    return `${message.slice(0, at)}${payload}${message.slice(end + 1)}`;
  }
}
