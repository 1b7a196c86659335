// Descriptors Hangar inherited from whoever started it (a supervisor, a CI runner, a shell) that are
// not marked close-on-exec: every child Hangar starts inherits them too (libuv closes nothing on
// spawn), and bubblewrap hands whatever it inherits on to the command in the sandbox, by design. An
// open file there reads without any permission check, an open socket talks past the network
// namespace. Node marks the low descriptors it finds at start close-on-exec, not the others.
//
// Node has no call to close a range of descriptors in a child; what it does have is `stdio`: every
// position given a descriptor is dup2()ed over in the child. So each such descriptor is replaced by
// /dev/null (read-only) in the child, before bubblewrap runs.
import { openSync, readdirSync, readFileSync } from 'node:fs';

const O_CLOEXEC = 0o2000000;

let found: number[] | undefined;
let devNull: number | undefined;

/**
 * Descriptors above 2 of this process that a child would inherit (not close-on-exec), found once
 * (Hangar opens every descriptor of its own close-on-exec, so only inherited ones are). Linux: read
 * from /proc; none elsewhere.
 */
export function inheritableFds(): number[] {
  if (found) return found;
  const fds: number[] = [];
  let names: string[] = [];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    // No /proc: nothing to find.
  }
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
      if (flags && (Number.parseInt(flags[1]!, 8) & O_CLOEXEC) === 0) fds.push(fd);
    } catch {
      // Closed meanwhile (the listing's own descriptor).
    }
  }
  return (found = fds);
}

/**
 * The `stdio` option of a child: `first` (its descriptors 0, 1, 2…), then /dev/null in place of
 * every descriptor this process inherited (see above), so that the child gets none of them.
 */
export function stdioWithoutInherited(first: ('pipe' | 'ignore' | 'ipc')[]): ('pipe' | 'ignore' | 'ipc' | number)[] {
  const fds = inheritableFds().filter((fd) => fd >= first.length);
  if (fds.length === 0) return first;
  devNull ??= openSync('/dev/null', 'r');
  const stdio: ('pipe' | 'ignore' | 'ipc' | number)[] = [...first];
  const last = Math.max(...fds);
  const inherited = new Set(fds);
  for (let fd = first.length; fd <= last; fd++) stdio.push(inherited.has(fd) ? devNull : 'ignore');
  return stdio;
}
