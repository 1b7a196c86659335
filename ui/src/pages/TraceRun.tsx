import { Alert, Anchor, Badge, Code, Group, Loader, Paper, SimpleGrid, Stack, Text, Title, UnstyledButton } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { api, ok, type Schemas } from '../api';
import { statusColor } from './Traces';
import { LoadError } from '../NotFound';

type Tree = Schemas['TraceRunTree'];

function flatten(node: Tree, depth = 0, out: { node: Tree; depth: number }[] = []) {
  out.push({ node, depth });
  for (const child of node.child_runs) flatten(child, depth + 1, out);
  return out;
}

const time = (t: string | null) => (t ? new Date(t).getTime() : null);

/** A run as a waterfall: one row per run in the tree, its bar placed on the trace's timeline. */
export default function TraceRun() {
  const { runId = '' } = useParams();
  const [search] = useSearchParams();
  const threadId = search.get('thread_id');
  const trace = useQuery({
    queryKey: ['trace', runId, threadId],
    queryFn: async () =>
      threadId
        ? ok(await api.GET('/v1/deepagents/threads/{thread_id}/runs/{run_id}/trace', { params: { path: { thread_id: threadId, run_id: runId } } }))
        : ok(await api.GET('/v1/tracing/runs/{run_id}', { params: { path: { run_id: runId } } })),
    refetchInterval: (q) => (q.state.data && flatten(q.state.data).some((r) => r.node.status === 'pending') ? 2000 : false),
  });
  const [selected, setSelected] = useState<string | null>(null);
  if (trace.isPending) return <Loader aria-label="Loading trace" />;
  if (trace.error) return <LoadError error={trace.error} kind="runId" />;
  const rows = flatten(trace.data);
  const start = time(trace.data.start_time)!;
  const end = Math.max(...rows.map((r) => time(r.node.end_time) ?? Date.now()), start + 1);
  const span = end - start;
  const current = rows.find((r) => r.node.id === selected)?.node ?? trace.data;
  return (
    <Stack>
      <div>
        <Anchor component={Link} to="/traces" size="sm">
          ← Traces
        </Anchor>
        <Title order={2} className="wrap-anywhere">
          {trace.data.name}
        </Title>
        <Group gap="xs">
          <Badge color={statusColor(trace.data.status)}>{trace.data.status}</Badge>
          <Text size="sm">{trace.data.latency_ms === null ? 'running' : `${Math.round(trace.data.latency_ms)} ms`}</Text>
          <Text size="sm">{trace.data.total_tokens ?? 0} tokens</Text>
        </Group>
      </div>
      <Paper withBorder p="xs" aria-label="Waterfall">
        <Stack gap={2}>
          {rows.map(({ node, depth }) => {
            const s = time(node.start_time)! - start;
            const e = (time(node.end_time) ?? Date.now()) - start;
            return (
              <UnstyledButton
                key={node.id}
                onClick={() => setSelected(node.id)}
                title={`${node.name} (${node.run_type}, ${node.status})`}
                aria-pressed={current.id === node.id}
                p={4}
                style={{ borderRadius: 4, background: current.id === node.id ? 'var(--mantine-color-blue-0)' : undefined }}
              >
                <SimpleGrid cols={2} spacing="xs">
                  <Group gap={4} wrap="nowrap" style={{ paddingLeft: depth * 12 }}>
                    <Badge size="xs" variant="outline" className="no-shrink">
                      {node.run_type}
                    </Badge>
                    <Text size="sm" truncate>
                      {node.name}
                    </Text>
                  </Group>
                  <div style={{ position: 'relative', height: 14 }}>
                    <div
                      className={`waterfall-bar ${node.status === 'error' ? 'error' : ''}`}
                      style={{ position: 'absolute', top: 2, left: `${(s / span) * 100}%`, width: `${Math.max(((e - s) / span) * 100, 0.5)}%` }}
                    />
                  </div>
                </SimpleGrid>
              </UnstyledButton>
            );
          })}
        </Stack>
      </Paper>
      <Paper withBorder p="sm" aria-label="Run details">
        <Stack gap="xs">
          <Group gap="xs">
            <Text fw={600}>{current.name}</Text>
            <Badge color={statusColor(current.status)} variant="light">
              {current.status}
            </Badge>
            <Text size="sm">{current.latency_ms === null ? '—' : `${Math.round(current.latency_ms)} ms`}</Text>
            <Text size="sm">
              tokens: {current.prompt_tokens ?? 0} in / {current.completion_tokens ?? 0} out
            </Text>
          </Group>
          {current.error && (
            <Alert color="red" title="Error">
              <Text className="wrap-anywhere">{current.error}</Text>
            </Alert>
          )}
          <Text size="sm" fw={600}>
            Inputs
          </Text>
          <Code block className="wrap-anywhere">
            {JSON.stringify(current.inputs, null, 2)}
          </Code>
          <Text size="sm" fw={600}>
            Outputs
          </Text>
          <Code block className="wrap-anywhere">
            {JSON.stringify(current.outputs, null, 2)}
          </Code>
        </Stack>
      </Paper>
    </Stack>
  );
}
