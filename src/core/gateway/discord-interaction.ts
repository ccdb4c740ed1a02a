// Discord interactions (HTTP bodies or INTERACTION_CREATE dispatches): commands, components and modals.
import type { JsonObject, Subject } from '../protocol/event.js';
import { platformDelivery } from './delivery.js';
import { EMPTY_INPUT, compact, effectiveBotId, finishEvent, platformEventId } from './envelope-draft.js';
import { channelConversation, discordActor, snowflakeSeconds } from './discord-common.js';
import { DcCommandDataSchema, DcComponentDataSchema, DcInteractionSchema } from './discord-schemas.js';
import { invalidPayload, parsePayload, type PayloadPath } from './payload-parse.js';
import type { NormalizeOptions, NormalizeResult } from './types.js';

const COMMAND_KINDS: Record<number, string> = { 1: 'slash', 2: 'user', 3: 'message' };
const INTERACTION_KINDS: Record<number, string> = { 2: 'command', 3: 'component', 5: 'modal_submit' };

/** Normalizes one interaction found at `base` inside the payload. */
export function normalizeInteraction(value: unknown, base: PayloadPath, raw: unknown, opts: NormalizeOptions): NormalizeResult {
  const it = parsePayload('discord', DcInteractionSchema, value, base);
  // PING is Discord checking the endpoint; the route answers PONG.
  if (it.type === 1) return { kind: 'challenge', platform: 'discord', response: { type: 1 } };
  if (it.type === 4)
    return { kind: 'ignored', platform: 'discord', reason: 'discord autocomplete interactions must be answered inline within 3 s; not routed' };
  const interactionKind = INTERACTION_KINDS[it.type];
  if (interactionKind === undefined) return { kind: 'ignored', platform: 'discord', reason: `discord interaction type ${it.type} is not routed` };
  const user = it.member?.user ?? it.user;
  if (!user) throw invalidPayload('discord', [...base, 'member'], 'is missing (an interaction names its user in member.user or user)');
  if (!it.data) throw invalidPayload('discord', [...base, 'data'], 'is missing (command, component and modal interactions carry data)');
  const subject = interactionKind === 'command' ? commandSubject(it.data, [...base, 'data']) : componentSubject(it.data, [...base, 'data'], interactionKind);
  const botId = effectiveBotId(opts, it.application_id ? `discord:${it.application_id}` : null);
  return finishEvent(
    'discord',
    {
      event_id: platformEventId('discord', botId, ['interaction', it.id]),
      event_type: 'interaction.invoked',
      event_time: snowflakeSeconds(it.id),
      source_event_type: 'INTERACTION_CREATE',
      bot_id: botId,
      conversation_id: it.channel_id ? channelConversation(it.channel_id) : null,
      thread_id: null,
      actor: discordActor(user, it.member?.nick),
      subject,
      input: EMPTY_INPUT,
      // The interaction token (needed to answer) stays in the raw payload only; it is a credential.
      delivery: platformDelivery('discord', compact({ interaction_id: it.id, application_id: it.application_id, channel_id: it.channel_id })),
      data: compact({ interaction: interactionKind, guild_id: it.guild_id, channel_id: it.channel_id }),
    },
    raw,
    opts,
  );
}

function commandSubject(data: unknown, path: PayloadPath): Subject {
  const cmd = parsePayload('discord', DcCommandDataSchema, data, path);
  const target = cmd.target_id ? cmd.resolved?.messages?.[cmd.target_id] : undefined;
  const targetMessage: JsonObject | undefined =
    target && cmd.target_id ? compact({ id: cmd.target_id, content: target.content, author_id: target.author?.id }) : undefined;
  return {
    subject_type: 'command',
    subject_id: cmd.name,
    data: compact({
      command_id: cmd.id,
      command_type: COMMAND_KINDS[cmd.type] ?? String(cmd.type),
      options: cmd.options,
      target_id: cmd.target_id,
      target_message: targetMessage,
    }),
  };
}

function componentSubject(data: unknown, path: PayloadPath, kind: string): Subject {
  const c = parsePayload('discord', DcComponentDataSchema, data, path);
  return {
    subject_type: kind === 'component' ? 'component' : 'modal',
    subject_id: c.custom_id,
    data: compact({ component_type: c.component_type, values: c.values }),
  };
}
