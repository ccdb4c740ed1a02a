// OneBot v11 message bodies: CQ-code strings and segment arrays, turned into contents and attachments.
import { z } from 'zod';
import type { ArtifactRef, ContentElement, JsonObject } from '../protocol/event.js';
import { platformArtifact, textContent } from './envelope-draft.js';
import { parsePayload, type PayloadPath } from './payload-parse.js';

const NUMERIC_ID = 'expected a numeric id (an integer, or a string of digits)';
export const OneBotIdSchema = z.union([z.number().int(), z.string().regex(/^\d+$/, NUMERIC_ID)], { error: NUMERIC_ID });

const SegmentSchema = z.looseObject({ type: z.string().min(1), data: z.record(z.string(), z.unknown()).nullable().default({}) });
export const OneBotMessageSchema = z.union([z.string(), z.array(SegmentSchema)]);
export type OneBotMessage = z.infer<typeof OneBotMessageSchema>;

type Segment = { type: string; data: Record<string, string | number | boolean | null> };

const TextData = z.looseObject({ text: z.string() });
const MediaData = z.looseObject({ file: z.string().min(1), url: z.string().optional() });
const FileData = z.looseObject({ file: z.string().min(1), url: z.string().optional(), name: z.string().optional() });
const AtData = z.looseObject({ qq: z.union([z.string().min(1), z.number()]) });

const MEDIA_TYPES: Record<string, string> = { image: 'image', record: 'voice', video: 'video', file: 'file' };

export type OneBotInput = {
  contents: ContentElement[];
  attachments: ArtifactRef[];
  message_chain: JsonObject[];
  mentions: string[];
};

/** Reads a message (CQ-code string or segment array) found at `path`; segments we read are validated. */
export function readOneBotMessage(message: OneBotMessage, path: PayloadPath): OneBotInput {
  const segments = typeof message === 'string' ? parseCqString(message) : message.map(toSegment);
  const out: OneBotInput = { contents: [], attachments: [], message_chain: [], mentions: [] };
  segments.forEach((seg, i) => {
    // A CQ string is one field, so problems inside it point at the string itself.
    const at: PayloadPath = typeof message === 'string' ? path : [...path, i, 'data'];
    out.message_chain.push({ type: seg.type, data: seg.data });
    if (seg.type === 'text') {
      out.contents.push(textContent(parsePayload('onebot', TextData, seg.data, at).text));
    } else if (seg.type === 'at') {
      out.mentions.push(String(parsePayload('onebot', AtData, seg.data, at).qq));
    } else if (seg.type in MEDIA_TYPES) {
      const data = parsePayload('onebot', seg.type === 'file' ? FileData : MediaData, seg.data, at);
      const artifactType = MEDIA_TYPES[seg.type] ?? 'file';
      const name = 'name' in data && typeof data.name === 'string' ? data.name : null;
      out.attachments.push(platformArtifact('onebot', { artifact_type: artifactType, id: data.file, url: data.url ?? null, name }));
      if (artifactType === 'image' && data.url) out.contents.push({ type: 'image_url', image_url: { url: data.url } });
    }
  });
  return out;
}

function toSegment(raw: { type: string; data: Record<string, unknown> | null }): Segment {
  const data: Segment['data'] = {};
  for (const [k, v] of Object.entries(raw.data ?? {})) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || v === null) data[k] = v;
  }
  return { type: raw.type, data };
}

const CQ_CODE = /\[CQ:([A-Za-z0-9_.-]+)((?:,[^\]]*)?)\]/g;

/** Splits a CQ-code string into segments (OneBot v11 "CQ 码"), undoing its escapes. */
export function parseCqString(message: string): Segment[] {
  const segments: Segment[] = [];
  let last = 0;
  for (const m of message.matchAll(CQ_CODE)) {
    if (m.index > last) segments.push({ type: 'text', data: { text: unescapeCq(message.slice(last, m.index)) } });
    const data: Segment['data'] = {};
    for (const pair of (m[2] ?? '').split(',').slice(1)) {
      const eq = pair.indexOf('=');
      if (eq > 0) data[pair.slice(0, eq)] = unescapeCq(pair.slice(eq + 1));
    }
    segments.push({ type: m[1] ?? 'unknown', data });
    last = m.index + m[0].length;
  }
  if (last < message.length) segments.push({ type: 'text', data: { text: unescapeCq(message.slice(last)) } });
  return segments;
}

function unescapeCq(text: string): string {
  return text.replaceAll('&#91;', '[').replaceAll('&#93;', ']').replaceAll('&#44;', ',').replaceAll('&amp;', '&');
}
