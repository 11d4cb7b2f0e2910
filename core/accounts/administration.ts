import type { Account, Invite, Role } from '../../domain/accounts.ts';
import { normalEmail } from '../../domain/accounts.ts';
import type { AccountChange, AccountPage, Accounts } from '../../ports/accounts.ts';
import type { Clock } from '../../ports/clock.ts';

/** What an admin's request gets: the answer, or `forbidden` for a caller who is not an active admin. */
export type AdminAnswer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: 'forbidden' };

/**
 * What admins do: list accounts, deactivate or reactivate one, change a role, invite an email. The caller's
 * role is read on every request (never from a cookie or a cache), so a demotion takes effect at once.
 */
export function administration(options: {
  readonly accounts: Accounts;
  readonly clock: Clock;
  /** Told of a user whose credentials changed (live sockets are checked again). */
  readonly changed: (userId: string) => void;
}) {
  const { accounts } = options;
  const asAdmin = async <T>(callerId: string, work: () => Promise<T>): Promise<AdminAnswer<T>> => {
    const caller = await accounts.account(callerId);
    if (caller === null || !caller.active || caller.role !== 'admin') return { ok: false, reason: 'forbidden' };
    return { ok: true, value: await work() };
  };
  return {
    list: (callerId: string, page: { readonly limit: number; readonly after: string | null }): Promise<AdminAnswer<AccountPage>> =>
      asAdmin(callerId, () => accounts.listAccounts(page)),
    change: (callerId: string, userId: string, change: { readonly active?: boolean; readonly role?: Role }): Promise<AdminAnswer<AccountChange>> =>
      asAdmin(callerId, async () => {
        const changed = await accounts.changeAccount(userId, change);
        if (typeof changed !== 'string' && !changed.active) options.changed(userId);
        return changed;
      }),
    invite: (callerId: string, email: string): Promise<AdminAnswer<Invite>> =>
      asAdmin(callerId, () => accounts.invite({ email: normalEmail(email), invited_by: callerId, created_at: new Date(options.clock.now()).toISOString() })),
    /** The caller's own account (its role, for the console to show the admin page or not). */
    me: (callerId: string): Promise<Account | null> => accounts.account(callerId),
  };
}

export type Administration = ReturnType<typeof administration>;
