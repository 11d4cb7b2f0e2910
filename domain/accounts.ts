/**
 * Accounts: who may use the console, in what role, and the credentials that name them (CONTRACT section 13).
 * Pure rules: who joins on a first OpenID Connect sign-in, in what role, and what a name or email may be.
 */

export const ROLES = ['admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** How a request's user signed in: a world-file token, a session (its cookie), or a personal access token. */
export type CredentialKind = 'world' | 'session' | 'token';

/** The user a credential names, how, and until when (null: a world-file token, which does not expire). */
export interface Credential {
  readonly id: string;
  readonly name: string;
  readonly via: CredentialKind;
  readonly expires_at: string | null;
}

/** A user as admins see them. `issuer` is null for a world-file user (signed in by token only). */
export interface Account {
  readonly id: string;
  readonly name: string;
  readonly email: string | null;
  readonly role: Role;
  readonly active: boolean;
  /** The OpenID Connect issuer the user signs in with; null for a world-file user. */
  readonly issuer: string | null;
  readonly created_at: string;
}

/** What a verified ID token says of a person. */
export interface OidcIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly email: string | null;
  /** Only a verified email lets a person join by domain or invite. */
  readonly email_verified: boolean;
  readonly name: string | null;
}

/** Who may join on a first sign-in, and who becomes the first admin. */
export interface JoinPolicy {
  /** Lower-case email domains whose verified addresses may join. */
  readonly allowedDomains: readonly string[];
  /** The email of the first admin: made admin on its first sign-in while no admin exists. */
  readonly firstAdmin: string | null;
}

/** Why a sign-in that proved who the person is still gets no session. */
export type JoinRefusal = 'deactivated' | 'not_invited';

/** A personal access token as its owner lists it (never the token itself). */
export interface AccessToken {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly last_used_at: string | null;
}

/** An invitation: the email that may join on its first sign-in, whatever its domain. */
export interface Invite {
  readonly email: string;
  readonly invited_by: string;
  readonly created_at: string;
}

/** An email as compared and stored: trimmed and lower-cased. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The domain of an email (after its last `@`), lower-cased; null when it has none. */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf('@');
  return at <= 0 || at === email.length - 1 ? null : email.slice(at + 1).trim().toLowerCase();
}

/** A plausible email: one `@`, something on both sides, no spaces, at most 254 characters. */
export const EMAIL_PATTERN = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,63}$/;

/**
 * The role a person gets on their first sign-in, or null when they may not join: their email must be
 * verified, and invited or of an allowed domain (or be the configured first admin while no admin exists).
 */
export function joiningRole(identity: OidcIdentity, policy: JoinPolicy, facts: { readonly invited: boolean; readonly adminExists: boolean }): Role | null {
  if (identity.email === null || !identity.email_verified) return null;
  const email = normalEmail(identity.email);
  const firstAdmin = policy.firstAdmin !== null && !facts.adminExists && normalEmail(policy.firstAdmin) === email;
  if (firstAdmin) return 'admin';
  const domain = emailDomain(email);
  const allowed = domain !== null && policy.allowedDomains.includes(domain);
  return allowed || facts.invited ? 'member' : null;
}

/** The name a new account gets: the token's name, else its email's local part, else its subject. */
export function accountName(identity: OidcIdentity): string {
  const name = identity.name?.trim();
  if (name !== undefined && name !== '') return name.slice(0, 200);
  if (identity.email !== null) return identity.email.slice(0, identity.email.indexOf('@') === -1 ? undefined : identity.email.indexOf('@'));
  return identity.subject.slice(0, 200);
}

/** Whether a change leaves no active admin: refused, so an admin cannot lock everyone out. */
export function removesLastAdmin(target: Account, change: { readonly active?: boolean; readonly role?: Role }, activeAdmins: number): boolean {
  if (!target.active || target.role !== 'admin') return false;
  const stillAdmin = (change.active ?? true) && (change.role ?? 'admin') === 'admin';
  return !stillAdmin && activeAdmins <= 1;
}
