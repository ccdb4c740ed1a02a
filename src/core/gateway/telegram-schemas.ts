// zod schemas for the parts of Telegram Bot API `Update` objects the gateway reads.
import { z } from 'zod';

const Int = z.number().int();

export const TgUserSchema = z.looseObject({
  id: Int,
  is_bot: z.boolean().optional(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
  language_code: z.string().optional(),
});
export type TgUser = z.infer<typeof TgUserSchema>;

export const TgChatSchema = z.looseObject({
  id: Int,
  type: z.string().min(1),
  title: z.string().optional(),
  username: z.string().optional(),
  first_name: z.string().optional(),
  last_name: z.string().optional(),
});
export type TgChat = z.infer<typeof TgChatSchema>;

export const TgEntitySchema = z.looseObject({
  type: z.string().min(1),
  offset: Int.nonnegative(),
  length: Int.nonnegative(),
  url: z.string().optional(),
  user: TgUserSchema.optional(),
});
export type TgEntity = z.infer<typeof TgEntitySchema>;

const FileId = z.string().min(1);
export const TgFileSchema = z.looseObject({
  file_id: FileId,
  file_unique_id: z.string().optional(),
  file_size: z.number().optional(),
  mime_type: z.string().optional(),
  file_name: z.string().optional(),
});
export type TgFile = z.infer<typeof TgFileSchema>;
const PhotoSizeSchema = TgFileSchema.extend({ width: Int, height: Int });

export const TgMessageSchema = z.looseObject({
  message_id: Int,
  date: Int,
  chat: TgChatSchema,
  from: TgUserSchema.optional(),
  sender_chat: TgChatSchema.optional(),
  message_thread_id: Int.optional(),
  is_topic_message: z.boolean().optional(),
  edit_date: Int.optional(),
  text: z.string().optional(),
  caption: z.string().optional(),
  entities: z.array(TgEntitySchema).optional(),
  caption_entities: z.array(TgEntitySchema).optional(),
  photo: z.array(PhotoSizeSchema).min(1).optional(),
  document: TgFileSchema.optional(),
  audio: TgFileSchema.optional(),
  voice: TgFileSchema.optional(),
  video: TgFileSchema.optional(),
  animation: TgFileSchema.optional(),
  video_note: TgFileSchema.optional(),
  sticker: TgFileSchema.optional(),
  new_chat_members: z.array(TgUserSchema).min(1).optional(),
  left_chat_member: TgUserSchema.optional(),
  reply_to_message: z.looseObject({ message_id: Int }).optional(),
});
export type TgMessage = z.infer<typeof TgMessageSchema>;

export const TgCallbackQuerySchema = z.looseObject({
  id: z.string().min(1),
  from: TgUserSchema,
  message: z.looseObject({ message_id: Int, chat: TgChatSchema, message_thread_id: Int.optional() }).optional(),
  inline_message_id: z.string().optional(),
  chat_instance: z.string().optional(),
  data: z.string().optional(),
  game_short_name: z.string().optional(),
});

export const TgInlineQuerySchema = z.looseObject({
  id: z.string().min(1),
  from: TgUserSchema,
  query: z.string(),
  offset: z.string().optional(),
  chat_type: z.string().optional(),
});

const MemberSchema = z.looseObject({ status: z.string().min(1), user: TgUserSchema, is_member: z.boolean().optional() });
export const TgChatMemberUpdatedSchema = z.looseObject({
  chat: TgChatSchema,
  from: TgUserSchema,
  date: Int,
  old_chat_member: MemberSchema,
  new_chat_member: MemberSchema,
});
export type TgChatMember = z.infer<typeof MemberSchema>;

export const TgJoinRequestSchema = z.looseObject({
  chat: TgChatSchema,
  from: TgUserSchema,
  user_chat_id: Int.optional(),
  date: Int,
  bio: z.string().optional(),
});

const ReactionSchema = z.looseObject({ type: z.string().min(1), emoji: z.string().optional(), custom_emoji_id: z.string().optional() });
export const TgReactionUpdatedSchema = z.looseObject({
  chat: TgChatSchema,
  message_id: Int,
  user: TgUserSchema.optional(),
  actor_chat: TgChatSchema.optional(),
  date: Int,
  old_reaction: z.array(ReactionSchema),
  new_reaction: z.array(ReactionSchema),
});
export type TgReaction = z.infer<typeof ReactionSchema>;

export const TgUpdateHeadSchema = z.looseObject({ update_id: Int });
export const TgGetUpdatesSchema = z.looseObject({ ok: z.literal(true), result: z.array(z.unknown()) });
