// The `lbot dev` dashboard view: plugin states, finished lines (results, tool calls, state writes, API
// denials) printed once, the runs in flight, and the event picker. It only renders its props.
import path from 'node:path';
import { Box, Static, Text } from 'ink';
import type { DashboardState, FeedKind, FeedLine, PluginRow } from './dev-model.js';

const KIND_COLOR: Record<FeedKind, string> = { reply: 'white', tool: 'cyan', state: 'magenta', denied: 'red', run: 'gray', reload: 'green', warning: 'yellow' };
const KIND_TAG: Record<FeedKind, string> = { reply: 'reply', tool: 'tool', state: 'state', denied: 'DENY', run: 'run', reload: 'dev', warning: 'warn' };

function Feed({ line }: { readonly line: FeedLine }) {
  // Warnings and reload errors wrap: the file, line, column and message must all be readable.
  return (
    <Text wrap={line.kind === 'warning' || line.kind === 'denied' ? 'wrap' : 'truncate-end'}>
      <Text color={KIND_COLOR[line.kind]}>{KIND_TAG[line.kind].padEnd(5)}</Text> {line.text}
    </Text>
  );
}

function Plugin({ row }: { readonly row: PluginRow }) {
  const color = row.status === 'error' ? 'red' : row.status === 'reloading' ? 'yellow' : 'green';
  return (
    <Box flexDirection="column">
      <Text wrap="truncate-end">
        <Text color={color}>{row.status === 'error' ? '✗' : row.status === 'reloading' ? '…' : '●'}</Text> {row.identity}{' '}
        <Text dimColor>
          gen {row.generation}
          {row.reloadMs !== null ? ` · ${Math.round(row.reloadMs)} ms` : ''}
        </Text>
      </Text>
      {row.error ? (
        <Box paddingLeft={2}>
          <Text color="red" wrap="wrap">
            {row.error}
          </Text>
        </Box>
      ) : null}
    </Box>
  );
}

export type DevDashboardProps = { readonly state: DashboardState };

export function DevDashboard({ state }: DevDashboardProps) {
  return (
    <Box flexDirection="column">
      <Static items={[...state.feed]}>{(line) => <Feed key={line.key} line={line} />}</Static>
      <Box flexDirection="column" borderStyle="round" paddingX={1}>
        <Text wrap="truncate-end">
          <Text bold>lbot dev</Text> <Text dimColor>{state.url ?? 'starting…'}</Text>
        </Text>
        {state.plugins.length === 0 ? <Text dimColor>no plugins</Text> : state.plugins.map((p) => <Plugin key={p.identity} row={p} />)}
        {state.live.map((r) => (
          <Text key={r.run_id} wrap="truncate-end">
            <Text color="yellow">▶ {r.run_id.slice(0, 8)}</Text> {r.event_type} {r.text}
          </Text>
        ))}
        {state.picker ? (
          <Box flexDirection="column">
            <Text bold>pick an event file (↑/↓, enter, esc)</Text>
            {state.picker.files.length === 0 ? <Text dimColor>no .json files here</Text> : null}
            {state.picker.files.map((f, i) => (
              <Text key={f} wrap="truncate-end" inverse={i === state.picker?.index}>
                {path.basename(f)}
              </Text>
            ))}
          </Box>
        ) : null}
        <Text wrap="truncate-end" dimColor>
          event: {state.eventFile ? path.basename(state.eventFile) : 'none'} · r re-run · e pick event · q quit
        </Text>
      </Box>
    </Box>
  );
}
