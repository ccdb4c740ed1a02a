// Small Discord helpers shared by the dispatch and interaction normalizers.
import type { Actor } from '../protocol/event.js';
import { userActor } from './envelope-draft.js';
import type { DcUser } from './discord-schemas.js';

const DISCORD_EPOCH_MS = 1420070400000n;

/** Epoch seconds encoded in a snowflake id (its top 42 bits are milliseconds since 2015-01-01). */
export function snowflakeSeconds(id: string): number {
  return Number(((BigInt(id) >> 22n) + DISCORD_EPOCH_MS) / 1000n);
}

/** The actor for a Discord account, named the way the client shows it (nickname, display name, username). */
export function discordActor(user: DcUser, nick?: string | null): Actor {
  return userActor(user.id, nick ?? user.global_name ?? user.username, { username: user.username }, user.bot ? 'bot' : 'user');
}

export function channelConversation(channelId: string): string {
  return `discord:channel:${channelId}`;
}

export function guildConversation(guildId: string): string {
  return `discord:guild:${guildId}`;
}
