import { AppShell, Badge, Burger, Button, Group, NavLink, ScrollArea, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { useQueryClient } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'react-router';
import { api, setCsrfToken, type Session } from './api';

const LINKS = [
  { to: '/agents', label: 'Agents' },
  { to: '/schedules', label: 'Schedules' },
  { to: '/traces', label: 'Traces' },
  { to: '/tool-servers', label: 'Tool servers' },
  { to: '/deployments', label: 'Deployments' },
  { to: '/usage', label: 'Usage' },
  { to: '/settings', label: 'Settings' },
];

/**
 * Who is signed in, as a person knows it: the principal the key was created for (`--principal
 * alice@example.com`), else the key's description, else its prefix (as Settings lists keys). A key
 * made without a principal acts for itself: its principal is its id, which nobody recognises.
 */
export function signedInAs(session: Session): string {
  if (session.principal !== session.key_id) return session.principal;
  return session.key_description ? `${session.key_description} (${session.key_prefix}…)` : `Key ${session.key_prefix}…`;
}

export function Shell({ session, children }: { session: Session; children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure();
  const location = useLocation();
  const client = useQueryClient();
  const signOut = async () => {
    await api.DELETE('/v1/console/session');
    setCsrfToken(null);
    client.setQueryData(['session'], null);
    client.removeQueries({ predicate: (q) => q.queryKey[0] !== 'session' });
  };
  return (
    <AppShell header={{ height: 52 }} navbar={{ width: 200, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={1} size="h4">
              Hangar
            </Title>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <Text size="sm" visibleFrom="xs" className="wrap-anywhere" title={`Principal ${session.principal}; key ${session.key_prefix}…`}>
              {signedInAs(session)}
            </Text>
            <Badge variant="light" aria-label={`Role: ${session.role}`}>
              {session.role}
            </Badge>
            <Button variant="subtle" size="compact-sm" onClick={signOut}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        <ScrollArea>
          {LINKS.map((l) => (
            <NavLink
              key={l.to}
              component={Link}
              to={l.to}
              label={l.label}
              active={location.pathname === l.to || location.pathname.startsWith(`${l.to}/`)}
              onClick={close}
            />
          ))}
        </ScrollArea>
      </AppShell.Navbar>
      {/* AppShell.Main is the page's one <main> landmark. */}
      <AppShell.Main>{children}</AppShell.Main>
    </AppShell>
  );
}
