// Answers a server's form elicitation on the terminal: one question per field, Enter keeps the
// default, Ctrl-C declines. Field labels come from the server and are printed without control characters.
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { printable, type ElicitationPrompt } from './client-capabilities.js';

const FieldSchema = z.looseObject({
  type: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  enum: z.array(z.string()).optional(),
});

const MAX_FIELDS = 50;

export const terminalPrompt: ElicitationPrompt = async (server, message, schema) => {
  // An ES-only package, imported where it is used: the CLI's bundle is CommonJS (src/cli-loader.ts).
  const { isCancel, select, text } = await import('@clack/prompts');
  process.stderr.write(`\nMCP server ${printable(server)} asks: ${message}\n`);
  const content: NonNullable<ElicitResult['content']> = {};
  for (const [key, raw] of Object.entries(schema.properties).slice(0, MAX_FIELDS)) {
    const field = FieldSchema.safeParse(raw);
    if (!field.success) continue;
    const f = field.data;
    const label = printable(`${f.title ?? key}${f.description ? ` (${f.description})` : ''}`, 300);
    const required = schema.required?.includes(key) ?? false;
    let answer: unknown;
    if (f.enum || f.type === 'boolean') {
      const options = f.enum
        ? f.enum.map((v) => ({ value: v, label: printable(v, 200) }))
        : [
            { value: 'true', label: 'yes' },
            { value: 'false', label: 'no' },
          ];
      answer = await select({ message: label, options, ...(f.default !== undefined ? { initialValue: String(f.default) } : {}) });
      if (!isCancel(answer) && f.type === 'boolean') answer = answer === 'true';
    } else {
      const numeric = f.type === 'number' || f.type === 'integer';
      answer = await text({
        message: label,
        ...(f.default !== undefined ? { defaultValue: String(f.default), placeholder: String(f.default) } : {}),
        validate: (v) => {
          if (!v && required && f.default === undefined) return 'required';
          if (v && numeric && !Number.isFinite(Number(v))) return 'a number';
          return undefined;
        },
      });
      if (!isCancel(answer) && typeof answer === 'string') {
        if (answer === '') answer = undefined;
        else if (numeric) answer = Number(answer);
      }
    }
    if (isCancel(answer)) return { action: 'decline' };
    if (typeof answer === 'string' || typeof answer === 'number' || typeof answer === 'boolean') content[key] = answer;
  }
  // Fields left empty get the server's defaults (the SDK applies them to the accepted content).
  return { action: 'accept', content };
};
