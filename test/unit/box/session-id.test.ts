// Session-id templates and the sanitiser for raw ids (box.md §2.3, §5.8; §14.5 item 43).
import { describe, expect, it } from 'vitest';
import { assertSessionId, renderSessionId, sanitizeSessionId, SESSION_ID_PATTERN } from '../../../src/core/box/session-id.js';

describe('session ids', () => {
  it('renders the default template for person and group chats and bare queries', () => {
    expect(renderSessionId('{launcher_type}_{launcher_id}', { launcher_type: 'person', launcher_id: 'test_user' })).toBe('person_test_user');
    expect(renderSessionId('{launcher_type}_{launcher_id}', { launcher_type: 'group', launcher_id: 'room-1' })).toBe('group_room-1');
    expect(renderSessionId('{launcher_type}_{launcher_id}', { query_id: 7 })).toBe('query_7');
  });

  it('fills sender_id, global and unknown placeholders', () => {
    expect(renderSessionId('{global}', {})).toBe('global');
    expect(renderSessionId('{sender_id}', { launcher_id: 'L' })).toBe('L');
    expect(renderSessionId('{launcher_type}_{launcher_id}_{conversation_id}', { launcher_type: 'person', launcher_id: 'u' })).toBe('person_u_unknown');
  });

  it('does not evaluate attribute access or format specs', () => {
    expect(renderSessionId('{query_id.__class__}', { query_id: 1 })).toMatch(SESSION_ID_PATTERN);
    expect(renderSessionId('{query_id.__class__}', { query_id: 1 })).not.toContain('class__}');
  });

  it('sanitises raw chat identifiers deterministically and keeps distinct ids distinct', () => {
    const a = sanitizeSessionId('../../etc/passwd');
    const b = sanitizeSessionId('../../etc/shadow');
    expect(a).toMatch(SESSION_ID_PATTERN);
    expect(a).not.toContain('/');
    expect(a).not.toBe(b);
    expect(sanitizeSessionId('../../etc/passwd')).toBe(a);
    expect(sanitizeSessionId('ok-id')).toBe('ok-id');
    expect(sanitizeSessionId('x'.repeat(300))).toMatch(SESSION_ID_PATTERN);
    expect(sanitizeSessionId('')).toMatch(SESSION_ID_PATTERN);
  });

  it('refuses CLI session ids outside the alphabet instead of rewriting them', () => {
    expect(() => assertSessionId('a/b')).toThrow(/not valid/);
    expect(() => assertSessionId('..')).toThrow(/not valid/);
    expect(assertSessionId('s1')).toBe('s1');
  });
});
