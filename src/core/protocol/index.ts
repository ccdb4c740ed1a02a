// The wire contract: every protocol schema and type, re-exported from one place.
export * from './runner-id.js';
export * from './manifest.js';
export * from './event.js';
export * from './binding.js';
export * from './context.js';
export * from './results.js';
export * from './proxy.js';
export * from './wire.js';
export * from './peer.js';
export * from './error-value.js';
export * from './result-line.js';
export * from './lines.js';
