// Everything a plugin process runs, as one module: the SDK runner authors import (lbot/sdk) and the two
// bootstraps that serve the protocol. The build makes it one CommonJS file with a V8 code cache
// (sdk/runtime-loader); lbot/sdk, sdk/plugin-main and the `lbot dev` standby bootstrap are its entry points.
export * from './index.js';
export { servePlugin, serveStandby, type ImportModule } from './plugin-process.js';
