import { Alert, Center, Loader, SegmentedControl, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { useAgentNames } from '../agentNames';
import { usageQuery } from '../queries';

// The charts (recharts, most of this page's weight) are their own chunk, loaded with their daily
// reports once the table's report is there: the heading, range and table never wait for them.
const UsageCharts = lazy(() => import('./UsageCharts'));
export const CHARTS_HEIGHT = 577; // the two chart cards and the gap between them

/** Where the charts go until their chunk and data are there (their height: the table does not jump). */
export function ChartsPlaceholder() {
  return (
    <Center h={CHARTS_HEIGHT}>
      <Loader aria-label="Loading charts" />
    </Center>
  );
}

/** Runs and tokens per day (charts) and per agent and model over the range (table). */
export default function Usage() {
  const [days, setDays] = useState('7');
  const usage = useQuery(usageQuery(Number(days)));
  const agentName = useAgentNames(usage.data?.items.map((r) => r.agent_id) ?? []);
  return (
    <Stack>
      <Title order={2}>Usage</Title>
      <SegmentedControl aria-label="Range" value={days} onChange={setDays} data={[{ value: '7', label: '7 days' }, { value: '30', label: '30 days' }]} w="fit-content" />
      {/* The charts (their chunk and their daily reports) come once the table's report is there. */}
      {usage.data ? (
        <Suspense fallback={<ChartsPlaceholder />}>
          <UsageCharts days={Number(days)} />
        </Suspense>
      ) : (
        !usage.error && <ChartsPlaceholder />
      )}
      {usage.error && <Alert color="red">{usage.error.message}</Alert>}
      {usage.data && (
        <Table.ScrollContainer minWidth={360}>
          <Table striped>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Agent</Table.Th>
                <Table.Th>Model</Table.Th>
                <Table.Th>Runs</Table.Th>
                <Table.Th>Errors</Table.Th>
                <Table.Th>Tokens in / out</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {usage.data.items.map((r) => (
                <Table.Tr key={`${r.agent_id}-${r.model}`}>
                  <Table.Td>{agentName(r.agent_id)}</Table.Td>
                  <Table.Td>{r.model}</Table.Td>
                  <Table.Td>{r.runs}</Table.Td>
                  <Table.Td>{r.errors}</Table.Td>
                  <Table.Td>
                    {r.input_tokens} / {r.output_tokens}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {usage.data?.items.length === 0 && <Text c="dimmed">No runs in the last {days} days: usage shows here once an agent has run.</Text>}
    </Stack>
  );
}
