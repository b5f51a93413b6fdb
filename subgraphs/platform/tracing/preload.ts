/**
 * Preloaded by every start command (`node --import ./subgraphs/platform/tracing/preload.ts ...`),
 * so the OpenTelemetry SDK and its instrumentations are in place before the modules they patch
 * load. With tracing off (see switch.ts) it imports nothing more.
 */
import { tracingEnabled } from './switch.ts';

if (tracingEnabled(process.env)) await import('./sdk.ts');
