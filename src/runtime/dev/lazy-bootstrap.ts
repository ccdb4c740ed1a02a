// Bootstrap of `execution.node` plugins under `lbot dev`: like sdk/plugin-main, but the runner module is
// imported when the first protocol line arrives, not at process start (sdk/plugin-process, serveStandby).
import { runtime } from '../../sdk/runtime-loader.js';

runtime.serveStandby(process.argv[2], (url) => import(url));
