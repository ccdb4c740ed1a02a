// Helper of bench/serve.mjs: the floor, a bare fastify answering POST /v1/runs with a body the size of a
// run's answer, in a process of its own like `lbot serve`. Prints its URL as one JSON line on stdout.
import Fastify from 'fastify';

const sample = JSON.stringify({ run_id: '00000000-0000-4000-8000-000000000000', status: 'completed', error: null, reply: 'ping' });
const app = Fastify({ logger: false });
app.post('/v1/runs', async () => sample);
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${app.server.address().port}` })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
