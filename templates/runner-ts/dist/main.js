// The runner of this plugin: answers messages, welcomes new group members, and acknowledges other events.
import { completed, definePlugin, defineRunner, message } from 'lbot/sdk';
/** The reply for one event; `ctx.config.prefix` (binding config) goes in front of it. */
export function replyFor(ctx) {
    const prefix = typeof ctx.config.prefix === 'string' ? ctx.config.prefix : '';
    const who = ctx.actor?.actor_name ?? ctx.actor?.actor_id ?? 'someone';
    if (ctx.event.event_type === 'message.received' && ctx.input.text)
        return `${prefix}You said: ${ctx.input.text}`;
    if (ctx.event.event_type === 'group.member_joined')
        return `${prefix}Welcome, ${who}!`;
    return `${prefix}Received ${ctx.event.event_type} from ${who}.`;
}
export const runner = defineRunner({
    async *run(ctx) {
        yield message(replyFor(ctx));
        yield completed();
    },
});
export default definePlugin({ runners: { default: runner } });
