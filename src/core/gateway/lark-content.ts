// Lark/Feishu message `content` (a JSON string whose shape depends on message_type) → contents and attachments.
import { z } from 'zod';
import type { ArtifactRef, ContentElement } from '../protocol/event.js';
import { tryParseJson } from '../json.js';
import { platformArtifact, textContent } from './envelope-draft.js';
import { invalidPayload, parsePayload, type PayloadPath } from './payload-parse.js';

const TextSchema = z.looseObject({ text: z.string() });
const ImageSchema = z.looseObject({ image_key: z.string().min(1) });
const FileSchema = z.looseObject({ file_key: z.string().min(1), file_name: z.string().optional() });
const PostElementSchema = z.looseObject({
  tag: z.string().min(1),
  text: z.string().optional(),
  user_name: z.string().optional(),
  image_key: z.string().optional(),
  file_key: z.string().optional(),
});
const PostSchema = z.looseObject({ title: z.string().optional(), content: z.array(z.array(PostElementSchema)) });

export type LarkInput = { contents: ContentElement[]; attachments: ArtifactRef[] };

/** Reads the content string at `path` for a message of `messageType`. */
export function readLarkContent(messageType: string, content: string, path: PayloadPath): LarkInput {
  const parsed = tryParseJson(content);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalidPayload('lark', path, 'is not a JSON object encoded as a string, as Lark sends message content');
  }
  const out: LarkInput = { contents: [], attachments: [] };
  const file = (artifactType: string, id: string, name?: string): void => {
    out.attachments.push(platformArtifact('lark', { artifact_type: artifactType, id, name: name ?? null }));
  };
  switch (messageType) {
    case 'text':
      out.contents.push(textContent(parsePayload('lark', TextSchema, parsed, path).text));
      break;
    case 'image':
      file('image', parsePayload('lark', ImageSchema, parsed, path).image_key);
      break;
    case 'file':
    case 'audio':
    case 'media':
    case 'sticker': {
      const f = parsePayload('lark', FileSchema, parsed, path);
      file({ file: 'file', audio: 'voice', media: 'video', sticker: 'sticker' }[messageType], f.file_key, f.file_name);
      break;
    }
    case 'post':
      readPost(parsePayload('lark', PostSchema, parsed, path), out, file);
      break;
    default:
      break;
  }
  return out;
}

function readPost(post: z.infer<typeof PostSchema>, out: LarkInput, file: (type: string, id: string) => void): void {
  if (post.title) out.contents.push(textContent(`${post.title}\n`));
  post.content.forEach((paragraph, i) => {
    if (i > 0) out.contents.push(textContent('\n'));
    for (const el of paragraph) {
      if (el.tag === 'img' && el.image_key) file('image', el.image_key);
      else if (el.tag === 'media' && el.file_key) file('video', el.file_key);
      else if (el.tag === 'at') out.contents.push(textContent(`@${el.user_name ?? ''}`));
      else if (el.text !== undefined) out.contents.push(textContent(el.text));
    }
  });
}
