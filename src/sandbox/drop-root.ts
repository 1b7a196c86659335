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
 * and hold every capability in it.
 */
export function noUserNamespaces(bwrap: string, flags: string[], chdir?: string): string[] {
  return [bwrap, '--unshare-user', ...flags, '--cap-drop', 'ALL', '--dev-bind', '/', '/', ...(chdir ? ['--chdir', chdir] : []), '--'];
}
