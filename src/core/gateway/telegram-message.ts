// Telegram `Message` content: text or caption, entities, and media as platform file references.
import type { Actor, ArtifactRef, ContentElement, JsonObject } from '../protocol/event.js';
import { compact, platformArtifact, textContent, userActor } from './envelope-draft.js';
import type { TgChat, TgEntity, TgFile, TgMessage, TgUser } from './telegram-schemas.js';

const MEDIA_KEYS = ['photo', 'document', 'audio', 'voice', 'video', 'animation', 'video_note', 'sticker'] as const;
const ARTIFACT_TYPE: Record<(typeof MEDIA_KEYS)[number], string> = {
  photo: 'image',
  document: 'file',
  audio: 'audio',
  voice: 'voice',
  video: 'video',
  animation: 'video',
  video_note: 'video',
  sticker: 'sticker',
};

/** Content keys that make a message worth routing as `message.received`. */
export const CONTENT_KEYS = [
  'text',
  'caption',
  ...MEDIA_KEYS,
  'location',
  'venue',
  'contact',
  'poll',
  'dice',
  'game',
  'story',
  'invoice',
  'paid_media',
] as const;

export type TelegramInput = {
  contents: ContentElement[];
  attachments: ArtifactRef[];
  entities: TgEntity[];
  mentions: string[];
  command: string | null;
};

/** Reads the text, entities and files of a message; nothing is downloaded. */
export function readTelegramMessage(msg: TgMessage): TelegramInput {
  const text = msg.text ?? msg.caption ?? null;
  const entities = msg.text !== undefined ? (msg.entities ?? []) : (msg.caption_entities ?? []);
  const contents: ContentElement[] = text === null ? [] : [textContent(text)];
  const attachments: ArtifactRef[] = [];
  for (const key of MEDIA_KEYS) {
    const file = key === 'photo' ? largestPhoto(msg.photo) : msg[key];
    if (file) attachments.push(fileRef(ARTIFACT_TYPE[key], file));
  }
  const mentions: string[] = [];
  let command: string | null = null;
  for (const e of entities) {
    // Offsets are UTF-16 code units, which is how JavaScript indexes strings.
    const slice = text === null ? '' : text.slice(e.offset, e.offset + e.length);
    if (e.type === 'mention') mentions.push(slice);
    else if (e.type === 'text_mention' && e.user) mentions.push(String(e.user.id));
    else if (e.type === 'bot_command' && e.offset === 0) command = slice;
  }
  return { contents, attachments, entities, mentions, command };
}

function largestPhoto(sizes: TgMessage['photo']): TgFile | undefined {
  if (!sizes) return undefined;
  return sizes.reduce((best, s) => (s.width * s.height > best.width * best.height ? s : best));
}

function fileRef(artifactType: string, file: TgFile): ArtifactRef {
  return platformArtifact('telegram', {
    artifact_type: artifactType,
    id: file.file_id,
    name: file.file_name ?? null,
    mime_type: file.mime_type ?? null,
    size: file.file_size ?? null,
  });
}

/** `First Last`, the way Telegram clients show a user. */
export function displayName(user: TgUser): string {
  return user.last_name ? `${user.first_name} ${user.last_name}` : user.first_name;
}

/** An actor for a Telegram user account. */
export function telegramUserActor(user: TgUser): Actor {
  return userActor(user.id, displayName(user), compact({ username: user.username, language_code: user.language_code }), user.is_bot ? 'bot' : 'user');
}

/** The sender of a message: the user, else the chat posting on its own behalf (channels, anonymous admins). */
export function messageActor(msg: TgMessage): Actor | null {
  if (msg.from) return telegramUserActor(msg.from);
  const chat: TgChat | undefined = msg.sender_chat ?? (msg.chat.type === 'channel' ? msg.chat : undefined);
  return chat ? userActor(chat.id, chat.title ?? null, compact({ username: chat.username }), 'channel') : null;
}

export function conversationOf(chat: TgChat): string {
  return `telegram:chat:${chat.id}`;
}

export function threadOf(chat: TgChat, threadId: number | undefined): string | null {
  return threadId === undefined ? null : `telegram:chat:${chat.id}:thread:${threadId}`;
}

/** Where a reply to this message goes. */
export function messageReplyTarget(msg: TgMessage): JsonObject {
  return compact({ chat_id: String(msg.chat.id), message_id: String(msg.message_id), message_thread_id: msg.message_thread_id });
}
