import { joiningRole, normalEmail, accountName, removesLastAdmin, type Account, type AccessToken, type Credential, type CredentialKind, type Invite } from '../../domain/accounts.ts';
import type { Accounts, NewAccessToken, SignInFlow } from '../../ports/accounts.ts';

/** An account as the memory adapter keeps it: the world token's hash (null for OIDC users) and the OIDC subject. */
export interface MemoryAccount extends Account {
  readonly token_hash: string | null;
  readonly subject: string | null;
}

/** Sessions and personal tokens by hash, sign-ins under way by their cookie's hash, invites by email. */
export interface MemoryCredentials {
  readonly sessions: Map<string, { readonly user_id: string; readonly expires_at: string }>;
  readonly tokens: Map<string, NewAccessToken & { last_used_at: string | null }>;
  readonly flows: Map<string, SignInFlow>;
  readonly invites: Map<string, Invite>;
}

/** ISO 8601 instants compare as their times. */
const before = (a: string, b: string) => Date.parse(a) < Date.parse(b);

const publicAccount = ({ token_hash: _, subject: __, ...account }: MemoryAccount): Account => account;

/** How long a token's last use may lag: one write a minute at most for a busy script. */
const TOUCH_MS = 60_000;

/** Accounts in memory; each method checks and writes without an `await` in between, so no race splits one. */
export function memoryAccounts(users: Map<string, MemoryAccount>, credentials: MemoryCredentials): Accounts {
  const activeAdmins = () => [...users.values()].filter((u) => u.active && u.role === 'admin').length;

  return {
    async userByCredential(hash, now) {
      const named = (id: string, via: CredentialKind, expires_at: string | null): Credential | null => {
        const user = users.get(id);
        return user !== undefined && user.active ? { id: user.id, name: user.name, via, expires_at } : null;
      };
      for (const user of users.values()) if (user.token_hash === hash) return named(user.id, 'world', null);
      const session = credentials.sessions.get(hash);
      if (session !== undefined) return before(now, session.expires_at) ? named(session.user_id, 'session', session.expires_at) : null;
      const token = credentials.tokens.get(hash);
      if (token === undefined || (token.expires_at !== null && !before(now, token.expires_at))) return null;
      const user = named(token.user_id, 'token', token.expires_at);
      if (user !== null && (token.last_used_at === null || Date.parse(now) - Date.parse(token.last_used_at) >= TOUCH_MS)) token.last_used_at = now;
      return user;
    },

    account: async (userId) => {
      const user = users.get(userId);
      return user === undefined ? null : publicAccount(user);
    },

    async startSession(session) {
      if (users.get(session.user_id)?.active !== true) return false;
      credentials.sessions.set(session.hash, { user_id: session.user_id, expires_at: session.expires_at });
      return true;
    },
    async endSession(hash) {
      credentials.sessions.delete(hash);
    },

    async createToken(token) {
      if (users.get(token.user_id)?.active !== true) return false;
      credentials.tokens.set(token.hash, { ...token, last_used_at: null });
      return true;
    },
    async listTokens(userId) {
      return [...credentials.tokens.values()]
        .filter((t) => t.user_id === userId)
        .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : before(a.created_at, b.created_at) ? 1 : -1))
        .map((t): AccessToken => ({ id: t.id, name: t.name, created_at: t.created_at, expires_at: t.expires_at, last_used_at: t.last_used_at }));
    },
    async revokeToken(userId, tokenId) {
      for (const [hash, token] of credentials.tokens) {
        if (token.id === tokenId && token.user_id === userId) return credentials.tokens.delete(hash);
      }
      return false;
    },

    async saveFlow(flow) {
      // Flows abandoned long ago (an hour before this one ends) are dropped.
      for (const [hash, stored] of credentials.flows) if (Date.parse(flow.expires_at) - Date.parse(stored.expires_at) > 3_600_000) credentials.flows.delete(hash);
      credentials.flows.set(flow.hash, flow);
    },
    async takeFlow(hash, now) {
      const flow = credentials.flows.get(hash);
      if (flow === undefined) return null;
      credentials.flows.delete(hash);
      return before(now, flow.expires_at) ? flow : null;
    },

    async signInIdentity(identity, policy, newId, now) {
      const found = [...users.values()].find((u) => u.issuer === identity.issuer && u.subject === identity.subject);
      if (found !== undefined) {
        if (!found.active) return { ok: false, reason: 'deactivated' };
        const updated: MemoryAccount = { ...found, name: accountName(identity), email: identity.email === null || !identity.email_verified ? found.email : normalEmail(identity.email) };
        users.set(found.id, updated);
        return { ok: true, account: publicAccount(updated), created: false };
      }
      const email = identity.email === null ? null : normalEmail(identity.email);
      const invited = email !== null && credentials.invites.has(email);
      const role = joiningRole(identity, policy, { invited, adminExists: activeAdmins() > 0 });
      if (role === null) return { ok: false, reason: 'not_invited' };
      if (email !== null && identity.email_verified) credentials.invites.delete(email);
      const created: MemoryAccount = {
        id: newId, name: accountName(identity), email, role, active: true, issuer: identity.issuer, created_at: now,
        token_hash: null, subject: identity.subject,
      };
      users.set(newId, created);
      return { ok: true, account: publicAccount(created), created: true };
    },

    async listAccounts({ limit, after }) {
      const all = [...users.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).filter((u) => after === null || u.id > after);
      const items = all.slice(0, limit).map(publicAccount);
      return { items, next: all.length > limit ? items[items.length - 1]!.id : null };
    },

    async changeAccount(userId, change) {
      const user = users.get(userId);
      if (user === undefined) return 'not_found';
      if (removesLastAdmin(user, change, activeAdmins())) return 'last_admin';
      const updated: MemoryAccount = { ...user, active: change.active ?? user.active, role: change.role ?? user.role };
      users.set(userId, updated);
      if (!updated.active) {
        for (const [hash, session] of credentials.sessions) if (session.user_id === userId) credentials.sessions.delete(hash);
        for (const [hash, token] of credentials.tokens) if (token.user_id === userId) credentials.tokens.delete(hash);
      }
      return publicAccount(updated);
    },

    async invite(invite) {
      const email = normalEmail(invite.email);
      const existing = credentials.invites.get(email);
      if (existing !== undefined) return existing;
      const stored = { ...invite, email };
      credentials.invites.set(email, stored);
      return stored;
    },
  };
}
