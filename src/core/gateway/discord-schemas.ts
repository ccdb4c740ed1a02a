// zod schemas for the Discord gateway dispatches and interaction bodies the gateway reads.
import { z } from 'zod';

export const SnowflakeSchema = z.string().regex(/^\d+$/, 'expected a Discord snowflake id (a digit string)');
const Snowflake = SnowflakeSchema;

export const DcUserSchema = z.looseObject({
  id: Snowflake,
  username: z.string(),
  global_name: z.string().nullable().optional(),
  bot: z.boolean().optional(),
});
export type DcUser = z.infer<typeof DcUserSchema>;

const AttachmentSchema = z.looseObject({
  id: Snowflake,
  filename: z.string(),
  url: z.string().optional(),
  size: z.number().optional(),
  content_type: z.string().optional(),
});

export const DcMessageSchema = z.looseObject({
  id: Snowflake,
  channel_id: Snowflake,
  guild_id: Snowflake.optional(),
  author: DcUserSchema,
  member: z.looseObject({ nick: z.string().nullable().optional() }).optional(),
  content: z.string().default(''),
  timestamp: z.string().min(1),
  edited_timestamp: z.string().nullable().optional(),
  type: z.number().int(),
  attachments: z.array(AttachmentSchema).default([]),
  mentions: z.array(z.looseObject({ id: Snowflake })).default([]),
  message_reference: z.looseObject({ message_id: Snowflake.optional() }).optional(),
});
export type DcMessage = z.infer<typeof DcMessageSchema>;

export const DcMessageDeleteSchema = z.looseObject({ id: Snowflake, channel_id: Snowflake, guild_id: Snowflake.optional() });

export const DcReactionAddSchema = z.looseObject({
  user_id: Snowflake,
  channel_id: Snowflake,
  message_id: Snowflake,
  guild_id: Snowflake.optional(),
  member: z.looseObject({ nick: z.string().nullable().optional(), user: DcUserSchema.optional() }).optional(),
  emoji: z.looseObject({ id: Snowflake.nullable().optional(), name: z.string().nullable().optional() }),
  message_author_id: Snowflake.optional(),
});

export const DcMemberAddSchema = z.looseObject({
  guild_id: Snowflake,
  user: DcUserSchema,
  nick: z.string().nullable().optional(),
  joined_at: z.string().min(1),
});

export const DcMemberRemoveSchema = z.looseObject({ guild_id: Snowflake, user: DcUserSchema });

export const DcGatewaySchema = z.looseObject({
  op: z.number().int(),
  d: z.unknown(),
  s: z.number().int().nullable().optional(),
  t: z.string().min(1).nullable().optional(),
});

const OptionSchema = z.looseObject({ name: z.string().min(1), type: z.number().int() });
export const DcInteractionSchema = z.looseObject({
  id: Snowflake,
  type: z.number().int(),
  token: z.string().min(1),
  application_id: Snowflake.optional(),
  guild_id: Snowflake.optional(),
  channel_id: Snowflake.optional(),
  member: z.looseObject({ user: DcUserSchema, nick: z.string().nullable().optional() }).optional(),
  user: DcUserSchema.optional(),
  data: z.looseObject({}).optional(),
});
export type DcInteraction = z.infer<typeof DcInteractionSchema>;

export const DcCommandDataSchema = z.looseObject({
  id: Snowflake,
  name: z.string().min(1),
  type: z.number().int().default(1),
  options: z.array(OptionSchema).optional(),
  target_id: Snowflake.optional(),
  resolved: z
    .looseObject({
      messages: z.record(z.string(), z.looseObject({ content: z.string().optional(), author: DcUserSchema.optional() })).optional(),
    })
    .optional(),
});

export const DcComponentDataSchema = z.looseObject({
  custom_id: z.string().min(1),
  component_type: z.number().int().optional(),
  values: z.array(z.string()).optional(),
});
