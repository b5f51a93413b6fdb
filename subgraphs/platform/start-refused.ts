/**
 * A start that must not go ahead (the data folder is held by another process, the MVR key does not
 * match the database, ...). Entry points print the message alone, without a stack, and exit non-zero
 * before anything is written.
 */
export class StartRefused extends Error {
  override name = 'StartRefused';
}

/** Runs an entry point's start; a StartRefused ends the process with its message and exit code 1. */
export async function refuseCleanly<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if (!(error instanceof StartRefused)) throw error;
    process.stderr.write(`\nRefusing to start: ${error.message}\n\n`);
    process.exit(1);
  }
}
