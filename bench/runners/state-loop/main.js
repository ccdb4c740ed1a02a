// Benchmark runner: times ctx.config.calls sequential state.get round trips and reports per-call latencies.
import { definePlugin, defineRunner } from 'lbot/sdk';

export default definePlugin({
  runners: {
    default: defineRunner({
      async *run(ctx, api) {
        const n = Number(ctx.config.calls ?? 2000);
        await api.state.get('conversation', 'warmup');
        const samples = [];
        for (let i = 0; i < n; i++) {
          const t = performance.now();
          await api.state.get('conversation', 'k');
          samples.push(performance.now() - t);
        }
        yield { type: 'message.completed', data: { message: { role: 'assistant', content: JSON.stringify(samples) } } };
        yield { type: 'run.completed', data: {} };
      },
    }),
  },
});
