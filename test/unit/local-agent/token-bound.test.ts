// The local agent's byte bound must never be under the host's real count, or a context over budget would be
// sent uncounted: checked against the host's counting with each real encoding, on texts that tokenize badly.
import { describe, expect, it } from 'vitest';
import type { Message } from 'lbot/sdk';
import { ModelConfigSchema } from '../../../src/core/config.js';
import { countTokens, TOKENIZER_NAMES } from '../../../src/runtime/models/tokens.js';
import { textBound, tokenBound } from '../../../runners/local-agent/src/tokens.js';
import type { LlmTool } from '../../../runners/local-agent/src/model-call.js';

/** Texts where tokens per byte run high: one character a token, scripts outside the merges, odd code points. */
const HARD_TEXTS = [
  '',
  'a',
  ' ',
  '\n\n\n\t\t  \r\n',
  '0123456789'.repeat(7),
  '!@#$%^&*()_+-=[]{}|;:\'",.<>/?`~'.repeat(3),
  'ĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĲĳĴĵĶķĸĹĺĻļĽľĿŀŁł',
  '中文的分词和英文不一样，每个字可能是一个或多个标记。',
  'ᚠᛇᚻ᛫ᛒᛦᚦ᛫ᚠᚱᚩᚠᚢᚱ᛫ᚠᛁᚱᚪ᛫ᚷᛖᚻᚹᛦᛚᚳᚢᛗ',
  '👩‍👩‍👧‍👦🏳️‍🌈🇺🇳👍🏽'.repeat(4),
  'e\u0301\u0302\u0303\u0304 a\u0308\u0323',
  '\ud800 lone \udfff surrogates \ud83d',
  '\u0000\u0001\u0002\u007f\u0085\u200b\u200d\ufeff',
  'x'.repeat(1000),
  'The quick brown fox jumps over the lazy dog. '.repeat(20),
];

/** Messages of every shape the host counts: plain, parts, names, tool calls and tool answers. */
function messagesOf(text: string): Message[] {
  return [
    { role: 'system', content: text },
    {
      role: 'user',
      name: text.slice(0, 8) || null,
      content: [
        { type: 'text', text },
        { type: 'text', text: text.slice(3) },
      ],
    },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ q: text }) } }],
    },
    { role: 'tool', tool_call_id: 'call_1', content: text },
  ];
}

const tools: LlmTool[] = [{ name: 'lookup', description: 'looks up ✓ 検索', parameters: { type: 'object', properties: { q: { type: 'string' } } } }];

describe('the local agent token bound', () => {
  it.each(TOKENIZER_NAMES)('is never under the host count with %s', async (tokenizer) => {
    const model = ModelConfigSchema.parse({ id: 'm', provider: 'openai', base_url: 'http://127.0.0.1:1/v1', model: 'any', tokenizer });
    for (const text of HARD_TEXTS) {
      for (const [messages, withTools] of [
        [messagesOf(text), tools],
        [messagesOf(text).slice(0, 1), []],
        [[], tools],
      ] as const) {
        const { tokens } = await countTokens(model, { messages: [...messages], tools: [...withTools] });
        expect(tokenBound(messages, withTools), `${tokenizer}: ${JSON.stringify(text.slice(0, 20))}`).toBeGreaterThanOrEqual(tokens);
      }
      const { tokens } = await countTokens(model, { text, messages: [], tools: [] });
      expect(textBound(text), `${tokenizer} text: ${JSON.stringify(text.slice(0, 20))}`).toBeGreaterThanOrEqual(tokens);
    }
  });

  it('counts nothing for nothing', () => {
    expect(tokenBound([], [])).toBe(0);
    expect(textBound('')).toBe(0);
  });
});
