// Helper of bench/mcp.mjs: a process between an MCP client and its stdio server, the least a host in that path
// can be. `bytes` forwards the bytes both ways untouched; `lines` also parses every JSON-RPC line and encodes it
// again, the least a host that checks what crosses it must do. Usage: mcp-relay-child.mjs bytes|lines CMD ARGS...
import { spawn } from 'node:child_process';

const [mode, command, ...args] = process.argv.slice(2);
if ((mode !== 'bytes' && mode !== 'lines') || !command) {
  console.error('usage: mcp-relay-child.mjs bytes|lines CMD [ARGS...]');
  process.exit(2);
}
const server = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });

/** Copies src to dst, line by line through JSON.parse and JSON.stringify in `lines` mode. */
function relay(src, dst) {
  if (mode === 'bytes') {
    src.on('data', (chunk) => dst.write(chunk));
    return;
  }
  let pending = '';
  src.setEncoding('utf8');
  src.on('data', (chunk) => {
    pending += chunk;
    let end;
    while ((end = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line.trim()) dst.write(`${JSON.stringify(JSON.parse(line))}\n`);
    }
  });
}
relay(process.stdin, server.stdin);
relay(server.stdout, process.stdout);
process.stdin.on('end', () => server.kill());
server.on('exit', (code) => process.exit(code ?? 0));
