// Every platform fixture, what it must normalize to, and how the malformed-copy test breaks it.
import { readFileSync } from 'node:fs';
import type { GatewayEventType, Platform } from '../../../src/core/gateway/index.js';
import { isRecord } from '../../../src/core/json.js';

export const FIXTURE_ROOT = new URL('../../../fixtures/platform/', import.meta.url);

export type PayloadPath = Array<string | number>;
export const DELETE = Symbol('delete');

export type Expected =
  | { kind: 'event'; event_type: GatewayEventType; actor_id: string | null; conversation_id: string | null }
  | { kind: 'challenge'; response: Record<string, unknown> }
  | { kind: 'ignored'; reason: RegExp };

export type FixtureCase = {
  /** Path under fixtures/platform/. */
  file: string;
  platform: Exclude<Platform, 'generic'>;
  /** Turns the stored file into what the platform would POST (only where the fixture is a fragment). */
  prepare?: (payload: unknown) => unknown;
  expect: Expected;
  /** Where the malformed copy is broken, and what is put there (DELETE removes the key). */
  malformed: { path: PayloadPath; value: unknown };
};

const ev = (event_type: GatewayEventType, actor_id: string | null, conversation_id: string | null): Expected => ({
  kind: 'event',
  event_type,
  actor_id,
  conversation_id,
});

// SOURCES.md: the docs show app_mention as an inner event only; a real delivery wraps it like this.
const wrapSlack = (inner: unknown): unknown => ({
  token: 'one-long-verification-token',
  team_id: 'T061EG9R6',
  api_app_id: 'A0PNCHHK2',
  event: inner,
  type: 'event_callback',
  event_id: 'Ev0LAN670R',
  event_time: 1515449522,
});

export const FIXTURE_CASES: FixtureCase[] = [
  // OneBot v11
  {
    file: 'onebot11/group_message.nonebot.json',
    platform: 'onebot',
    expect: ev('message.received', '1', 'onebot:group:1'),
    malformed: { path: ['group_id'], value: DELETE },
  },
  {
    file: 'onebot11/private_message.nonebot.json',
    platform: 'onebot',
    expect: ev('message.received', '1', 'onebot:private:1'),
    malformed: { path: ['user_id'], value: 'abc' },
  },
  // Telegram
  {
    file: 'telegram/callback_query.nutgram.json',
    platform: 'telegram',
    expect: ev('interaction.invoked', '222222222', 'telegram:chat:222222222'),
    malformed: { path: ['callback_query', 'from'], value: DELETE },
  },
  {
    file: 'telegram/channel_post.nutgram.json',
    platform: 'telegram',
    expect: ev('message.received', '456', 'telegram:chat:456'),
    malformed: { path: ['channel_post', 'chat', 'id'], value: '456' },
  },
  {
    file: 'telegram/command_tag_valid.nutgram.json',
    platform: 'telegram',
    expect: ev('message.received', '10081232', 'telegram:chat:10081232'),
    malformed: { path: ['message', 'entities', 0, 'offset'], value: -1 },
  },
  {
    file: 'telegram/edited_message.nutgram.json',
    platform: 'telegram',
    expect: ev('message.edited', '999999999', 'telegram:chat:999999999'),
    malformed: { path: ['edited_message', 'date'], value: DELETE },
  },
  {
    file: 'telegram/entities.nutgram.json',
    platform: 'telegram',
    expect: ev('message.received', '321654', 'telegram:chat:321654'),
    malformed: { path: ['message', 'text'], value: 42 },
  },
  {
    file: 'telegram/getupdates_write_access_allowed.TelegramBots.json',
    platform: 'telegram',
    expect: ev('friend.added', '11111111', 'telegram:chat:11111111'),
    malformed: { path: ['result', 0, 'message', 'chat'], value: DELETE },
  },
  {
    file: 'telegram/group_message_bot_command.teloxide.json',
    platform: 'telegram',
    expect: ev('message.received', '5964236329', 'telegram:chat:-1001293752024'),
    malformed: { path: ['message', 'message_id'], value: DELETE },
  },
  {
    file: 'telegram/left_chat_member.nutgram.json',
    platform: 'telegram',
    expect: ev('member.left', '12345', 'telegram:chat:12345'),
    malformed: { path: ['message', 'left_chat_member', 'id'], value: 'x' },
  },
  {
    file: 'telegram/message_general_topic.nutgram.json',
    platform: 'telegram',
    expect: ev('message.received', '123456', 'telegram:chat:-1001234567489'),
    malformed: { path: ['message', 'date'], value: '2024-01-06' },
  },
  {
    file: 'telegram/message_topic.nutgram.json',
    platform: 'telegram',
    expect: ev('message.received', '123456', 'telegram:chat:-1001234567489'),
    malformed: { path: ['message', 'message_thread_id'], value: '33' },
  },
  {
    file: 'telegram/my_chat_member.nutgram.json',
    platform: 'telegram',
    expect: { kind: 'ignored', reason: /from creator to creator/ },
    malformed: { path: ['my_chat_member', 'new_chat_member', 'status'], value: DELETE },
  },
  {
    file: 'telegram/new_chat_members.nutgram.json',
    platform: 'telegram',
    expect: ev('group.member_joined', '12345', 'telegram:chat:12345'),
    malformed: { path: ['message', 'new_chat_members', 0, 'first_name'], value: null },
  },
  {
    file: 'telegram/photo.nutgram.json',
    platform: 'telegram',
    expect: ev('message.received', '11111111', 'telegram:chat:11111111'),
    malformed: { path: ['message', 'photo', 1, 'file_id'], value: DELETE },
  },
  {
    file: 'telegram/private_text.teloxide.json',
    platform: 'telegram',
    expect: ev('message.received', '408258968', 'telegram:chat:408258968'),
    malformed: { path: ['update_id'], value: '306197398' },
  },
  {
    file: 'telegram/split_callback_query.TelegramBots.json',
    platform: 'telegram',
    expect: ev('interaction.invoked', '1111111', null),
    malformed: { path: ['callback_query', 'id'], value: 4382 },
  },
  {
    file: 'telegram/split_chosen_inline_result.TelegramBots.json',
    platform: 'telegram',
    expect: { kind: 'ignored', reason: /chosen_inline_result is not routed/ },
    malformed: { path: ['update_id'], value: DELETE },
  },
  {
    file: 'telegram/split_edited_message.TelegramBots.json',
    platform: 'telegram',
    expect: ev('message.edited', '1111111', 'telegram:chat:-10000000000'),
    malformed: { path: ['edited_message', 'chat'], value: 'x' },
  },
  {
    file: 'telegram/split_inline_query.TelegramBots.json',
    platform: 'telegram',
    expect: ev('interaction.invoked', '1111111', null),
    malformed: { path: ['inline_query', 'query'], value: DELETE },
  },
  {
    file: 'telegram/split_message.TelegramBots.json',
    platform: 'telegram',
    expect: ev('message.received', '1111111', 'telegram:chat:1111111'),
    malformed: { path: ['message', 'document', 'file_id'], value: '' },
  },
  {
    file: 'telegram/text.nutgram.json',
    platform: 'telegram',
    expect: ev('message.received', '12345678', 'telegram:chat:12345678'),
    malformed: { path: ['message', 'chat', 'type'], value: DELETE },
  },
  // Slack
  {
    file: 'slack/event_callback.message.app_home.slack-docs.json',
    platform: 'slack',
    expect: ev('message.received', 'U061F7AUR', 'slack:T061EG9R6:D0PNCRP9N'),
    malformed: { path: ['event', 'channel'], value: DELETE },
  },
  {
    file: 'slack/event_callback.message.channels.slack-docs.json',
    platform: 'slack',
    expect: ev('message.received', 'U2147483697', 'slack:T061EG9R6:C024BE91L'),
    malformed: { path: ['event', 'ts'], value: 'yesterday' },
  },
  {
    file: 'slack/event_callback.message.groups.slack-docs.json',
    platform: 'slack',
    expect: ev('message.received', 'U2147483697', 'slack:T061EG9R6:G024BE91L'),
    malformed: { path: ['team_id'], value: DELETE },
  },
  {
    file: 'slack/event_callback.message.im.slack-docs.json',
    platform: 'slack',
    expect: ev('message.received', 'U2147483697', 'slack:T061EG9R6:D024BE91L'),
    malformed: { path: ['event', 'text'], value: 7 },
  },
  {
    file: 'slack/event_callback.message.mpim.slack-docs.json',
    platform: 'slack',
    expect: ev('message.received', 'U2147483697', 'slack:T061EG9R6:G024BE91L'),
    malformed: { path: ['event', 'type'], value: 12 },
  },
  {
    file: 'slack/event_callback.reaction_added.slack-events-api.json',
    platform: 'slack',
    expect: ev('reaction.added', 'U27FFLNF4', 'slack:T0JFD6M53:D2AQCJCQ2'),
    malformed: { path: ['event', 'reaction'], value: DELETE },
  },
  {
    file: 'slack/inner_event.app_mention.slack-docs.json',
    platform: 'slack',
    prepare: wrapSlack,
    expect: ev('message.received', 'U061F7AUR', 'slack:T061EG9R6:C0LAN2Q65'),
    malformed: { path: ['event', 'channel'], value: null },
  },
  {
    file: 'slack/url_verification.slack-docs.json',
    platform: 'slack',
    expect: { kind: 'challenge', response: { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' } },
    malformed: { path: ['challenge'], value: 42 },
  },
  {
    file: 'slack/url_verification.slack-events-api.json',
    platform: 'slack',
    expect: { kind: 'challenge', response: { challenge: 'valid_challenge_token' } },
    malformed: { path: ['challenge'], value: DELETE },
  },
  // Discord
  {
    file: 'discord/GUILD_MEMBER_ADD.d.serenity-1.json',
    platform: 'discord',
    expect: ev('group.member_joined', '249608457672458240', 'discord:guild:244567637332328449'),
    malformed: { path: ['user', 'id'], value: 249608457672458240 },
  },
  {
    file: 'discord/MESSAGE_CREATE.d.serenity-1.json',
    platform: 'discord',
    expect: ev('message.received', '114941315417899012', 'discord:channel:244567637332328449'),
    malformed: { path: ['channel_id'], value: DELETE },
  },
  {
    file: 'discord/MESSAGE_CREATE.d.serenity-3.json',
    platform: 'discord',
    expect: ev('message.received', '300000000000000000', 'discord:channel:100000000000000000'),
    malformed: { path: ['author', 'username'], value: null },
  },
  {
    file: 'discord/gateway_payload.example.discord-docs.json',
    platform: 'discord',
    expect: { kind: 'ignored', reason: /GATEWAY_EVENT_NAME is not routed/ },
    malformed: { path: ['t'], value: 7 },
  },
  {
    file: 'discord/interaction.message_command.discord-docs.json',
    platform: 'discord',
    expect: ev('interaction.invoked', '167348773423415296', 'discord:channel:772908445358620702'),
    malformed: { path: ['data', 'name'], value: DELETE },
  },
  {
    file: 'discord/interaction.slash_command.discord-docs.json',
    platform: 'discord',
    expect: ev('interaction.invoked', '53908232506183680', 'discord:channel:645027906669510667'),
    malformed: { path: ['id'], value: 786008729715212338 },
  },
  {
    file: 'discord/message.example.discord-docs.json',
    platform: 'discord',
    expect: ev('message.received', '53908099506183680', 'discord:channel:290926798999357250'),
    malformed: { path: ['timestamp'], value: 5 },
  },
  // Lark / Feishu
  {
    file: 'lark/im.chat.member.bot.added_v1.feishu-docs.json',
    platform: 'lark',
    expect: ev('bot.added', 'ou_84aad35d084aa403a838cf73ee18467', 'lark:chat:oc_413871888e0d5492e25b173f0812efb7'),
    malformed: { path: ['event', 'chat_id'], value: DELETE },
  },
  {
    file: 'lark/im.chat.member.user.added_v1.feishu-docs.json',
    platform: 'lark',
    expect: ev('group.member_joined', 'ou_84aad35d084aa403a838cf73ee18467', 'lark:chat:oc_413871888e0d5492e25b173f0812efb7'),
    malformed: { path: ['event', 'users'], value: [] },
  },
  {
    file: 'lark/im.message.recalled_v1.feishu-docs.json',
    platform: 'lark',
    expect: ev('message.recalled', null, 'lark:chat:oc_5ad11d72b830411d72b836c20'),
    malformed: { path: ['header', 'event_id'], value: DELETE },
  },
  {
    file: 'lark/im.message.receive_v1.feishu-docs.json',
    platform: 'lark',
    expect: ev('message.received', 'ou_84aad35d084aa403a838cf73ee18467', 'lark:chat:oc_5ce6d572455d361153b7xx51da133945'),
    malformed: { path: ['event', 'message', 'content'], value: 'not json' },
  },
];

/** The payload of a case as the platform would send it. */
export function loadCase(c: FixtureCase): unknown {
  const payload: unknown = JSON.parse(readFileSync(new URL(c.file, FIXTURE_ROOT), 'utf8'));
  return c.prepare ? c.prepare(payload) : payload;
}

/** A deep copy of `payload` with the value at `path` replaced (or removed for DELETE). */
export function mutateAt(payload: unknown, path: PayloadPath, value: unknown): unknown {
  const copy: unknown = structuredClone(payload);
  let node: unknown = copy;
  for (const key of path.slice(0, -1)) node = childOf(node, key);
  const last = path[path.length - 1];
  if (last === undefined || childOf(node, last) === undefined) throw new Error(`mutateAt: ${path.join('.')} does not exist in the fixture`);
  if (Array.isArray(node) && typeof last === 'number') {
    if (value === DELETE) node.splice(last, 1);
    else node[last] = value;
  } else if (isRecord(node) && typeof last === 'string') {
    if (value === DELETE) delete node[last];
    else node[last] = value;
  }
  return copy;
}

function childOf(node: unknown, key: string | number): unknown {
  if (Array.isArray(node) && typeof key === 'number') return node[key];
  if (isRecord(node) && typeof key === 'string') return node[key];
  return undefined;
}
