// One sender per platform lbot replies on.
import type { DeliveryPlatform } from '../accounts.js';
import { discordSender } from './discord.js';
import { httpBotSender } from './http-bot.js';
import { larkSender } from './lark.js';
import { onebotSender } from './onebot.js';
import { slackSender } from './slack.js';
import { telegramSender } from './telegram.js';
import type { PlatformSender } from './types.js';

export const SENDERS: Record<DeliveryPlatform, PlatformSender> = {
  telegram: telegramSender,
  slack: slackSender,
  discord: discordSender,
  lark: larkSender,
  onebot: onebotSender,
  http: httpBotSender,
};
export type { Outcome, OutboundRequest, PlatformAnswer, PlatformSender } from './types.js';
export { larkTokenRequest, readLarkToken } from './lark.js';
