// `lbot` from tsc's output (dist/cli.js, one file per module) instead of the bundle bin/lbot.js runs: for
// tests about which of lbot's own modules a command line loads.
const { main } = await import(new URL('../../dist/cli.js', import.meta.url).href);
await main(process.argv);
