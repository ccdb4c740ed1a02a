// The stable event types the gateway emits (runner-protocol.md §3.2 plus a few lbot additions).
export const GATEWAY_EVENT_TYPES = [
  'message.received',
  'message.edited',
  'message.recalled',
  'reaction.added',
  'group.member_joined',
  'member.left',
  'bot.added',
  'bot.removed',
  'friend.request_received',
  'friend.added',
  'group.request_received',
  'interaction.invoked',
] as const;

export type GatewayEventType = (typeof GATEWAY_EVENT_TYPES)[number];
