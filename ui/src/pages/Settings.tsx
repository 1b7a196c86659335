import { Alert, Badge, Button, Card, Code, CopyButton, Group, NativeSelect, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, canWrite, ok, type Schemas, type Session } from '../api';
import { useSession } from '../App';
import { ConfirmDialog, Dependents, useAgentsUsing } from '../Confirm';
import { modelConfigsQuery } from '../queries';

/** A change that refreshes the list it changed (`queryKey`) once it succeeds. */
function useListChange<A, R>(queryKey: string[], mutationFn: (arg: A) => Promise<R>, done?: (result: R) => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn,
    onSuccess: (result: R) => {
      done?.(result);
      void client.invalidateQueries({ queryKey });
    },
  });
}

/** A form's submit handler: no page reload, then `run`. */
const onSubmit = (run: () => void) => (e: FormEvent) => {
  e.preventDefault();
  run();
};

export default function Settings() {
  const session = useSession().data;
  const writable = canWrite(session);
  const configs = useQuery(modelConfigsQuery);
  const [name, setName] = useState('');
  const [modelId, setModelId] = useState('');
  const [apiKey, setApiKey] = useState('');
  const create = useListChange(
    ['model-configs'],
    async () => ok(await api.POST('/v1/deepagents/model-configs', { body: { name, model_id: modelId, ...(apiKey ? { api_key: apiKey } : {}) } })),
    () => {
      setName('');
      setModelId('');
      setApiKey('');
    },
  );
  // Deleting asks first, naming the agents that use the configuration.
  const [deleting, setDeleting] = useState<Schemas['ModelConfig'] | null>(null);
  const remove = useListChange(
    ['model-configs'],
    async (id: string) => ok(await api.DELETE('/v1/deepagents/model-configs/{model_config_id}', { params: { path: { model_config_id: id } } })),
    () => setDeleting(null),
  );
  const dependents = useAgentsUsing(`model-config:${deleting?.name ?? ''}`, Boolean(deleting), (a) => a.runtime.model.model_id === deleting?.name || a.subagents.some((s) => s.model_id === deleting?.name));
  const closeDelete = () => {
    setDeleting(null);
    remove.reset();
  };
  const submit = onSubmit(() => create.mutate());
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
                    <Button size="compact-sm" variant="subtle" color="red" onClick={() => setDeleting(m)} aria-label={`Delete model configuration ${m.name}`}>
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
      <ConfirmDialog
        opened={Boolean(deleting)}
        onClose={closeDelete}
        title="Delete model configuration"
        confirmLabel="Delete configuration"
        onConfirm={() => deleting && remove.mutate(deleting.id)}
        pending={remove.isPending}
        error={remove.error}
      >
        <Text>
          Delete <b>{deleting?.name}</b> ({deleting?.model_id}){deleting?.has_api_key ? ' and its stored provider key' : ''}? Agents that name it fail at run time until a configuration of that name exists again.
        </Text>
        <Dependents query={dependents} none="No agent uses it." some="Used by:" />
      </ConfirmDialog>
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
      {session?.role === 'admin' && <ApiKeys session={session} />}
    </Stack>
  );
}

/** The workspace's API keys: admins create them (shown once) and revoke them. */
function ApiKeys({ session }: { session: Session }) {
  const keys = useQuery({ queryKey: ['api-keys'], queryFn: async () => ok(await api.GET('/v1/api-keys')) });
  const [role, setRole] = useState<'admin' | 'member' | 'viewer'>('member');
  const [principal, setPrincipal] = useState('');
  const [description, setDescription] = useState('');
  // The new key lives in this component's state only, until the admin dismisses it.
  const [created, setCreated] = useState<{ key: string; prefix: string } | null>(null);
  const create = useListChange(
    ['api-keys'],
    async () => ok(await api.POST('/v1/api-keys', { body: { role, ...(principal.trim() ? { principal: principal.trim() } : {}), ...(description.trim() ? { description: description.trim() } : {}) } })),
    (k) => {
      setCreated({ key: k.key, prefix: k.prefix });
      setPrincipal('');
      setDescription('');
    },
  );
  const [revoking, setRevoking] = useState<Schemas['ApiKey'] | null>(null);
  const revoke = useListChange(['api-keys'], async (id: string) => ok(await api.DELETE('/v1/api-keys/{key_id}', { params: { path: { key_id: id } } })), () => setRevoking(null));
  const closeRevoke = () => {
    setRevoking(null);
    revoke.reset();
  };
  const ownKey = revoking?.id === session.key_id;
  const submit = onSubmit(() => {
    setCreated(null);
    create.mutate();
  });
  return (
    <Stack component="section" aria-label="API keys">
      <Title order={3} size="h4">
        API keys
      </Title>
      {keys.error && <Alert color="red">{keys.error.message}</Alert>}
      <ConfirmDialog opened={Boolean(revoking)} onClose={closeRevoke} title="Revoke API key" confirmLabel="Revoke key" onConfirm={() => revoking && revoke.mutate(revoking.id)} pending={revoke.isPending} error={revoke.error}>
        <Text>
          Revoke <code>{revoking?.prefix}…</code> ({revoking?.role}, {revoking?.principal})? Requests with it are refused from now on and its Console sessions end. This cannot be undone.
        </Text>
        {ownKey && (
          <Alert color="orange" title="This is the key of this session">
            Revoking it signs you out here. Sign in again with another admin key to keep managing the workspace.
          </Alert>
        )}
      </ConfirmDialog>
      <Table.ScrollContainer minWidth={560}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Key</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th>Principal</Table.Th>
              <Table.Th>Description</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Actions</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {keys.data?.map((k) => (
              <Table.Tr key={k.id}>
                <Table.Td>
                  <Code>{k.prefix}…</Code> {k.id === session.key_id && <Badge variant="light">this session</Badge>}
                </Table.Td>
                <Table.Td>{k.role}</Table.Td>
                <Table.Td className="wrap-anywhere">
                  {/* A key made without a principal acts for itself: its principal is its id, which nobody recognises. */}
                  {k.principal === k.id ? (
                    <Text size="sm" c="dimmed">
                      the key itself
                    </Text>
                  ) : (
                    k.principal
                  )}
                </Table.Td>
                <Table.Td>{k.description ?? ''}</Table.Td>
                <Table.Td>{new Date(k.created_at).toLocaleDateString()}</Table.Td>
                <Table.Td>
                  {k.revoked_at ? (
                    <Text size="sm" c="dimmed">
                      revoked
                    </Text>
                  ) : (
                    <Button size="compact-sm" variant="subtle" color="red" onClick={() => setRevoking(k)} aria-label={`Revoke key ${k.prefix}`}>
                      Revoke
                    </Button>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {created && (
        <Alert color="green" aria-label="New API key, shown once" withCloseButton closeButtonLabel="Dismiss the new key" onClose={() => {
            setCreated(null);
            create.reset();
          }}>
          <Text fw={600} mb="xs">
            New API key — copy it now, it is not shown again
          </Text>
          <Group gap="xs" wrap="nowrap">
            <Code aria-label="New API key" className="wrap-anywhere">
              {created.key}
            </Code>
            <CopyButton value={created.key}>
              {({ copied, copy }) => (
                <Button size="compact-sm" variant="light" onClick={copy}>
                  {copied ? 'Copied' : 'Copy'}
                </Button>
              )}
            </CopyButton>
          </Group>
        </Alert>
      )}
      <Card withBorder component="form" onSubmit={submit} maw={640}>
        <Stack>
          <Text fw={600}>Create an API key</Text>
          <Group grow align="flex-start">
            <NativeSelect label="Role" data={['member', 'viewer', 'admin']} value={role} onChange={(e) => setRole(e.currentTarget.value as typeof role)} />
            <TextInput label="Principal" description="Who the key acts for; default: the key itself" value={principal} onChange={(e) => setPrincipal(e.currentTarget.value)} />
          </Group>
          <TextInput label="Key description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
          {create.error && <Alert color="red">{create.error.message}</Alert>}
          <Button type="submit" loading={create.isPending} w="fit-content">
            Create key
          </Button>
        </Stack>
      </Card>
    </Stack>
  );
}
