// Bootstrap of an `execution.node` plugin: `node plugin-main.js <module>` imports the module's
// definePlugin default export and serves the lbot protocol on stdin/stdout.
import { runtime } from './runtime-loader.js';

runtime.servePlugin(process.argv[2], (url) => import(url));
