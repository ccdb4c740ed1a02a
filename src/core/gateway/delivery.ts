// What each platform surface can do with a reply: the `delivery` block of the envelope.
import type { Delivery, JsonObject } from '../protocol/event.js';
import type { Platform } from './types.js';

type SurfaceCaps = Pick<Delivery, 'supports_streaming' | 'supports_edit' | 'supports_reaction' | 'max_message_size'> & {
  streaming_mode: 'edit' | 'none';
};

// Streaming on IM platforms means editing one sent message as the reply grows, so it follows supports_edit.
const CAPS: Record<Platform, SurfaceCaps> = {
  onebot: { supports_streaming: false, supports_edit: false, supports_reaction: false, max_message_size: null, streaming_mode: 'none' },
  telegram: { supports_streaming: true, supports_edit: true, supports_reaction: true, max_message_size: 4096, streaming_mode: 'edit' },
  slack: { supports_streaming: true, supports_edit: true, supports_reaction: true, max_message_size: 40000, streaming_mode: 'edit' },
  discord: { supports_streaming: true, supports_edit: true, supports_reaction: true, max_message_size: 2000, streaming_mode: 'edit' },
  lark: { supports_streaming: true, supports_edit: true, supports_reaction: true, max_message_size: null, streaming_mode: 'edit' },
  generic: { supports_streaming: false, supports_edit: false, supports_reaction: false, max_message_size: null, streaming_mode: 'none' },
};

/** The delivery block for a platform event; `replyTarget` is null when there is nothing to answer to. */
export function platformDelivery(platform: Platform, replyTarget: JsonObject | null): Delivery {
  const { streaming_mode, ...caps } = CAPS[platform];
  return {
    surface: 'platform',
    reply_target: replyTarget,
    ...caps,
    platform_capabilities: { platform, streaming_mode },
  };
}
