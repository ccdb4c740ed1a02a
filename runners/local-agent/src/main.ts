// The local agent runner plugin: one runner, `default` (plugin:langbot/local-agent/default).
import { definePlugin, defineRunner } from 'lbot/sdk';
import { runAgent } from './agent.js';

export const localAgent = defineRunner({ run: runAgent });

export default definePlugin({ runners: { default: localAgent } });
