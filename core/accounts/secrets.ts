/**
 * How the account use cases make and keep secrets, injected by the composition root: a new random secret
 * (session ids, personal tokens, sign-in flows), and the SHA-256 hex storage keeps of one.
 */
export interface Secrets {
  readonly newSecret: () => string;
  readonly hash: (secret: string) => string;
}
