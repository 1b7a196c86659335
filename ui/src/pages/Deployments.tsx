import { Alert, Anchor, Badge, Button, Code, Group, Modal, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, canWrite, ok } from '../api';
import { useSession } from '../App';
import { allRows, nextOffset, PageButtons, usePages } from '../Pager';
import { DEPLOYMENTS_PAGE, deploymentsQuery } from '../queries';

export function deploymentColor(status: string): string {
  return /READY|DEPLOYED/.test(status) ? 'green' : /FAIL|ERROR/.test(status) ? 'red' : 'blue';
}

export default function Deployments() {
  const session = useSession().data;
  const [opened, { open, close }] = useDisclosure(false);
  // Pages of 100.
  const pages = usePages<number>();
  const list = useQuery({
    ...deploymentsQuery(pages.page),
    refetchInterval: 5000,
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Deployments</Title>
        {canWrite(session) && <Button onClick={open}>New deployment</Button>}
      </Group>
      {list.error && <Alert color="red">{list.error.message}</Alert>}
      <Table.ScrollContainer minWidth={360}>
        <Table striped highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th visibleFrom="sm">Source</Table.Th>
              <Table.Th visibleFrom="sm">Updated</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.data?.resources.map((d) => (
              <Table.Tr key={d.id}>
                <Table.Td>
                  <Anchor component={Link} to={`/deployments/${d.id}`}>
                    {d.name}
                  </Anchor>
                </Table.Td>
                <Table.Td>
                  <Badge color={deploymentColor(d.status)} variant="light">
                    {d.status}
                  </Badge>
                </Table.Td>
                <Table.Td visibleFrom="sm">{d.source}</Table.Td>
                <Table.Td visibleFrom="sm">{new Date(d.updated_at).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      {list.data?.resources.length === 0 && <Text c="dimmed">{pages.page === undefined ? 'No deployments yet.' : 'No more deployments.'}</Text>}
      <PageButtons pages={pages} next={list.data && nextOffset(pages.page, DEPLOYMENTS_PAGE, list.data.resources.length)} />
      <Modal opened={opened} onClose={close} title="New deployment" size="lg">
        <CreateDeployment onDone={close} />
      </Modal>
    </Stack>
  );
}

function CreateDeployment({ onDone }: { onDone: () => void }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  // Every integration (the list answers pages of `{resources, offset}`, 100 at the most).
  const integrations = useQuery({
    queryKey: ['integrations'],
    queryFn: () => allRows(100, async (offset) => ok(await api.GET('/v1/integrations/forge/vcshost', { params: { query: { limit: 100, offset } } })).resources),
  });
  const [integration, setIntegration] = useState<string | null>(null);
  const repos = useQuery({
    queryKey: ['repos', integration],
    enabled: Boolean(integration),
    queryFn: async () => ok(await api.GET('/v1/integrations/forge/vcshost/{integration_id}/repos', { params: { path: { integration_id: integration! } } })),
  });
  const [repo, setRepo] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [ref, setRef] = useState('');
  const repoList = repos.data ?? [];
  const create = useMutation({
    mutationFn: async () =>
      ok(
        await api.POST('/v2/deployments', {
          body: {
            name,
            source: 'vcshost',
            source_config: { integration_id: repoList.find((r) => r.url === repo)?.host_integration_id ?? integration, repo_url: repo },
            source_revision_config: { repo_ref: ref || repoList.find((r) => r.url === repo)?.default_branch || null },
            secrets: [],
          },
        }),
      ),
    onSuccess: (d) => {
      void client.invalidateQueries({ queryKey: ['deployments'] });
      onDone();
      navigate(`/deployments/${d.id}`);
    },
  });
  // Checked here before anything is sent: Mantine's Select `required` does not stop a submit, and the
  // server's answer to an empty form names fields (repo_url, repo_ref) the form does not show.
  const [errors, setErrors] = useState<Partial<Record<'integration' | 'repo' | 'name' | 'ref', string>>>({});
  const chosenRepo = repoList.find((r) => r.url === repo);
  const validate = () => {
    const found: typeof errors = {};
    if (!integration) found.integration = 'Choose an integration';
    if (!repo) found.repo = integration ? 'Choose a repository' : 'Choose an integration first, then one of its repositories';
    if (!/^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(name)) found.name = '1 to 63 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen';
    if (repo && !ref.trim() && !chosenRepo?.default_branch) found.ref = 'This repository has no default branch: name a branch, tag or commit';
    setErrors(found);
    return Object.keys(found).length === 0;
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (validate()) create.mutate();
  };
  const integrationList = integrations.data ?? [];
  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        {integrations.error && <Alert color="red">{integrations.error.message}</Alert>}
        {integrations.data && integrationList.length === 0 && (
          <Alert color="yellow" title="No code-host integrations yet">
            <Text size="sm">
              A deployment is built from a repository of a code-host integration. An admin adds one over the API, <Code>POST /v1/integrations/forge/vcshost</Code>, with{' '}
              <Code>{'{"kind": "github", "token": "ghp_..."}'}</Code> for GitHub or <Code>{'{"kind": "git", "name": "local", "base_url": "/srv/git"}'}</Code> for a directory of bare
              repositories on the server; see docs/deployments.md (Quick start) and docs/oauth-and-integrations.md.
            </Text>
          </Alert>
        )}
        <Select
          label="Integration"
          data={integrationList.map((i) => ({ value: i.id, label: `${i.name} (${i.kind})` }))}
          value={integration}
          onChange={(v) => {
            setIntegration(v);
            setRepo(null);
            setErrors((x) => ({ ...x, integration: undefined }));
          }}
          nothingFoundMessage="No integrations"
          required
          error={errors.integration}
        />
        <Select
          label="Repository"
          data={repoList.map((r) => ({ value: r.url, label: `${r.owner}/${r.name}` }))}
          value={repo}
          onChange={(v) => {
            setRepo(v);
            const r = repoList.find((x) => x.url === v);
            if (r && !name) setName(r.name.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^[^a-z]+/, ''));
            setErrors((x) => ({ ...x, repo: undefined }));
          }}
          disabled={!integration}
          searchable
          required
          error={errors.repo}
        />
        {repos.error && <Alert color="red">{repos.error.message}</Alert>}
        <TextInput label="Deployment name" description="Lowercase letters, digits and hyphens" value={name} onChange={(e) => setName(e.currentTarget.value)} required error={errors.name} />
        <TextInput label="Branch, tag or commit" placeholder={chosenRepo?.default_branch ?? 'default branch'} value={ref} onChange={(e) => setRef(e.currentTarget.value)} error={errors.ref} />
        {create.error && <Alert color="red">{create.error.message}</Alert>}
        <Button type="submit" loading={create.isPending}>
          Create deployment
        </Button>
      </Stack>
    </form>
  );
}
