/**
 * Who is signed in on this page, and what ends it. Browser code.
 *
 * A session cookie goes stale (the token was replaced, the user removed): every request that carries
 * it is then a failed credential, counted against this address's budget (SIGNIN_ATTEMPTS_PER_MINUTE).
 * A page that kept rereading and reconnecting with it would use up that budget on its own, and lock
 * its address (and everyone behind the same NAT) out of signing in. So the first answer that says the
 * credential is refused signs the page out: the sign-in form replaces the screens that poll.
 */
import { signal } from '@preact/signals';

/** The signed-in user: undefined while the page asks, null when signed out (the sign-in form shows). */
export const me = signal<{ readonly id: string; readonly name: string; readonly role: 'admin' | 'member' } | null | undefined>(undefined);

/**
 * Whether an answer refuses the page's credential: 401, or 429 `too_many_sign_ins` (the address used up
 * its failed credentials). Other 429s (too many directives, sockets, connections) say nothing of it.
 */
export async function refusesCredential(response: Response): Promise<boolean> {
  if (response.status === 401) return true;
  if (response.status !== 429) return false;
  const problem: unknown = await response.clone().json().catch(() => null);
  return typeof problem === 'object' && problem !== null && (problem as { code?: unknown }).code === 'too_many_sign_ins';
}

/** Signs the page out (the cookie, if any, is left for the next sign-in to replace). */
export function signedOut(): void {
  me.value = null;
}
