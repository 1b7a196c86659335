import { ActionIcon, Alert, Anchor, Badge, Button, Card, Group, Modal, SegmentedControl, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, canWrite, ok, type Schemas } from '../api';
import { allRows } from '../Pager';
import { useSession } from '../App';
import { ConfirmDialog, Dependents, normalizeUrl, useAgentsUsing } from '../Confirm';
import { mcpServersQuery } from '../queries';

type Header = { key: string; value: string };

export default function ToolServers() {
  const session = useSession().data;
  const servers = useQuery(mcpServersQuery);
  const [opened, { open, close }] = useDisclosure(false);
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Tool servers</Title>
        {canWrite(session) && <Button onClick={open}>Register tool server</Button>}
      </Group>
      {servers.error && <Alert color="red">{servers.error.message}</Alert>}
      {servers.data?.length === 0 && <Text c="dimmed">No tool servers registered. Agents use the tools of registered MCP servers.</Text>}
      {servers.data?.map((s) => <ServerCard key={s.id} server={s} writable={canWrite(session)} />)}
      <Modal opened={opened} onClose={close} title="Register tool server" size="lg">
        <RegisterServer onDone={close} />
      </Modal>
    </Stack>
  );
}

function HeaderRows({ headers, onChange }: { headers: Header[]; onChange: (h: Header[]) => void }) {
  return (
    <Stack gap="xs">
      {headers.map((h, i) => (
        <Group key={i} align="flex-end" wrap="nowrap">
          <TextInput label={`Header ${i + 1} name`} value={h.key} onChange={(e) => onChange(headers.map((x, j) => (j === i ? { ...x, key: e.currentTarget.value } : x)))} />
          <TextInput
            label={`Header ${i + 1} value`}
            type="password"
            autoComplete="off"
            value={h.value}
            onChange={(e) => onChange(headers.map((x, j) => (j === i ? { ...x, value: e.currentTarget.value } : x)))}
          />
          <ActionIcon variant="subtle" color="red" aria-label={`Remove header ${i + 1}`} onClick={() => onChange(headers.filter((_, j) => j !== i))} mb={4}>
            ×
          </ActionIcon>
        </Group>
      ))}
      <Button variant="default" size="compact-sm" onClick={() => onChange([...headers, { key: '', value: '' }])} w="fit-content">
        Add header
      </Button>
    </Stack>
  );
}

function RegisterServer({ onDone }: { onDone: () => void }) {
  const client = useQueryClient();
  // Every OAuth provider (the list answers pages of `{resources, offset}`, 100 at the most).
  const providers = useQuery({
    queryKey: ['oauth-providers'],
    queryFn: () => allRows(100, async (offset) => ok(await api.GET('/v2/auth/providers', { params: { query: { limit: 100, offset } } })).resources),
  });
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [auth, setAuth] = useState<'headers' | 'oauth'>('headers');
  const [provider, setProvider] = useState<string | null>(null);
  // Who the OAuth client is: one provider every user authorizes with, or a client Hangar registers for
  // each user at the server's authorization server (`per_user_dynamic_client`).
  const [clientMode, setClientMode] = useState<'shared' | 'per_user'>('shared');
  const [headers, setHeaders] = useState<Header[]>([]);
  const oauth = auth !== 'oauth' ? {} : clientMode === 'per_user' ? { oauth_mode: 'per_user_dynamic_client' as const } : { oauth_provider_id: provider };
  const create = useMutation({
    mutationFn: async () =>
      ok(
        await api.POST('/v1/deepagents/mcp-servers', {
          body: { name, url, auth_type: auth, headers: headers.filter((h) => h.key), ...oauth },
        }),
      ),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['mcp-servers'] });
      // Forget the secret at once: the modal stays in the page while it fades out.
      setHeaders([]);
      setName('');
      setUrl('');
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const providerList = providers.data ?? [];
  return (
    <form onSubmit={submit}>
      <Stack>
        <TextInput label="Name" value={name} onChange={(e) => setName(e.currentTarget.value)} required data-autofocus />
        <TextInput label="URL" placeholder="https://tools.example.com/mcp" value={url} onChange={(e) => setUrl(e.currentTarget.value)} required />
        <SegmentedControl
          aria-label="Authentication"
          value={auth}
          onChange={(v) => setAuth(v as 'headers' | 'oauth')}
          data={[
            { value: 'headers', label: 'Headers' },
            { value: 'oauth', label: 'OAuth' },
          ]}
        />
        {auth === 'oauth' && (
          <SegmentedControl
            aria-label="OAuth client"
            value={clientMode}
            onChange={(v) => setClientMode(v as 'shared' | 'per_user')}
            data={[
              { value: 'shared', label: 'Shared provider' },
              { value: 'per_user', label: 'A client per user' },
            ]}
          />
        )}
        {auth === 'oauth' && clientMode === 'per_user' && (
          <Text size="sm" c="dimmed">
            Each user connects with a client Hangar registers for them at the server’s authorization server (dynamic client registration). No provider to register first.
          </Text>
        )}
        {auth === 'oauth' && clientMode === 'shared' && (
          <Select
            label="OAuth provider"
            data={providerList.map((p) => ({ value: p.id, label: `${p.name} (${p.provider_id})` }))}
            value={provider}
            onChange={setProvider}
            required
            nothingFoundMessage="No OAuth providers registered"
          />
        )}
        <HeaderRows headers={headers} onChange={setHeaders} />
        {create.error && <Alert color="red">{create.error.message}</Alert>}
        <Button type="submit" loading={create.isPending}>
          Register
        </Button>
      </Stack>
    </form>
  );
}

function ServerCard({ server: s, writable }: { server: Schemas['McpServer']; writable: boolean }) {
  const client = useQueryClient();
  const [testing, setTesting] = useState(false);
  const tools = useQuery({
    queryKey: ['mcp-tools', s.id],
    enabled: testing,
    queryFn: async () => ok(await api.GET('/v1/deepagents/mcp-servers/{mcp_server_id}/tools', { params: { path: { mcp_server_id: s.id } } })),
  });
  const [replacing, setReplacing] = useState(false);
  const [headers, setHeaders] = useState<Header[]>([]);
  const replace = useMutation({
    mutationFn: async () => ok(await api.PATCH('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: s.id } }, body: { headers: headers.filter((h) => h.key) } })),
    onSuccess: () => {
      setReplacing(false);
      // Forget the secret, as registering does; a test shown was of the old headers: it runs again.
      setHeaders([]);
      void client.invalidateQueries({ queryKey: ['mcp-servers'] });
      void client.invalidateQueries({ queryKey: ['mcp-tools', s.id] });
    },
  });
  // Deleting asks first, naming the agents whose tools come from this server.
  const [confirmOpen, confirm] = useDisclosure(false);
  const remove = useMutation({
    mutationFn: async () => ok(await api.DELETE('/v1/deepagents/mcp-servers/{mcp_server_id}', { params: { path: { mcp_server_id: s.id } } })),
    onSuccess: () => {
      confirm.close();
      void client.invalidateQueries({ queryKey: ['mcp-servers'] });
    },
  });
  const fromHere = (tools: { mcp_server_url?: string | null }[] | undefined) => (tools ?? []).some((t) => t.mcp_server_url && normalizeUrl(t.mcp_server_url) === normalizeUrl(s.url));
  const dependents = useAgentsUsing(`mcp-server:${s.url}`, confirmOpen, (a) => fromHere(a.tools.tools) || a.subagents.some((sub) => fromHere(sub.tools?.tools)));
  const closeDelete = () => {
    confirm.close();
    remove.reset();
  };
  const authUrl = tools.error?.message.match(/open (https?:\/\/\S+)/)?.[1];
  const perUser = s.auth_type === 'oauth' && s.oauth_mode === 'per_user_dynamic_client';
  // Connect: the caller's provider (per user: registered for them on first use), then an authorization
  // session; its page is opened from a link (a pop-up from an async step would be blocked).
  const connect = useMutation({
    mutationFn: async () => {
      const ref = perUser
        ? ok(await api.POST('/v1/deepagents/mcp-servers/{mcp_server_id}/oauth-provider', { params: { path: { mcp_server_id: s.id } }, body: {} })).oauth_provider_id
        : s.oauth_provider_id!;
      const provider = ok(await api.GET('/v2/auth/providers/{provider_id}', { params: { path: { provider_id: ref } } }));
      return ok(await api.POST('/v1/deepagents/auth-sessions', { body: { provider_id: provider.provider_id, strategy: 'REUSE' } }));
    },
  });
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Group justify="space-between">
          <div>
            <Text fw={600}>{s.name}</Text>
            <Text size="xs" c="dimmed" className="wrap-anywhere">
              {s.url}
            </Text>
          </div>
          <Badge variant="light">{s.auth_type}</Badge>
        </Group>
        {s.headers && s.headers.length > 0 && (
          <Text size="sm">
            Headers: {s.headers.map((h) => `${h.key}: ••••••`).join(', ')}
          </Text>
        )}
        <Group gap="xs">
          {s.can_invoke && (
            <Button size="compact-sm" variant="default" onClick={() => (testing ? void tools.refetch() : setTesting(true))} loading={tools.isFetching}>
              Test connection
            </Button>
          )}
          {s.auth_type === 'oauth' && (perUser ? writable : Boolean(s.oauth_provider_id)) && (
            <Button size="compact-sm" variant="default" onClick={() => connect.mutate()} loading={connect.isPending} aria-label={`Connect to ${s.name}`}>
              Connect
            </Button>
          )}
          {writable && (
            <Button size="compact-sm" variant="default" onClick={() => setReplacing(!replacing)}>
              Replace headers
            </Button>
          )}
          {writable && (
            <Button size="compact-sm" variant="subtle" color="red" onClick={confirm.open} aria-label={`Delete tool server ${s.name}`}>
              Delete
            </Button>
          )}
        </Group>
        <ConfirmDialog opened={confirmOpen} onClose={closeDelete} title="Delete tool server" confirmLabel="Delete tool server" onConfirm={() => remove.mutate()} pending={remove.isPending} error={remove.error}>
          <Text>
            Delete <b>{s.name}</b> and its stored headers? Agents that use its tools keep them listed, but each call to one of them fails, and saving such an agent is refused until its tools are removed or the server is registered again.
          </Text>
          <Dependents query={dependents} none="No agent uses its tools." some="Agents that use its tools:" />
        </ConfirmDialog>
        {replacing && (
          // A form: Enter in a header's field saves, as in the register form.
          <Stack
            component="form"
            onSubmit={(e: FormEvent) => {
              e.preventDefault();
              replace.mutate();
            }}
          >
            <Text size="sm" c="dimmed">
              Saved values are never shown; the new set replaces them all.
            </Text>
            <HeaderRows headers={headers} onChange={setHeaders} />
            <Button type="submit" size="compact-sm" loading={replace.isPending} w="fit-content">
              Save headers
            </Button>
            {replace.error && <Alert color="red">{replace.error.message}</Alert>}
          </Stack>
        )}
        {connect.error && (
          <Alert color="red" title="Could not connect">
            <Text className="wrap-anywhere">{connect.error.message}</Text>
          </Alert>
        )}
        {connect.data &&
          (connect.data.status === 'COMPLETED' ? (
            <Alert color="green" title="Connected">
              You have authorized this server; runs use your token.
            </Alert>
          ) : (
            connect.data.verification_url && (
              <Alert color="yellow" title="Authorize to connect">
                <Anchor href={connect.data.verification_url} target="_blank" rel="noopener noreferrer">
                  Open the authorization page
                </Anchor>
              </Alert>
            )
          ))}
        {tools.error && (
          <Alert color={authUrl ? 'yellow' : 'red'} title={authUrl ? 'Not connected' : 'Connection failed'}>
            {authUrl ? (
              <Anchor href={authUrl} target="_blank" rel="noopener noreferrer">
                Connect with OAuth
              </Anchor>
            ) : (
              <Text className="wrap-anywhere">{tools.error.message}</Text>
            )}
          </Alert>
        )}
        {tools.data && (
          <div aria-label={`Tools of ${s.name}`}>
            <Text size="sm" fw={600}>
              {tools.data.tools.length} {tools.data.tools.length === 1 ? 'tool' : 'tools'}
            </Text>
            {tools.data.tools.map((t) => (
              <Text size="sm" key={t.name} className="wrap-anywhere">
                <b>{t.name}</b> — {t.description}
              </Text>
            ))}
          </div>
        )}
      </Stack>
    </Card>
  );
}
