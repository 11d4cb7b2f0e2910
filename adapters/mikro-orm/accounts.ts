import type { MikroORM } from '@mikro-orm/postgresql';
import { accountName, joiningRole, normalEmail, removesLastAdmin, type Account, type AccessToken, type Credential, type Invite, type OidcIdentity } from '../../domain/accounts.ts';
import type { Accounts, IdentitySignIn, SignInFlow } from '../../ports/accounts.ts';
import { iso, isUuid, prepared, runStatement } from './sql.ts';
import { transaction, type Statement } from './transaction.ts';

const ACCOUNT = `id, name, email, role, active, issuer, ${iso('created_at')} as created_at`;
const TOKEN = `id, name, ${iso('created_at')} as created_at, ${iso('expires_at')} as expires_at, ${iso('last_used_at')} as last_used_at`;
const FLOW = `hash, state, nonce, code_verifier, redirect_uri, ${iso('expires_at')} as expires_at`;
const INVITE = `email, invited_by, ${iso('created_at')} as created_at`;

/** How long a token's last use may lag: one write a minute at most for a busy script. */
const TOUCH_SECONDS = 60;

/**
 * The credential lookup, one statement, each branch one unique-index lookup: a world token on
 * `users.token_hash`, a session on its key, a personal token on `access_tokens.hash`, each joined to its
 * user by primary key, active users only. The token's `last_used_at` is written by a CTE in the same
 * statement, only when it is unset or a minute old; concurrent uses of one token queue on its row lock
 * and then re-check the condition on the row the first wrote, so a burst writes once.
 */
const BY_CREDENTIAL = `
  with touched as (
    update access_tokens set last_used_at = ?
    where hash = ? and (expires_at is null or expires_at > ?)
      and (last_used_at is null or last_used_at <= ?::timestamptz - interval '${TOUCH_SECONDS} seconds')
    returning 1)
  select id, name, 'world' as via, null as expires_at from users where token_hash = ? and active
  union all
  select u.id, u.name, 'session', ${iso('s.expires_at')} from sessions s join users u on u.id = s.user_id where s.hash = ? and s.expires_at > ? and u.active
  union all
  select u.id, u.name, 'token', ${iso('t.expires_at')} from access_tokens t join users u on u.id = t.user_id
    where t.hash = ? and (t.expires_at is null or t.expires_at > ?) and u.active
  limit 1`;

/** Prepared: every request reads it. */
const BY_CREDENTIAL_PREPARED = prepared(BY_CREDENTIAL);

/** The first row, or null: mapped as the statement settles, so the lookup adds no promise of its own. */
const first = <T>(rows: T[]): T | null => rows[0] ?? null;

/**
 * Accounts in `users`, credentials in `sessions` and `access_tokens` (each by its SHA-256), sign-ins under
 * way in `sign_in_flows`, invitations in `invites`. The decisions that race are each one transaction
 * whose conflicts meet on an index or a row lock: a first sign-in on the unique (issuer, subject) index,
 * an admin's change on the locked admin rows.
 */
export function mikroOrmAccounts(orm: MikroORM): Accounts {
  return {
    userByCredential: (hash, now) =>
      runStatement<Credential, Credential | null>(orm, BY_CREDENTIAL_PREPARED,
        [now, hash, now, now, hash, hash, now, hash, now], first),

    account: (userId) => runStatement<Account, Account | null>(orm, `select ${ACCOUNT} from users where id = ?`, [userId], first),

    // Each insert reads its user active under a share lock, which an admin's deactivation (the row locked for
    // update) waits for or makes wait: a session or token is never stored for a user deactivated meanwhile.
    startSession: (session) =>
      transaction(orm, async (sql) => {
        if ((await sql('select 1 from users where id = ? and active for share', [session.user_id])).length === 0) return false;
        await sql('insert into sessions (hash, user_id, created_at, expires_at) values (?, ?, ?, ?)', [session.hash, session.user_id, session.created_at, session.expires_at]);
        return true;
      }),
    async endSession(hash) {
      await runStatement(orm, 'delete from sessions where hash = ?', [hash]);
    },

    createToken: (token) =>
      transaction(orm, async (sql) => {
        if ((await sql('select 1 from users where id = ? and active for share', [token.user_id])).length === 0) return false;
        await sql('insert into access_tokens (id, user_id, name, hash, created_at, expires_at) values (?, ?, ?, ?, ?, ?)',
          [token.id, token.user_id, token.name, token.hash, token.created_at, token.expires_at]);
        return true;
      }),
    listTokens: (userId) =>
      runStatement<AccessToken>(orm, `select ${TOKEN} from access_tokens where user_id = ? order by access_tokens.created_at desc, id desc`, [userId]),
    revokeToken: async (userId, tokenId) =>
      isUuid(tokenId) && (await runStatement(orm, 'delete from access_tokens where id = ? and user_id = ? returning 1', [tokenId, userId])).length > 0,

    async saveFlow(flow) {
      // Flows abandoned long ago (ended an hour before this one ends) are dropped by the same statement.
      await runStatement(orm, `
        with gone as (delete from sign_in_flows where expires_at < ?::timestamptz - interval '1 hour')
        insert into sign_in_flows (hash, state, nonce, code_verifier, redirect_uri, expires_at) values (?, ?, ?, ?, ?, ?)`,
      [flow.expires_at, flow.hash, flow.state, flow.nonce, flow.code_verifier, flow.redirect_uri, flow.expires_at]);
    },
    takeFlow: (hash, now) =>
      // Deleted whether live or not: a flow is taken once; an expired one answers nothing.
      runStatement<SignInFlow & { live: boolean }, SignInFlow | null>(orm,
        `delete from sign_in_flows where hash = ? returning ${FLOW}, expires_at > ? as live`, [hash, now],
        (rows) => {
          const row = rows[0];
          if (row === undefined || !row.live) return null;
          const { live: _, ...flow } = row;
          return flow;
        }),

    signInIdentity: (identity, policy, newId, now) => transaction(orm, (sql) => signIn(sql, identity, policy, newId, now)),

    listAccounts: async ({ limit, after }) => {
      // Byte order (collate "C"), as the memory adapter compares ids.
      const rows = await runStatement<Account>(orm,
        `select ${ACCOUNT} from users${after === null ? '' : ' where id > ? collate "C"'} order by id collate "C" limit ?`,
        after === null ? [limit + 1] : [after, limit + 1]);
      const items = rows.slice(0, limit);
      return { items, next: rows.length > limit ? items.at(-1)!.id : null };
    },

    changeAccount: (userId, change) =>
      transaction(orm, async (sql) => {
        // The active admins are locked first, in id order, whenever the change could take one away: two
        // demotions of the last two admins then queue, and the second counts after the first committed
        // (READ COMMITTED re-checks a locked row that changed, so the demoted one no longer counts).
        const demotes = change.active === false || change.role === 'member';
        const admins = demotes ? await sql<{ id: string }>(`select id from users where role = 'admin' and active order by id for update`, []) : [];
        const [target] = await sql<Account>(`select ${ACCOUNT} from users where id = ? for update`, [userId]);
        if (target === undefined) return 'not_found';
        if (removesLastAdmin(target, change, admins.length)) return 'last_admin';
        const [updated] = await sql<Account>(
          `update users set active = coalesce(?, active), role = coalesce(?, role) where id = ? returning ${ACCOUNT}`,
          [change.active ?? null, change.role ?? null, userId]);
        if (!updated!.active) {
          // Deactivation ends every session and revokes every token at once, in the same transaction.
          await sql('delete from sessions where user_id = ?', [userId]);
          await sql('delete from access_tokens where user_id = ?', [userId]);
        }
        return updated!;
      }),

    async invite(invite) {
      const email = normalEmail(invite.email);
      const [created] = await runStatement<Invite>(orm,
        `insert into invites (email, invited_by, created_at) values (?, ?, ?) on conflict (email) do nothing returning ${INVITE}`,
        [email, invite.invited_by, invite.created_at]);
      if (created !== undefined) return created;
      // Invited before (or meanwhile: the insert waited for that commit); a new statement sees it.
      const [existing] = await runStatement<Invite>(orm, `select ${INVITE} from invites where email = ?`, [email]);
      return existing!;
    },
  };
}

/** The account of an identity, as of a new statement's snapshot (so it sees what committed meanwhile), locked. */
const accountOf = async (sql: Statement, identity: OidcIdentity): Promise<Account | undefined> =>
  (await sql<Account>(`select ${ACCOUNT} from users where issuer = ? and subject = ? for update`, [identity.issuer, identity.subject]))[0];

/** An existing account signing in: refused when deactivated, else its name and email refreshed from the identity. */
async function signInExisting(sql: Statement, found: Account, identity: OidcIdentity): Promise<IdentitySignIn> {
  if (!found.active) return { ok: false, reason: 'deactivated' };
  // Only a verified email replaces the one admins see.
  const email = identity.email === null || !identity.email_verified ? null : normalEmail(identity.email);
  const [account] = await sql<Account>(`update users set name = ?, email = coalesce(?, email) where id = ? returning ${ACCOUNT}`,
    [accountName(identity), email, found.id]);
  return { ok: true, account: account!, created: false };
}

/**
 * A sign-in in one transaction. Two first sign-ins of one identity at once: both find no account, both
 * insert, and the unique (issuer, subject) index makes the second wait for the first to commit and then
 * insert nothing (`on conflict do nothing`); it reads the account in a new statement (its first
 * statement's snapshot still saw none) and signs in to it. The invite is read locked, so one that a
 * concurrent sign-in spends is seen gone; a refusal re-reads the identity too, as that concurrent sign-in
 * may have been this identity's own.
 */
async function signIn(sql: Statement, identity: OidcIdentity, policy: Parameters<Accounts['signInIdentity']>[1], newId: string, now: string): Promise<IdentitySignIn> {
  const found = await accountOf(sql, identity);
  if (found !== undefined) return signInExisting(sql, found, identity);
  const email = identity.email === null ? null : normalEmail(identity.email);
  const usable = email !== null && identity.email_verified;
  const invited = usable && (await sql('select 1 from invites where email = ? for update', [email])).length > 0;
  const [admins] = await sql<{ found: boolean }>(`select exists (select 1 from users where role = 'admin' and active) as found`, []);
  const adminExists = admins!.found;
  const role = joiningRole(identity, policy, { invited, adminExists });
  if (role === null) {
    const meanwhile = await accountOf(sql, identity);
    return meanwhile === undefined ? { ok: false, reason: 'not_invited' } : signInExisting(sql, meanwhile, identity);
  }
  const [created] = await sql<Account>(`
    insert into users (id, name, token_hash, email, role, active, issuer, subject, created_at)
    values (?, ?, null, ?, ?, true, ?, ?, ?)
    on conflict (issuer, subject) where issuer is not null do nothing returning ${ACCOUNT}`,
  [newId, accountName(identity), email, role, identity.issuer, identity.subject, now]);
  if (created === undefined) {
    const meanwhile = await accountOf(sql, identity);
    if (meanwhile === undefined) throw new Error(`the account of ${identity.issuer} ${identity.subject} conflicted but cannot be read`);
    return signInExisting(sql, meanwhile, identity);
  }
  if (usable) await sql('delete from invites where email = ?', [email]);
  return { ok: true, account: created, created: true };
}
