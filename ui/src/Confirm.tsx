// Confirmation for destructive actions (delete, revoke), as the agent page's Delete has: a dialog
// that says what goes and what depends on it, with the server's error when the action fails.
import { Alert, Anchor, Button, Group, List, Loader, Modal, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { api, ok, type Schemas } from './api';

export function ConfirmDialog({
  opened,
  onClose,
  title,
  confirmLabel,
  onConfirm,
  pending,
  error,
  children,
}: {
  opened: boolean;
  onClose: () => void;
  title: string;
  confirmLabel: string;
  onConfirm: () => void;
  pending: boolean;
  error: Error | null;
  children: ReactNode;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title}>
      <Stack>
        {children}
        {error && (
          <Alert color="red" title={`${confirmLabel} failed`}>
            <Text size="sm" className="wrap-anywhere">
              {error.message}
            </Text>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red" onClick={onConfirm} loading={pending} data-autofocus>
            {confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

type Agent = Schemas['Agent'];

/**
 * The workspace's agents (their full definitions: tools and subagents are not in the list) that
 * `uses` picks, read when `enabled` (a dialog opens). Every agent is looked at: the list is followed
 * page by page to its end (oldest first, an order a save during the walk does not change; the API
 * has no filter by model or tool server).
 */
export function useAgentsUsing(key: string, enabled: boolean, uses: (agent: Agent) => boolean) {
  return useQuery({
    queryKey: ['agents-using', key],
    enabled,
    staleTime: 0,
    queryFn: async () => {
      const using = new Map<string, Agent>();
      let cursor: string | undefined;
      do {
        const page = ok(await api.GET('/v1/deepagents/agents', { params: { query: { page_size: 100, sort_by: 'created_at', sort_order: 'asc', ...(cursor ? { cursor } : {}) } } }));
        const agents = await Promise.all(
          page.items.map(async (a) => {
            const got = await api.GET('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: a.id } } });
            return got.response.status === 404 ? null : ok(got); // deleted since the list was read: it uses nothing
          }),
        );
        for (const agent of agents) if (agent && uses(agent)) using.set(agent.id, agent);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return [...using.values()];
    },
  });
}

/** "Used by" for a confirmation: the agents, linked, or that none uses it. */
export function Dependents({ query, none, some }: { query: ReturnType<typeof useAgentsUsing>; none: string; some: string }) {
  if (query.isPending) return <Loader size="xs" aria-label="Looking for agents that use it" />;
  if (query.error) return <Text size="sm" c="dimmed">Could not tell which agents use it: {query.error.message}</Text>;
  if (query.data.length === 0) return <Text size="sm">{none}</Text>;
  return (
    <div aria-label="Agents that use it">
      <Text size="sm">{some}</Text>
      <List size="sm">
        {query.data.map((a) => (
          <List.Item key={a.id}>
            <Anchor component={Link} to={`/agents/${a.id}`}>
              {a.name}
            </Anchor>
          </List.Item>
        ))}
      </List>
    </div>
  );
}

/** A tool server URL as the server compares them: without trailing slashes. */
export const normalizeUrl = (url: string) => url.replace(/\/+$/, '');
