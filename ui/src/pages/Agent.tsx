import { Alert, Anchor, Badge, Button, Card, Checkbox, Group, Loader, Modal, Paper, Select, SimpleGrid, Stack, Switch, Tabs, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { diffLines } from 'diff';
import { useEffect, useMemo, useState } from 'react';
import Markdown from 'react-markdown';
import { Link, useNavigate, useParams } from 'react-router';
import { api, ApiError, canWrite, ok, type Schemas } from '../api';
import { useSession } from '../App';
import { PageButtons, usePages } from '../Pager';
import { agentQuery, mcpServersQuery } from '../queries';
import { ServerError } from '../ServerError';
import { ConfirmDialog } from '../Confirm';
import { LoadError } from '../NotFound';

type Agent = Schemas['Agent'];
type Skill = Schemas['SkillSpec'];
type Subagent = Schemas['SubagentSpec'];
type Tools = Schemas['ToolsConfig'];

interface Draft {
  description: string;
  model: string;
  instructions: string;
  tools: Tools;
  skills: Skill[];
  subagents: Subagent[];
}

function draftOf(a: Agent): Draft {
  return {
    description: a.description,
    model: a.runtime.model.model_id,
    instructions: a.instructions,
    tools: { tools: a.tools.tools, interrupt_config: a.tools.interrupt_config },
    skills: a.skills,
    subagents: a.subagents,
  };
}

export default function AgentPage() {
  const { agentId = '' } = useParams();
  const session = useSession().data;
  const writable = canWrite(session);
  const client = useQueryClient();
  const navigate = useNavigate();
  const agent = useQuery(agentQuery(agentId));
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  useEffect(() => {
    if (agent.data) setDraft(draftOf(agent.data));
  }, [agent.data]);
  const dirty = useMemo(() => agent.data && draft && JSON.stringify(draftOf(agent.data)) !== JSON.stringify(draft), [agent.data, draft]);

  const save = useMutation({
    mutationFn: async () => {
      // Only what changed is sent: the server writes (and its revision message names) what it is sent.
      const d = draft!;
      const a = agent.data!;
      const was = draftOf(a);
      const changed = <K extends keyof Draft>(key: K) => JSON.stringify(d[key]) !== JSON.stringify(was[key]);
      return ok(
        await api.PATCH('/v1/deepagents/agents/{agent_id}', {
          // Only over the revision the draft started from: a change saved meanwhile (another tab, a
          // push) is never overwritten unseen (412, and the draft stays).
          params: { path: { agent_id: agentId }, header: { 'if-match': `"${a.revision}"` } },
          body: {
            ...(changed('description') ? { description: d.description } : {}),
            // The rest of the runtime (a run time limit, model parameters) stays as it is.
            ...(changed('model') ? { runtime: { ...a.runtime, model: { ...a.runtime.model, model_id: d.model } } } : {}),
            ...(changed('instructions') ? { instructions: d.instructions } : {}),
            ...(changed('tools') ? { tools: d.tools } : {}),
            ...(changed('skills') ? { skills: d.skills } : {}),
            ...(changed('subagents') ? { subagents: d.subagents } : {}),
          },
        }),
      );
    },
    onSuccess: async (a) => {
      client.setQueryData(['agent', agentId], a);
      await client.invalidateQueries({ queryKey: ['revisions', agentId] });
      setSaved(a.revision);
    },
  });
  const clone = useMutation({
    mutationFn: async () => {
      const a = agent.data!;
      return ok(
        await api.POST('/v1/deepagents/agents', {
          body: { name: `${a.name} (copy)`, description: a.description, runtime: a.runtime, instructions: a.instructions, tools: a.tools, skills: a.skills, subagents: a.subagents },
        }),
      );
    },
    onSuccess: (a) => {
      void client.invalidateQueries({ queryKey: ['agents'] });
      navigate(`/agents/${a.id}`);
    },
  });
  const [confirmOpen, confirm] = useDisclosure(false);
  const remove = useMutation({
    mutationFn: async () => ok(await api.DELETE('/v1/deepagents/agents/{agent_id}', { params: { path: { agent_id: agentId } } })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: ['agents'] });
      navigate('/agents');
    },
  });

  const reload = async () => {
    save.reset();
    await agent.refetch();
    await client.invalidateQueries({ queryKey: ['revisions', agentId] });
  };

  if (agent.isPending) return <Loader aria-label="Loading agent" />;
  if (agent.error) return <LoadError error={agent.error} kind="agentId" />;
  if (!draft) return null;
  const a = agent.data;
  const set = (patch: Partial<Draft>) => {
    setSaved(null);
    // A refused save's error is about the draft it was sent: an edit makes it stale (a change made
    // meanwhile elsewhere stays said until the latest revision is loaded).
    if (save.error && !(save.error instanceof ApiError && save.error.status === 412)) save.reset();
    setDraft({ ...draft, ...patch });
  };
  return (
    <Stack>
      <Group justify="space-between" align="flex-start">
        <div>
          <Anchor component={Link} to="/agents" size="sm">
            ← Agents
          </Anchor>
          <Title order={2} className="wrap-anywhere">
            {a.name}
          </Title>
          <Text size="xs" c="dimmed">
            revision {a.revision.slice(0, 7)}
          </Text>
        </div>
        <Group gap="xs">
          <Button component={Link} to={`/agents/${a.id}/playground`} variant="filled">
            Open playground
          </Button>
          <Button component={Link} to={`/agents/${a.id}/memories`} variant="default">
            Memories
          </Button>
          <Button component={Link} to={`/schedules?agent=${a.id}`} variant="default">
            Schedules
          </Button>
          {writable && (
            <>
              <Button variant="default" onClick={() => clone.mutate()} loading={clone.isPending}>
                Clone
              </Button>
              <Button variant="light" color="red" onClick={confirm.open}>
                Delete
              </Button>
            </>
          )}
        </Group>
      </Group>
      {writable && (
        <Group>
          <Button onClick={() => save.mutate()} disabled={!dirty} loading={save.isPending}>
            Save
          </Button>
          {dirty && <Text size="sm">Unsaved changes</Text>}
          {saved && (
            <Text size="sm" role="status">
              Saved as revision {saved.slice(0, 7)}
            </Text>
          )}
        </Group>
      )}
      {save.error instanceof ApiError && save.error.status === 412 ? (
        <Alert color="red" title="Not saved: this agent was changed meanwhile">
          <Stack gap="xs" align="flex-start">
            <Text size="sm">Someone saved a newer revision since this page read revision {a.revision.slice(0, 7)}. Your changes are still here; copy what you need, then load the latest revision and make them again.</Text>
            <Button size="compact-sm" variant="default" onClick={() => void reload()} loading={agent.isFetching}>
              Load the latest revision (discards your changes)
            </Button>
          </Stack>
        </Alert>
      ) : (
        (save.error || clone.error || remove.error) && <ServerError error={(save.error ?? clone.error ?? remove.error)!} />
      )}
      <Tabs defaultValue="instructions" keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="instructions">AGENTS.md</Tabs.Tab>
          <Tabs.Tab value="tools">Tools</Tabs.Tab>
          <Tabs.Tab value="skills">Skills</Tabs.Tab>
          <Tabs.Tab value="subagents">Subagents</Tabs.Tab>
          <Tabs.Tab value="revisions">Revisions</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="instructions" pt="md">
          <Stack>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput label="Description" value={draft.description} onChange={(e) => set({ description: e.currentTarget.value })} readOnly={!writable} />
              <TextInput label="Model" value={draft.model} onChange={(e) => set({ model: e.currentTarget.value })} readOnly={!writable} />
            </SimpleGrid>
            <SimpleGrid cols={{ base: 1, md: 2 }}>
              <Textarea
                label="Instructions (AGENTS.md)"
                autosize
                minRows={12}
                value={draft.instructions}
                onChange={(e) => set({ instructions: e.currentTarget.value })}
                readOnly={!writable}
                styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
              />
              <Paper withBorder p="sm" aria-label="Preview">
                <Text size="xs" c="dimmed" mb="xs">
                  Preview
                </Text>
                <div className="markdown-preview">
                  <Markdown>{draft.instructions}</Markdown>
                </div>
              </Paper>
            </SimpleGrid>
          </Stack>
        </Tabs.Panel>
        <Tabs.Panel value="tools" pt="md">
          <ToolPicker tools={draft.tools} onChange={(tools) => set({ tools })} writable={writable} />
        </Tabs.Panel>
        <Tabs.Panel value="skills" pt="md">
          <NamedList
            kind="skill"
            items={draft.skills}
            writable={writable}
            onChange={(skills) => set({ skills: skills as Skill[] })}
            make={(name) => ({ name, description: '', instructions: '' })}
          />
        </Tabs.Panel>
        <Tabs.Panel value="subagents" pt="md">
          <NamedList
            kind="subagent"
            items={draft.subagents}
            writable={writable}
            onChange={(subagents) => set({ subagents: subagents as Subagent[] })}
            make={(name) => ({ name, description: '', instructions: '' })}
          />
        </Tabs.Panel>
        <Tabs.Panel value="revisions" pt="md">
          <Revisions
            agentId={agentId}
            head={a.revision}
            writable={writable}
            dirty={Boolean(dirty)}
            onRestored={(restored) => {
              save.reset();
              client.setQueryData(['agent', agentId], restored);
              setSaved(restored.revision);
            }}
          />
        </Tabs.Panel>
      </Tabs>
      <Modal opened={confirmOpen} onClose={confirm.close} title="Delete agent">
        <Stack>
          <Text>Delete {a.name}? Its threads stay readable but cannot run again.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={confirm.close}>
              Cancel
            </Button>
            <Button color="red" onClick={() => remove.mutate()} loading={remove.isPending}>
              Delete agent
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}

/** Skills and subagents: name, description and instructions each, added and removed here. */
function NamedList({
  kind,
  items,
  writable,
  onChange,
  make,
}: {
  kind: string;
  items: { name: string; description?: string; instructions?: string; model_id?: string }[];
  writable: boolean;
  onChange: (items: { name: string; description?: string; instructions?: string }[]) => void;
  make: (name: string) => { name: string; description: string; instructions: string };
}) {
  const [name, setName] = useState('');
  const update = (i: number, patch: Record<string, string>) => onChange(items.map((it, j) => (j === i ? { ...it, ...patch } : it)));
  return (
    <Stack>
      {items.length === 0 && <Text c="dimmed">No {kind}s.</Text>}
      {items.map((it, i) => (
        <Card withBorder key={i}>
          <Stack gap="xs">
            <Group justify="space-between">
              <Text fw={600}>{it.name}</Text>
              {writable && (
                <Button size="compact-sm" variant="subtle" color="red" onClick={() => onChange(items.filter((_, j) => j !== i))} aria-label={`Remove ${kind} ${it.name}`}>
                  Remove
                </Button>
              )}
            </Group>
            <TextInput label={`Description of ${it.name}`} value={it.description ?? ''} onChange={(e) => update(i, { description: e.currentTarget.value })} readOnly={!writable} />
            {kind === 'subagent' && (
              <TextInput
                label={`Model of ${it.name}`}
                placeholder="inherits the agent's model"
                value={it.model_id ?? ''}
                onChange={(e) => update(i, { model_id: e.currentTarget.value })}
                readOnly={!writable}
              />
            )}
            <Textarea label={`Instructions of ${it.name}`} autosize minRows={3} value={it.instructions ?? ''} onChange={(e) => update(i, { instructions: e.currentTarget.value })} readOnly={!writable} />
          </Stack>
        </Card>
      ))}
      {writable && (
        // A form of its own: Enter in the name adds, as the button does.
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (!name.trim()) return;
            onChange([...items, make(name.trim())]);
            setName('');
          }}
        >
          <Group align="flex-end">
            <TextInput label={`New ${kind} name`} value={name} onChange={(e) => setName(e.currentTarget.value)} />
            <Button type="submit" variant="default" disabled={!name.trim()}>
              Add {kind}
            </Button>
          </Group>
        </form>
      )}
    </Stack>
  );
}

function interruptKey(url: string, name: string): string {
  return `${url}::${name}`;
}

/** tools.json through a picker fed by the registered tool servers' own tool lists. */
function ToolPicker({ tools, onChange, writable }: { tools: Tools; onChange: (t: Tools) => void; writable: boolean }) {
  const servers = useQuery(mcpServersQuery);
  const chosen = (url: string, name: string) => tools.tools.some((t) => t.mcp_server_url === url && t.name === name);
  const toggle = (url: string, serverName: string, name: string, on: boolean) => {
    const rest = tools.tools.filter((t) => !(t.mcp_server_url === url && t.name === name));
    const interrupt = { ...tools.interrupt_config };
    if (!on) delete interrupt[interruptKey(url, name)];
    onChange({ tools: on ? [...rest, { name, mcp_server_url: url, mcp_server_name: serverName }] : rest, interrupt_config: interrupt });
  };
  const setApproval = (url: string, name: string, on: boolean) => {
    const interrupt = { ...tools.interrupt_config };
    if (on) interrupt[interruptKey(url, name)] = true;
    else delete interrupt[interruptKey(url, name)];
    onChange({ ...tools, interrupt_config: interrupt });
  };
  const needsApproval = (url: string, name: string) => Boolean(tools.interrupt_config[interruptKey(url, name)] ?? tools.interrupt_config[name]);
  return (
    <Stack>
      <Text size="sm" c="dimmed">
        Pick tools from the registered tool servers. "Approval" makes a person approve each call first.
      </Text>
      {servers.data?.length === 0 && (
        <Text>
          No tool servers yet. <Anchor component={Link} to="/tool-servers">Register one</Anchor>.
        </Text>
      )}
      {servers.data?.map((s) => (
        <ServerTools key={s.id} server={s} writable={writable} chosen={chosen} toggle={toggle} needsApproval={needsApproval} setApproval={setApproval} />
      ))}
      {tools.tools.some((t) => !servers.data?.some((s) => s.url === t.mcp_server_url)) && (
        <Alert color="yellow">Some tools name a server that is not registered: {tools.tools.filter((t) => !servers.data?.some((s) => s.url === t.mcp_server_url)).map((t) => t.name).join(', ')}</Alert>
      )}
    </Stack>
  );
}

function ServerTools(props: {
  server: Schemas['McpServer'];
  writable: boolean;
  chosen: (url: string, name: string) => boolean;
  toggle: (url: string, serverName: string, name: string, on: boolean) => void;
  needsApproval: (url: string, name: string) => boolean;
  setApproval: (url: string, name: string, on: boolean) => void;
}) {
  const { server: s } = props;
  const listed = useQuery({
    queryKey: ['mcp-tools', s.id],
    queryFn: async () => ok(await api.GET('/v1/deepagents/mcp-servers/{mcp_server_id}/tools', { params: { path: { mcp_server_id: s.id } } })),
    enabled: s.can_invoke,
  });
  return (
    <Card withBorder>
      <Text fw={600}>{s.name}</Text>
      <Text size="xs" c="dimmed" className="wrap-anywhere" mb="xs">
        {s.url}
      </Text>
      {listed.isPending && s.can_invoke && <Loader size="sm" aria-label={`Loading tools of ${s.name}`} />}
      {listed.error && <Alert color="red">{listed.error.message}</Alert>}
      <Stack gap={6}>
        {listed.data?.tools.map((t) => {
          const on = props.chosen(s.url, t.name);
          return (
            <Group key={t.name} justify="space-between" wrap="nowrap">
              <Checkbox
                label={t.name}
                description={t.description}
                checked={on}
                disabled={!props.writable}
                onChange={(e) => props.toggle(s.url, s.name, t.name, e.currentTarget.checked)}
              />
              <Switch
                label="Approval"
                aria-label={`Require approval for ${t.name}`}
                checked={props.needsApproval(s.url, t.name)}
                disabled={!props.writable || !on}
                onChange={(e) => props.setApproval(s.url, t.name, e.currentTarget.checked)}
              />
            </Group>
          );
        })}
      </Stack>
    </Card>
  );
}

/** Revisions, newest first in pages of 100, a diff between any two of them, and going back to one. */
function Revisions({ agentId, head, writable, dirty, onRestored }: { agentId: string; head: string; writable: boolean; dirty: boolean; onRestored: (a: Agent) => void }) {
  const pages = usePages<string>();
  const client = useQueryClient();
  // Going back to a revision is a new revision with that revision's agent (nothing is deleted), made
  // only over the head this page shows.
  const [restoring, setRestoring] = useState<{ id: string; number: number } | null>(null);
  const restore = useMutation({
    mutationFn: async ({ id: revision, number }: { id: string; number: number }) => {
      const old = await client.fetchQuery({
        queryKey: ['revision', agentId, revision],
        queryFn: async () => ok(await api.GET('/v1/deepagents/agents/{agent_id}/revisions/{revision}', { params: { path: { agent_id: agentId, revision } } })),
        staleTime: Infinity,
      });
      return ok(
        await api.PATCH('/v1/deepagents/agents/{agent_id}', {
          params: { path: { agent_id: agentId }, header: { 'if-match': `"${head}"` } },
          body: {
            name: old.name,
            description: old.description,
            runtime: old.runtime,
            extras: old.extras,
            instructions: old.instructions,
            tools: old.tools,
            skills: old.skills,
            subagents: old.subagents,
            // The new revision says what it is, not only which fields it changed.
            message: `Restore revision #${number} (${revision.slice(0, 7)})`,
          },
        }),
      );
    },
    onSuccess: async (a) => {
      setRestoring(null);
      onRestored(a);
      await client.invalidateQueries({ queryKey: ['revisions', agentId] });
    },
  });
  const closeRestore = () => {
    setRestoring(null);
    restore.reset();
  };
  const revisions = useQuery({
    queryKey: ['revisions', agentId, pages.page],
    queryFn: async () =>
      ok(await api.GET('/v1/deepagents/agents/{agent_id}/revisions', { params: { path: { agent_id: agentId }, query: { page_size: 100, ...(pages.page ? { cursor: pages.page } : {}) } } })),
  });
  const items = revisions.data?.items;
  const [from, setFrom] = useState<string | null>(null);
  const [to, setTo] = useState<string | null>(null);
  // The revisions of every page shown so far: the two compared may be on different pages.
  const [seen, setSeen] = useState<Map<string, { number: number; label: string }>>(new Map());
  useEffect(() => {
    if (!items?.length) return;
    setSeen((known) => new Map([...known, ...items.map((r) => [r.id, { number: r.number, label: `#${r.number} ${r.id.slice(0, 7)} — ${r.message}` }] as const)]));
    if (!to) {
      setTo(items[0]!.id);
      setFrom(items[1]?.id ?? items[0]!.id);
    }
  }, [items, to]);
  // A new head (saved or restored while this tab is shown) is compared with the one before it: the
  // diff shown stayed on the old pair.
  const [shownHead, setShownHead] = useState(head);
  if (shownHead !== head) {
    setShownHead(head);
    setFrom(shownHead);
    setTo(head);
  }
  const options = [...seen].sort(([, a], [, b]) => b.number - a.number).map(([value, { label }]) => ({ value, label }));
  return (
    <Stack>
      <Stack gap={4} aria-label="Revision list">
        {items?.map((r) => (
          <Group key={r.id} gap="xs" wrap="nowrap" align="flex-start">
            {/* The number and id keep their width: only the message wraps (the badge once shrank to "#…"). */}
            <Badge variant="light" className="no-shrink">
              #{r.number}
            </Badge>
            <Text size="sm" ff="monospace" className="no-shrink">
              {r.id.slice(0, 7)}
            </Text>
            <Text size="sm" className="wrap-anywhere">
              {r.message} · {new Date(r.created_at).toLocaleString()} · {r.changed_paths.join(', ')}
            </Text>
            {r.id === head ? (
              <Badge variant="outline" className="no-shrink">
                current
              </Badge>
            ) : (
              writable && (
                <Button size="compact-xs" variant="default" className="no-shrink" onClick={() => setRestoring({ id: r.id, number: r.number })} aria-label={`Restore revision #${r.number}`}>
                  Restore
                </Button>
              )
            )}
          </Group>
        ))}
      </Stack>
      <ConfirmDialog
        opened={restoring !== null}
        onClose={closeRestore}
        title="Restore a revision"
        confirmLabel={`Restore #${restoring?.number ?? ''}`}
        onConfirm={() => restoring && restore.mutate(restoring)}
        pending={restore.isPending}
        error={restore.error}
      >
        <Text>
          Make the agent as it was at revision #{restoring?.number} ({restoring?.id.slice(0, 7)}): its name, description, model, instructions, tools, skills and subagents. This saves a new revision; every revision stays in the history.
        </Text>
        {dirty && <Text c="red">Your unsaved changes on this page are discarded.</Text>}
      </ConfirmDialog>
      <PageButtons pages={pages} next={revisions.data?.next_cursor} />
      <SimpleGrid cols={{ base: 1, sm: 2 }}>
        <Select label="From revision" data={options} value={from} onChange={setFrom} allowDeselect={false} />
        <Select label="To revision" data={options} value={to} onChange={setTo} allowDeselect={false} />
      </SimpleGrid>
      {from && to && <RevisionDiff agentId={agentId} from={from} to={to} />}
    </Stack>
  );
}

function useRevision(agentId: string, revision: string) {
  return useQuery({
    queryKey: ['revision', agentId, revision],
    queryFn: async () => ok(await api.GET('/v1/deepagents/agents/{agent_id}/revisions/{revision}', { params: { path: { agent_id: agentId, revision } } })),
    staleTime: Infinity,
  });
}

function RevisionDiff({ agentId, from, to }: { agentId: string; from: string; to: string }) {
  const a = useRevision(agentId, from);
  const b = useRevision(agentId, to);
  if (a.isPending || b.isPending) return <Loader size="sm" aria-label="Loading diff" />;
  if (a.error || b.error) return <Alert color="red">{(a.error ?? b.error)!.message}</Alert>;
  const fa = a.data.files ?? {};
  const fb = b.data.files ?? {};
  const paths = [...new Set([...Object.keys(fa), ...Object.keys(fb)])].sort();
  const changed = paths.filter((p) => (fa[p]?.content ?? null) !== (fb[p]?.content ?? null));
  if (changed.length === 0) return <Text c="dimmed">No differences.</Text>;
  return (
    <Stack aria-label="Diff">
      {changed.map((p) => (
        <Paper withBorder key={p}>
          <Text size="sm" fw={600} p={6} ff="monospace">
            {p}
          </Text>
          {diffLines(fa[p]?.content ?? '', fb[p]?.content ?? '').map((part, i) =>
            part.value
              .replace(/\n$/, '')
              .split('\n')
              .map((line, j) => (
                <div key={`${i}-${j}`} className={`diff-line ${part.added ? 'diff-add' : part.removed ? 'diff-del' : ''}`}>
                  {part.added ? '+ ' : part.removed ? '- ' : '  '}
                  {line}
                </div>
              )),
          )}
        </Paper>
      ))}
    </Stack>
  );
}
