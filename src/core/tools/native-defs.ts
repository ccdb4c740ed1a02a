// The six native tools as models see them: names, descriptions, JSON Schemas (skills-mcp-tools.md §2).
import type { ToolDefinition } from './types.js';

export const NATIVE_TOOL_NAMES = ['exec', 'read', 'write', 'edit', 'glob', 'grep'] as const;
export type NativeToolName = (typeof NATIVE_TOOL_NAMES)[number];

/** Tool names lbot itself defines: a call to one the run was not given is `unauthorized` (AC-119), never `not_found`. */
export const HOST_TOOL_NAMES: ReadonlySet<string> = new Set([...NATIVE_TOOL_NAMES, 'activate', 'register_skill']);

const obj = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });

export const NATIVE_TOOLS: Record<NativeToolName, ToolDefinition> = {
  exec: {
    name: 'exec',
    human_desc: 'Run a shell command in the sandbox',
    description:
      'Run a shell command in an isolated sandbox (POSIX sh, no network unless the profile allows it). Use it for bash, Python and exact ' +
      'calculations over user data instead of estimating. Files live under /workspace and persist between calls in the same conversation. ' +
      'Activated skills are at /workspace/.skills/<skill-name>; set workdir there to work inside one.',
    parameters: obj(
      {
        command: { type: 'string', description: 'Shell command to run (sh -c).' },
        workdir: { type: 'string', default: '/workspace', description: 'Working directory inside the sandbox.' },
        timeout_sec: { type: 'integer', default: 30, minimum: 1, description: 'Timeout in seconds; clamped to the profile maximum.' },
        env: { type: 'object', additionalProperties: { type: 'string' }, default: {}, description: 'Extra environment variables.' },
        description: { type: 'string', description: 'What the command is for (logged only).' },
      },
      ['command'],
    ),
  },
  read: {
    name: 'read',
    human_desc: 'Read a file in the workspace',
    description:
      'Read a text file (or list a directory) under /workspace. Long files come back in pieces: pass offset (1-based line) and limit (lines) ' +
      'to continue where next_offset points.',
    parameters: obj(
      {
        path: { type: 'string', description: 'Absolute path under /workspace.' },
        offset: { type: 'integer', minimum: 1, description: 'First line to return (1-based).' },
        limit: { type: 'integer', minimum: 1, description: 'Maximum number of lines.' },
      },
      ['path'],
    ),
  },
  write: {
    name: 'write',
    human_desc: 'Write a file in the workspace',
    description: 'Create or overwrite a text file under /workspace (parent directories are created). mode "append" adds to the end instead.',
    parameters: obj(
      {
        path: { type: 'string', description: 'Absolute path under /workspace.' },
        content: { type: 'string', description: 'The file content (UTF-8).' },
        mode: { type: 'string', enum: ['overwrite', 'append'], default: 'overwrite' },
      },
      ['path', 'content'],
    ),
  },
  edit: {
    name: 'edit',
    human_desc: 'Replace text in a workspace file',
    description: 'Replace one exact occurrence of old_string with new_string in a file under /workspace. old_string must occur exactly once.',
    parameters: obj(
      {
        path: { type: 'string', description: 'Absolute path under /workspace.' },
        old_string: { type: 'string', description: 'Exact text to replace (must be unique in the file).' },
        new_string: { type: 'string', description: 'Replacement text.' },
      },
      ['path', 'old_string', 'new_string'],
    ),
  },
  glob: {
    name: 'glob',
    human_desc: 'Find files by pattern',
    description: 'Find files under /workspace by glob pattern (** for any depth; a bare pattern such as *.py matches at any depth). Newest first, at most 100.',
    parameters: obj(
      {
        pattern: { type: 'string', description: 'Glob pattern, e.g. **/*.py' },
        path: { type: 'string', default: '/workspace', description: 'Directory to search.' },
      },
      ['pattern'],
    ),
  },
  grep: {
    name: 'grep',
    human_desc: 'Search file contents',
    description:
      'Search file contents under /workspace with a regular expression (JavaScript regular expression syntax; (?P<name>…) and a leading (?i) ' +
      'are accepted). Returns file, line number and line; at most 200 matches.',
    parameters: obj(
      {
        pattern: { type: 'string', description: 'Regular expression.' },
        path: { type: 'string', default: '/workspace', description: 'File or directory to search.' },
        include: { type: 'string', description: 'Glob of files to search, e.g. *.py' },
      },
      ['pattern'],
    ),
  },
};
