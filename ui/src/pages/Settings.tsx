import { Alert, Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, canWrite, ok } from '../api';
import { useSession } from '../App';

export default function Settings() {
  const session = useSession().data;
  const writable = canWrite(session);
  const client = useQueryClient();
  const configs = useQuery({ queryKey: ['model-configs'], queryFn: async () => ok(await api.GET('/v1/deepagents/model-configs')) });
  const [name, setName] = useState('');
  const [modelId, setModelId] = useState('');
  const [apiKey, setApiKey] = useState('');
  const create = useMutation({
    mutationFn: async () => ok(await api.POST('/v1/deepagents/model-configs', { body: { name, model_id: modelId, ...(apiKey ? { api_key: apiKey } : {}) } })),
    onSuccess: () => {
      setName('');
      setModelId('');
      setApiKey('');
      void client.invalidateQueries({ queryKey: ['model-configs'] });
    },
  });
  const remove = useMutation({
    mutationFn: async (id: string) => ok(await api.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: id } } })),
    onSuccess: () => void client.invalidateQueries({ queryKey: ['model-configs'] }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Stack>
      <Title order={2}>Settings</Title>
      <Title order={3} size="h4">
        Model configurations
      </Title>
      {configs.error && <Alert color="red">{configs.error.message}</Alert>}
      <Table.ScrollContainer minWidth={360}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Model</Table.Th>
              <Table.Th>Provider key</Table.Th>
              {writable && <Table.Th>Actions</Table.Th>}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {configs.data?.map((m) => (
              <Table.Tr key={m.id}>
                <Table.Td>{m.name}</Table.Td>
                <Table.Td>{m.model_id}</Table.Td>
                <Table.Td>{m.has_api_key ? 'stored' : '—'}</Table.Td>
                {writable && (
                  <Table.Td>
                    <Button size="compact-sm" variant="subtle" color="red" onClick={() => remove.mutate(m.id)} aria-label={`Delete model configuration ${m.name}`}>
                      Delete
                    </Button>
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {configs.data?.length === 0 && <Text c="dimmed">No saved model configurations.</Text>}
      {writable && (
        <Card withBorder component="form" onSubmit={submit} maw={640}>
          <Stack>
            <Text fw={600}>Save a model configuration</Text>
            <Group grow>
              <TextInput label="Configuration name" value={name} onChange={(e) => setName(e.currentTarget.value)} required />
              <TextInput label="Model id" placeholder="openai:gpt-5.4-mini" value={modelId} onChange={(e) => setModelId(e.currentTarget.value)} required />
            </Group>
            <TextInput label="Provider API key" description="Stored encrypted; never shown again." type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.currentTarget.value)} />
            {create.error && <Alert color="red">{create.error.message}</Alert>}
            <Button type="submit" loading={create.isPending} w="fit-content">
              Save configuration
            </Button>
          </Stack>
        </Card>
      )}
    </Stack>
  );
}
