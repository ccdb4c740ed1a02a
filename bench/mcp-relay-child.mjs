// Helper of bench/mcp.mjs: a process between an MCP client and its stdio server, the least a host in that path
// can be. `bytes` forwards the bytes both ways untouched; `lines` also parses every JSON-RPC line and encodes it
// again, the least a host that checks what crosses it must do. Usage: mcp-relay-child.mjs bytes|lines CMD ARGS...
import { spawn } from 'node:child_process';
import { readJsonLines } from './json-lines.mjs';

const [mode, command, ...args] = process.argv.slice(2);
if ((mode !== 'bytes' && mode !== 'lines') || !command) {
  console.error('usage: mcp-relay-child.mjs bytes|lines CMD [ARGS...]');
  process.exit(2);
}
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });

/** Copies src to dst, in `lines` mode one line at a time through JSON.parse and JSON.stringify. */
function relay(src, dst) {
  if (mode === 'bytes') src.on('data', (chunk) => dst.write(chunk));
  else readJsonLines(src, (message) => dst.write(`${JSON.stringify(message)}\n`));
}
relay(process.stdin, server.stdin);
relay(server.stdout, process.stdout);
process.stdin.on('end', () => server.kill());
server.on('exit', (code) => process.exit(code ?? 0));
