// The lanes of the run policy (docs/run-policy.md): who holds a conversation, who waits, in which order,
// what interrupt supersedes, and the refusals (reject, the queue cap) that leave a lane unchanged.
import { describe, expect, it } from 'vitest';
import { LbotError } from '../../../src/core/errors.js';
import { ConversationLanes, laneOf } from '../../../src/runtime/server/conversation-lanes.js';

type Run = { run_id: string };
const run = (run_id: string): Run => ({ run_id });
const lane = laneOf({ binding_id: 'b', run_policy: 'enqueue' }, { conversation_id: 'c' });
const other = laneOf({ binding_id: 'b', run_policy: 'enqueue' }, { conversation_id: 'd' });
const free = () => undefined;

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return err instanceof LbotError ? err.code : String(err);
  }
  return 'no error';
}

describe('conversation lanes', () => {
  it('has no lane for parallel bindings or events without a conversation; the key is (binding, conversation)', () => {
    expect(laneOf({ binding_id: 'b', run_policy: 'parallel' }, { conversation_id: 'c' })).toBeNull();
    expect(laneOf({ binding_id: 'b', run_policy: 'enqueue' }, { conversation_id: null })).toBeNull();
    expect(lane?.key).not.toBe(other?.key);
    // Ids that would collide if joined by a separator do not.
    const a = laneOf({ binding_id: 'x:y', run_policy: 'enqueue' }, { conversation_id: 'z' });
    const b = laneOf({ binding_id: 'x', run_policy: 'enqueue' }, { conversation_id: 'y:z' });
    expect(a?.key).not.toBe(b?.key);
  });

  it('enqueue: the first holds, the next wait in arrival order and take over one by one', () => {
    const lanes = new ConversationLanes<Run>(() => 10);
    const [r1, r2, r3] = [run('r1'), run('r2'), run('r3')];
    if (!lane || !other) throw new Error('lanes expected');
    expect(lanes.admit(lane, 'enqueue', r1, free)).toMatchObject({ start: true });
    expect(lanes.admit(lane, 'enqueue', r2, free)).toMatchObject({ start: false, behind: 'r1' });
    expect(lanes.admit(lane, 'enqueue', r3, free)).toMatchObject({ start: false, behind: 'r2' });
    expect(lanes.admit(other, 'enqueue', run('o1'), free)).toMatchObject({ start: true });
    expect(lanes.position('r3')).toEqual({ ahead: 'r2', position: 2 });
    expect(lanes.release(lane.key, r2)).toBeUndefined(); // only the holder releases
    expect(lanes.release(lane.key, r1)).toBe(r2);
    expect(lanes.position('r3')).toEqual({ ahead: 'r2', position: 1 });
    expect(lanes.release(lane.key, r2)).toBe(r3);
    expect(lanes.release(lane.key, r3)).toBeUndefined();
    expect(lanes.admit(lane, 'enqueue', run('r4'), free)).toMatchObject({ start: true });
  });

  it('asks the concurrency limits only for a run that takes a free lane; a refused one leaves no lane', () => {
    const lanes = new ConversationLanes<Run>(() => 10);
    if (!lane) throw new Error('lane expected');
    const full = () => {
      throw new LbotError('rate_limited', 'full');
    };
    expect(codeOf(() => lanes.admit(lane, 'enqueue', run('r1'), full))).toBe('rate_limited');
    expect(lanes.admit(lane, 'enqueue', run('r1'), free)).toMatchObject({ start: true });
    expect(lanes.admit(lane, 'enqueue', run('r2'), full)).toMatchObject({ start: false });
  });

  it('caps the queue of one conversation, and reject refuses while held', () => {
    const lanes = new ConversationLanes<Run>(() => 2);
    if (!lane || !other) throw new Error('lanes expected');
    lanes.admit(lane, 'enqueue', run('h'), free);
    lanes.admit(lane, 'enqueue', run('w1'), free);
    lanes.admit(lane, 'enqueue', run('w2'), free);
    expect(codeOf(() => lanes.admit(lane, 'enqueue', run('w3'), free))).toBe('rate_limited');
    expect(codeOf(() => lanes.admit(lane, 'reject', run('x'), free))).toBe('run.conversation_busy');
    expect(lanes.waitingCount).toBe(2);
    expect(lanes.admit(other, 'reject', run('o'), free)).toMatchObject({ start: true });
  });

  it('interrupt: cancels the holder and supersedes every waiting run; the newest takes over', () => {
    const lanes = new ConversationLanes<Run>(() => 10);
    if (!lane) throw new Error('lane expected');
    const h = run('h');
    lanes.admit(lane, 'enqueue', h, free);
    lanes.admit(lane, 'enqueue', run('w1'), free);
    const admission = lanes.admit(lane, 'interrupt', run('new'), free);
    expect(admission).toMatchObject({ start: false, behind: 'h', interrupt: h, superseded: [{ run_id: 'w1' }] });
    expect(lanes.position('w1')).toBeUndefined();
    expect(lanes.release(lane.key, h)?.run_id).toBe('new');
  });

  it('removes a waiting run and drains every queue', () => {
    const lanes = new ConversationLanes<Run>(() => 10);
    if (!lane || !other) throw new Error('lanes expected');
    lanes.admit(lane, 'enqueue', run('h'), free);
    lanes.admit(lane, 'enqueue', run('w1'), free);
    lanes.admit(lane, 'enqueue', run('w2'), free);
    lanes.admit(other, 'enqueue', run('o'), free);
    lanes.admit(other, 'enqueue', run('ow'), free);
    expect(lanes.remove('w1')?.run_id).toBe('w1');
    expect(lanes.remove('w1')).toBeUndefined();
    expect(lanes.remove('h')).toBeUndefined(); // the holder is not waiting
    expect(lanes.position('w2')).toEqual({ ahead: 'h', position: 1 });
    expect(
      lanes
        .drain()
        .map((r) => r.run_id)
        .sort(),
    ).toEqual(['ow', 'w2']);
    expect(lanes.waitingCount).toBe(0);
  });
});
