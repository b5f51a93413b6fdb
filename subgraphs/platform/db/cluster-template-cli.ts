/** Prepares the PGlite cluster template (see cluster-template.ts); run by `npm install` (postinstall). */
import { prepareClusterTemplate } from './cluster-template.ts';

try {
  console.log(`PGlite cluster template ready: ${await prepareClusterTemplate()}`);
} catch (error) {
  // Not fatal: a start without the template runs initdb instead.
  console.warn(`PGlite cluster template not prepared (the first start will run initdb): ${(error as Error).message}`);
}
