import { Alert, Anchor, Badge, Code, NumberInput, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { PageButtons, usePages } from '../Pager';
import { defaultProject, infoQuery, SINCE, traceRunsQuery, tracingProjectsQuery } from '../queries';

export function statusColor(status: string): string {
  return status === 'error' ? 'red' : status === 'success' ? 'green' : 'gray';
}

export default function Traces() {
  const projects = useQuery(tracingProjectsQuery);
  const tracing = useQuery(infoQuery).data?.tracing;
  const [chosen, setProject] = useState<string | null>(null);
  // The default project until one is chosen (its runs may already be cached: routes.ts asks for them).
  const project = chosen ?? defaultProject(projects.data);
  const [status, setStatus] = useState<string | null>(null);
  const [nameInput, setName] = useState('');
  const [name] = useDebouncedValue(nameInput, 250);
  const [minLatency, setMinLatency] = useState<number | string>('');
  const [since, setSince] = useState<string>('Any time');
  // Pages of 50; other filters start at their first page.
  const pages = usePages<string>([project, status, name, minLatency, since]);
  const runs = useQuery(traceRunsQuery({ project, status, name, minLatency, since, cursor: pages.page }));
  return (
    <Stack>
      <Title order={2}>Traces</Title>
      {tracing === false && (
        <Alert color="yellow" title="Tracing is off">
          This server does not trace agent runs (<Code>HANGAR_TRACING=false</Code>): their runs are not listed here. Traces sent by other tools still are.
        </Alert>
      )}
      {projects.error && <Alert color="red">{projects.error.message}</Alert>}
      <SimpleGrid cols={{ base: 1, xs: 2, md: 5 }}>
        <Select label="Project" data={(projects.data?.items ?? []).map((p) => ({ value: p.id, label: p.name }))} value={project} onChange={setProject} allowDeselect={false} />
        <Select label="Status" placeholder="Any" data={['success', 'error', 'pending']} value={status} onChange={setStatus} clearable />
        <TextInput label="Name contains" value={nameInput} onChange={(e) => setName(e.currentTarget.value)} />
        <NumberInput label="Min latency (ms)" value={minLatency} onChange={setMinLatency} min={0} />
        <Select label="Started" data={Object.keys(SINCE)} value={since} onChange={(v) => setSince(v ?? 'Any time')} allowDeselect={false} />
      </SimpleGrid>
      {runs.error && <Alert color="red">{runs.error.message}</Alert>}
      <Table.ScrollContainer minWidth={360}>
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Run</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Latency</Table.Th>
              <Table.Th visibleFrom="sm">Tokens</Table.Th>
              <Table.Th visibleFrom="sm">Started</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {runs.data?.items.map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/traces/${r.id}`}>
                    {r.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Badge color={statusColor(r.status)} variant="light">
                    {r.status}
                  </Badge>
                </Table.Td>
                <Table.Td>{r.latency_ms === null ? '—' : `${Math.round(r.latency_ms)} ms`}</Table.Td>
                <Table.Td visibleFrom="sm">{r.total_tokens ?? '—'}</Table.Td>
                <Table.Td visibleFrom="sm">{new Date(r.start_time).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {runs.data && runs.data.items.length === 0 && <Text c="dimmed">No runs match.</Text>}
      <PageButtons pages={pages} next={runs.data?.next_cursor} />
    </Stack>
  );
}
