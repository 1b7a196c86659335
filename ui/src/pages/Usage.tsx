import '@mantine/charts/styles.css';
import { BarChart } from '@mantine/charts';
import { Alert, Loader, Paper, SegmentedControl, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../api';

const DAY = 86_400_000;

/** Runs and tokens per day (one usage report per day) and per agent and model over the range. */
export default function Usage() {
  const [days, setDays] = useState('7');
  const n = Number(days);
  const agents = useQuery({ queryKey: ['agents', ''], queryFn: async () => ok(await api.GET('/v1/deepagents/agents', { params: { query: { page_size: 100 } } })) });
  const usage = useQuery({
    queryKey: ['usage', days],
    queryFn: async () => {
      const today = new Date(new Date().toDateString()).getTime() + DAY;
      const ranges = Array.from({ length: n }, (_, i) => ({ start: new Date(today - (n - i) * DAY), end: new Date(today - (n - i - 1) * DAY) }));
      const daily = await Promise.all(
        ranges.map(async (r) => ({ day: r.start.toLocaleDateString(undefined, { month: 'short', day: 'numeric' }), report: ok(await api.GET('/v1/deepagents/usage', { params: { query: { start: r.start.toISOString(), end: r.end.toISOString() } } })) })),
      );
      const whole = ok(await api.GET('/v1/deepagents/usage', { params: { query: { start: ranges[0]!.start.toISOString(), end: ranges[n - 1]!.end.toISOString() } } }));
      return { daily, whole };
    },
  });
  const agentName = (id: string) => agents.data?.items.find((a) => a.id === id)?.name ?? id.slice(0, 8);
  return (
    <Stack>
      <Title order={2}>Usage</Title>
      <SegmentedControl aria-label="Range" value={days} onChange={setDays} data={[{ value: '7', label: '7 days' }, { value: '30', label: '30 days' }]} w="fit-content" />
      {usage.isPending && <Loader aria-label="Loading usage" />}
      {usage.error && <Alert color="red">{usage.error.message}</Alert>}
      {usage.data && (
        <>
          <Paper withBorder p="sm" aria-label="Runs per day">
            <Text fw={600} mb="xs">
              Runs per day
            </Text>
            <BarChart h={220} data={usage.data.daily.map((d) => ({ day: d.day, Runs: d.report.totals.runs, Errors: d.report.totals.errors }))} dataKey="day" series={[{ name: 'Runs', color: 'blue.6' }, { name: 'Errors', color: 'red.6' }]} />
          </Paper>
          <Paper withBorder p="sm" aria-label="Tokens per day">
            <Text fw={600} mb="xs">
              Tokens per day
            </Text>
            <BarChart
              h={220}
              type="stacked"
              data={usage.data.daily.map((d) => ({ day: d.day, Input: d.report.totals.input_tokens, Output: d.report.totals.output_tokens }))}
              dataKey="day"
              series={[{ name: 'Input', color: 'teal.6' }, { name: 'Output', color: 'grape.6' }]}
            />
          </Paper>
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
                {usage.data.whole.items.map((r) => (
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
        </>
      )}
    </Stack>
  );
}
