// The one table of dispatch cases: the same events, config and named runner driven through the pure
// policy and through `run`, `dev` and `serve`, which must all pick the same binding and runner.
export const ECHO = 'plugin:acme/echo/default';
export const SCRIPTED = 'plugin:acme/scripted/default';

const global = { scope_type: 'global', scope_id: null } as const;
const scriptedSay = (text: string) => ({
  script: [{ emit: { type: 'message.completed', data: { message: { role: 'assistant', content: text } } } }, { emit: { type: 'run.completed', data: {} } }],
});

/** One config for every case: two joins bindings by priority, two message bindings tied on priority. */
export const DISPATCH_CONFIG = {
  runner_aliases: { greeter: ECHO },
  bindings: [
    { binding_id: 'joins-low', runner_id: SCRIPTED, event_types: ['group.member_joined'], scope: global, priority: 0, runner_config: scriptedSay('low') },
    { binding_id: 'joins-high', runner_id: ECHO, event_types: ['group.member_joined'], scope: global, priority: 5, runner_config: { prefix: 'high:' } },
    { binding_id: 'b-msg', runner_id: SCRIPTED, event_types: ['message.received'], scope: global, runner_config: scriptedSay('b') },
    { binding_id: 'a-msg', runner_id: ECHO, event_types: ['message.received'], scope: global, runner_config: { prefix: 'a:' } },
  ],
};

export type DispatchCase = {
  name: string;
  /** A file of fixtures/events. */
  event: 'join.json' | 'msg.json' | 'friend.json';
  /** `--runner` / `runner_id`. */
  runner?: string;
  /** `--config` / `config`. */
  runnerConfig?: Record<string, unknown>;
  expected: { binding_id: string; runner_id: string; reply_prefix: string } | { error: string };
};

export const DISPATCH_CASES: readonly DispatchCase[] = [
  {
    name: 'several bindings match: the higher priority one runs, alone',
    event: 'join.json',
    expected: { binding_id: 'joins-high', runner_id: ECHO, reply_prefix: 'high:' },
  },
  { name: 'a priority tie: binding_id ascending, one run', event: 'msg.json', expected: { binding_id: 'a-msg', runner_id: ECHO, reply_prefix: 'a:' } },
  {
    name: 'a runner alias is resolved, and the runner config replaces the binding’s',
    event: 'msg.json',
    runner: 'greeter',
    runnerConfig: { prefix: 'named:' },
    expected: { binding_id: `cli:${ECHO}`, runner_id: ECHO, reply_prefix: 'named:' },
  },
  {
    name: 'a named runner wins over matching bindings',
    event: 'join.json',
    runner: SCRIPTED,
    runnerConfig: scriptedSay('scripted'),
    expected: { binding_id: `cli:${SCRIPTED}`, runner_id: SCRIPTED, reply_prefix: 'scripted' },
  },
  { name: 'no binding matches and nothing is named', event: 'friend.json', expected: { error: 'binding.not_found' } },
];
