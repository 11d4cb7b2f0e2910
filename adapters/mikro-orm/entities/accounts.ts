import { core } from '../packages.ts';
import { UserSchema } from './catalog.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/**
 * `sessions`: a server-side session, by the SHA-256 of its random id (the cookie's value, never stored).
 * Deleted with its user, at sign-out, and when its user is deactivated.
 */
export const SessionSchema = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    hash: p.text().primary(),
    user_id: p.manyToOne(UserSchema).mapToPk().fieldName('user_id').deleteRule('cascade'),
    created_at: p.datetime(),
    expires_at: p.datetime(),
  },
  indexes: [{ name: 'sessions_user_id_index', properties: ['user_id'] }],
});

/**
 * `access_tokens`: a personal access token, by the SHA-256 of the token (unique: a bearer is found by it).
 * `last_used_at` is written at most about once a minute, so a busy script writes rarely.
 */
export const AccessTokenSchema = defineEntity({
  name: 'AccessToken',
  tableName: 'access_tokens',
  properties: {
    id: p.uuid().primary(),
    user_id: p.manyToOne(UserSchema).mapToPk().fieldName('user_id').deleteRule('cascade'),
    name: p.text(),
    hash: p.text().unique(),
    created_at: p.datetime(),
    expires_at: p.datetime().nullable(),
    last_used_at: p.datetime().nullable(),
  },
  indexes: [{ name: 'access_tokens_user_id_index', properties: ['user_id'] }],
});

/**
 * `sign_in_flows`: an OpenID Connect sign-in under way, by the SHA-256 of the browser's flow cookie, until
 * its callback takes it (once). Flows abandoned long ago are deleted by later ones (`expires_at` index).
 */
export const SignInFlowSchema = defineEntity({
  name: 'SignInFlow',
  tableName: 'sign_in_flows',
  properties: {
    hash: p.text().primary(),
    state: p.text(),
    nonce: p.text(),
    code_verifier: p.text(),
    redirect_uri: p.text(),
    expires_at: p.datetime(),
  },
  indexes: [{ name: 'sign_in_flows_expires_at_index', properties: ['expires_at'] }],
});

/** `invites`: an email (normalised) that may join on its first sign-in; deleted by the sign-in that uses it. */
export const InviteSchema = defineEntity({
  name: 'Invite',
  tableName: 'invites',
  properties: {
    email: p.text().primary(),
    invited_by: p.text(),
    created_at: p.datetime(),
  },
});
