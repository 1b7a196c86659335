import { Alert, Anchor, Autocomplete, Button, Group, Modal, Stack, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useDebouncedValue, useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, canWrite, ok } from '../api';
import { useSession } from '../App';
import { agentsQuery, modelConfigsQuery } from '../queries';
import { PageButtons, usePages } from '../Pager';
import { ServerError } from '../ServerError';

export function useModelSuggestions() {
  const configs = useQuery(modelConfigsQuery);
  return ['scripted:demo', ...(configs.data ?? []).map((m) => m.name), 'anthropic:claude-sonnet-4-6', 'openai:gpt-5.4-mini'];
}

export default function Agents() {
  const session = useSession().data;
  const [search, setSearch] = useState('');
  const [name] = useDebouncedValue(search, 250);
  const [opened, { open, close }] = useDisclosure(false);
  // Pages of 100; a new search starts at its first page.
  const pages = usePages<string>(name);
  const agents = useQuery(agentsQuery(name, pages.page));
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Agents</Title>
        {canWrite(session) && <Button onClick={open}>New agent</Button>}
      </Group>
      <TextInput label="Search agents" placeholder="Name contains…" value={search} onChange={(e) => setSearch(e.currentTarget.value)} maw={360} />
      {agents.error && <Alert color="red">{agents.error.message}</Alert>}
      <Table.ScrollContainer minWidth={360}>
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Model</Table.Th>
              <Table.Th visibleFrom="sm">Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {agents.data?.items.map((a) => (
              <Table.Tr key={a.id}>
                {/* A long unbroken name or description breaks rather than pushing Model and Updated out of view. */}
                <Table.Td className="wrap-anywhere">
                  <Anchor component={Link} to={`/agents/${a.id}`}>
                    {a.name}
                  </Anchor>
                  {a.description && (
                    <Text size="xs" c="dimmed" lineClamp={1} className="wrap-anywhere">
                      {a.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm" className="wrap-anywhere">
                    {a.runtime.model.model_id}
                  </Text>
                </Table.Td>
                <Table.Td visibleFrom="sm">{new Date(a.updated_at).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {agents.data && agents.data.items.length === 0 && <Text c="dimmed">{name ? 'No agent matches.' : 'No agents yet. Create one to start chatting.'}</Text>}
      <PageButtons pages={pages} next={agents.data?.next_cursor} />
      <Modal opened={opened} onClose={close} title="New agent">
        <CreateAgent onDone={close} />
      </Modal>
    </Stack>
  );
}

function CreateAgent({ onDone }: { onDone: () => void }) {
  const navigate = useNavigate();
  const client = useQueryClient();
  const models = useModelSuggestions();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [model, setModel] = useState('scripted:demo');
  const [instructions, setInstructions] = useState('You are a helpful assistant.');
  const create = useMutation({
    mutationFn: async () =>
      ok(
        await api.POST('/v1/deepagents/agents', {
          body: { name, description, instructions, runtime: { model: { model_id: model } } },
        }),
      ),
    onSuccess: (agent) => {
      void client.invalidateQueries({ queryKey: ['agents'] });
      onDone();
      navigate(`/agents/${agent.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <form onSubmit={submit}>
      <Stack>
        <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} required data-autofocus />
        <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <Autocomplete
          label="Model"
          description="provider:model, or a saved model configuration. scripted:demo works offline."
          data={[...new Set(models)]}
          value={model}
          onChange={setModel}
          required
        />
        <Textarea label="Instructions" description="AGENTS.md" autosize minRows={3} value={instructions} onChange={(e) => setInstructions(e.currentTarget.value)} />
        {create.error && <ServerError error={create.error} />}
        <Button type="submit" loading={create.isPending}>
          Create agent
        </Button>
      </Stack>
    </form>
  );
}
