import { Alert, Button, Center, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok, setCsrfToken } from '../api';

/** Sign in with an API key; the server answers with an HttpOnly cookie. The key is not kept. */
export function SignIn() {
  const client = useQueryClient();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = ok(await api.POST('/v1/console/session', { body: { api_key: key.trim() } }));
      setKey('');
      setCsrfToken(session.csrf_token);
      client.setQueryData(['session'], session); // the app then leaves /sign-in for ?next
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Center mih="100vh" p="md">
      <main style={{ width: '100%', maxWidth: 420 }}>
        <Paper withBorder p="lg" radius="md" component="form" onSubmit={submit}>
          <Stack>
            <Title order={1} size="h3">
              Sign in to Hangar
            </Title>
            <Text size="sm" c="dimmed">
              Use an API key: the one <code>hangar serve</code> printed on first start, or one from <code>hangar keys create</code>.
            </Text>
            <PasswordInput label="API key" value={key} onChange={(e) => setKey(e.currentTarget.value)} required autoComplete="off" autoFocus />
            {error && (
              <Alert color="red" role="alert" title="Could not sign in">
                {error}
              </Alert>
            )}
            <Button type="submit" loading={busy}>
              Sign in
            </Button>
          </Stack>
        </Paper>
      </main>
    </Center>
  );
}
