import type { Account, AccessToken, Credential, Invite, JoinPolicy, JoinRefusal, OidcIdentity, Role } from '../domain/accounts.ts';

/** A server-side session: the SHA-256 of its random id (the cookie's value) and when it ends. */
export interface NewSession {
  readonly hash: string;
  readonly user_id: string;
  readonly created_at: string;
  readonly expires_at: string;
}

/** A personal access token as stored: the SHA-256 of the token, never the token. */
export interface NewAccessToken {
  readonly id: string;
  readonly user_id: string;
  readonly name: string;
  readonly hash: string;
  readonly created_at: string;
  readonly expires_at: string | null;
}

/** A sign-in under way: what the callback must match, kept under the SHA-256 of the browser's flow cookie. */
export interface SignInFlow {
  readonly hash: string;
  readonly state: string;
  readonly nonce: string;
  readonly code_verifier: string;
  readonly redirect_uri: string;
  readonly expires_at: string;
}

/** The answer to a sign-in of a proven identity: the account, or why it gets no session. */
export type IdentitySignIn =
  | { readonly ok: true; readonly account: Account; readonly created: boolean }
  | { readonly ok: false; readonly reason: JoinRefusal };

/** An admin's change to an account: the account after it, none such, or refused as it would leave no active admin. */
export type AccountChange = Account | 'not_found' | 'last_admin';

/** One page of accounts, by id. */
export interface AccountPage {
  readonly items: readonly Account[];
  readonly next: string | null;
}

/**
 * Accounts and their credentials (CONTRACT section 13). A credential is found by its SHA-256 only: a world-file
 * token, a session id or a personal access token, each only while its user is active and it has not expired.
 * Every time compared is the caller's `now` (ISO 8601), so time is injected.
 */
export interface Accounts {
  /**
   * The active user a credential names now, or null (unknown, expired, revoked, or its user deactivated). A
   * personal access token found is marked used now, at most about once a minute (a busy script writes rarely).
   */
  readonly userByCredential: (hash: string, now: string) => Promise<Credential | null>;
  /** The account of a user id, or null. */
  readonly account: (userId: string) => Promise<Account | null>;

  /** Starts a session; false (and nothing stored) when its user is not active, whatever deactivation races it. */
  readonly startSession: (session: NewSession) => Promise<boolean>;
  /** Ends a session at once; ending one that is gone is no error. */
  readonly endSession: (hash: string) => Promise<void>;

  /** Stores a token; false (and nothing stored) when its user is not active, whatever deactivation races it. */
  readonly createToken: (token: NewAccessToken) => Promise<boolean>;
  /** The owner's tokens that are not revoked, newest first (expired ones too, marked by their time). */
  readonly listTokens: (userId: string) => Promise<readonly AccessToken[]>;
  /** Revokes one of the owner's tokens; false when the owner has none by that id. */
  readonly revokeToken: (userId: string, tokenId: string) => Promise<boolean>;

  /** Keeps a sign-in's state until its callback; one use. */
  readonly saveFlow: (flow: SignInFlow) => Promise<void>;
  /** Takes (and deletes) the flow a cookie names, if it has not expired; a second take answers null. */
  readonly takeFlow: (hash: string, now: string) => Promise<SignInFlow | null>;

  /**
   * The account of a proven identity (by issuer and subject): found, updated with its name and email, or created
   * when the policy lets it join (an invite it uses is spent); refused when deactivated or not allowed.
   * `newId` is the id a created account gets. Two concurrent first sign-ins create one account.
   */
  readonly signInIdentity: (identity: OidcIdentity, policy: JoinPolicy, newId: string, now: string) => Promise<IdentitySignIn>;

  /** Accounts by id, after `after` (exclusive). */
  readonly listAccounts: (page: { readonly limit: number; readonly after: string | null }) => Promise<AccountPage>;
  /**
   * Deactivates, reactivates or changes the role of an account. Deactivating ends its sessions and revokes its
   * tokens at once. Refused when it would leave no active admin.
   */
  readonly changeAccount: (userId: string, change: { readonly active?: boolean; readonly role?: Role }) => Promise<AccountChange>;
  /** Invites an email (normalised); inviting it again answers the first invite. */
  readonly invite: (invite: Invite) => Promise<Invite>;
}

/** The credential lookup authentication uses. */
export type UserByCredential = Accounts['userByCredential'];
