// Benchmark runner: times ctx.config.calls sequential models.invoke calls and reports per-call latencies.
import { definePlugin, defineRunner } from 'lbot/sdk';

export default definePlugin({
  runners: {
    default: defineRunner({
      async *run(ctx, api) {
        const n = Number(ctx.config.calls ?? 500);
        const args = { model_id: ctx.config.model, messages: [{ role: 'user', content: 'ping' }] };
        const warmup = Number(ctx.config.warmup ?? 20);
        for (let i = 0; i < warmup; i++) await api.models.invoke(args);
        const samples = [];
        for (let i = 0; i < n; i++) {
          const t = performance.now();
          await api.models.invoke(args);
          samples.push(performance.now() - t);
        }
        yield { type: 'message.completed', data: { message: { role: 'assistant', content: JSON.stringify(samples) } } };
        yield { type: 'run.completed', data: {} };
      },
    }),
  },
});
