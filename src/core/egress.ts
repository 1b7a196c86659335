// Registration-time use of the outbound guard (src/net/egress.ts): a refused URL is a 422 naming the field.
import { EgressGuard } from '../net/egress.js';
import { invalidField } from './errors.js';

/** The guard of operator commands and tests that build services without one: the laptop default. */
export const laptopEgress = (): EgressGuard => new EgressGuard({ serverHost: '127.0.0.1' });

/** Throw a 422 on `loc` (a body field path) unless the guard would let Hangar call `url`. */
export function checkOutboundUrl(guard: EgressGuard, loc: (string | number)[], url: string): void {
  const problem = guard.urlProblem(url);
  if (problem) throw invalidField(loc, problem, 'url_refused');
}
