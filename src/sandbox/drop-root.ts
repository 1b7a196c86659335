// How a command started by root inside bubblewrap gives root up, shared by the local sandbox driver
// (src/sandbox/local/index.ts) and the local deployment driver (src/deploy/local/confine.ts). As
// root, bwrap makes no user namespace (one would map the command to root on the host), so the
// command would be uid 0: without capabilities, still the owner of every root-owned file.

/**
 * `setpriv` arguments (before the command) that drop to user and group `uid`: no supplementary
 * groups, no capabilities (inheritable or bounding), no_new_privs (set-uid programs grant nothing).
 */
export function dropRoot(setpriv: string, uid: number): string[] {
  return [setpriv, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--'];
}

/**
 * Arguments (before the command) of a second, unprivileged bwrap run as that user over the same view,
 * only for a user namespace with no capabilities in which further ones are forbidden (`flags`:
 * `--disable-userns`, bwrap 0.8 and later): otherwise the command could make one (`unshare -Ur`)
 * and hold every capability in it. `more`: further bwrap options (the local sandbox driver's read-only
 * /proc and seccomp filter, which this bwrap applies as the last step before the command).
 */
export function noUserNamespaces(bwrap: string, flags: string[], chdir?: string, more: string[] = []): string[] {
  return [bwrap, '--unshare-user', ...flags, '--cap-drop', 'ALL', '--dev-bind', '/', '/', ...more, ...(chdir ? ['--chdir', chdir] : []), '--'];
}

/**
 * Whether the second bwrap (`noUserNamespaces`) can run here as the dropped user: `asUser` runs a
 * command as that user and says whether it succeeded. Where it cannot (user namespaces disabled for
 * that user, or without capabilities as under Ubuntu's AppArmor rule) there is usually nothing to
 * forbid; if a command could still make a user namespace, `warn` is told, naming `who` runs such
 * commands and `whose` user bwrap could not act as.
 */
export async function canForbidUserNamespaces(o: {
  asUser: (command: string[]) => Promise<boolean>;
  bwrap: string;
  flags: string[];
  warn?: ((message: string) => void) | undefined;
  who: string;
  whose: string;
}): Promise<boolean> {
  if (await o.asUser([...noUserNamespaces(o.bwrap, o.flags), 'true'])) return true;
  if (await o.asUser(['unshare', '--user', '--map-root-user', 'true'])) {
    o.warn?.(`${o.who} can create user namespaces of their own: bubblewrap cannot forbid it here, as it cannot make one as ${o.whose} user`);
  }
  return false;
}
