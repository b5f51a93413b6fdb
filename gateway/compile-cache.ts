/**
 * Preloaded by `npm start` (`node --import ./gateway/compile-cache.ts`): keeps V8's compiled code of
 * every module (TypeScript already stripped) in Node's on-disk compile cache, so a restart does not
 * parse and compile the gateway, the subgraphs and their libraries again (about half of the import
 * time). NODE_COMPILE_CACHE chooses the folder (default: the OS temporary folder); NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
import { enableCompileCache } from 'node:module';

enableCompileCache();
