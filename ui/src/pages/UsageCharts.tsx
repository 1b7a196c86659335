import '@mantine/charts/styles.css';
import { BarChart } from '@mantine/charts';
import { Alert, Paper, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { dailyUsageQuery } from '../queries';
import { ChartsPlaceholder } from './Usage';

/** The Usage page's two bar charts, runs/errors and input/output tokens per day (its own chunk: recharts). */
export default function UsageCharts({ days }: { days: number }) {
  const daily = useQuery(dailyUsageQuery(days));
  if (daily.error) return <Alert color="red">{daily.error.message}</Alert>;
  if (!daily.data) return <ChartsPlaceholder />;
  return (
    <Stack>
      <Paper withBorder p="sm" aria-label="Runs per day">
        <Text fw={600} mb="xs">
          Runs per day
        </Text>
        <BarChart h={220} withLegend data={daily.data.map((d) => ({ day: d.day, Runs: d.report.totals.runs, Errors: d.report.totals.errors }))} dataKey="day" series={[{ name: 'Runs', color: 'blue.6' }, { name: 'Errors', color: 'red.6' }]} />
      </Paper>
      <Paper withBorder p="sm" aria-label="Tokens per day">
        <Text fw={600} mb="xs">
          Tokens per day
        </Text>
        <BarChart
          h={220}
          withLegend
          type="stacked"
          data={daily.data.map((d) => ({ day: d.day, Input: d.report.totals.input_tokens, Output: d.report.totals.output_tokens }))}
          dataKey="day"
          series={[{ name: 'Input', color: 'teal.6' }, { name: 'Output', color: 'grape.6' }]}
        />
      </Paper>
    </Stack>
  );
}
