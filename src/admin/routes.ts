import * as v from 'valibot';
import type { AdminAnswer, Administration } from '../../core/accounts/administration.ts';
import { EMAIL_PATTERN, ROLES } from '../../domain/accounts.ts';
import { answer, AccountInfo, AccountPageInfo, InviteInfo } from '../http/response-schemas.ts';
import { json, problem, type Reply } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import { storable } from '../console-api/schemas.ts';

const NO_STORE = { 'cache-control': 'no-store' };
const UserId = v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(200, 'must be at most 200 characters'), storable);

/** An admin's answer: `map` of the value, or 403 `not_admin`. */
const asAdmin = <T>(answered: AdminAnswer<T>, map: (value: T) => Reply): Reply => (answered.ok ? map(answered.value) : problem({ code: 'not_admin' }));

/**
 * What admins do (CONTRACT section 13): list users, deactivate or reactivate one, change a role, invite an
 * email. A deactivated user's sessions and tokens stop at once; their threads stay, readable by their members.
 */
export function adminRoutes(admin: Administration): Route[] {
  // A member's request with a bad query or body is answered 403 all the same: they learn nothing of the inputs.
  const notAdmin = async ({ user }: { readonly user: { readonly id: string } }) => {
    const account = await admin.me(user.id);
    return account !== null && account.active && account.role === 'admin' ? null : { code: 'not_admin' as const };
  };
  return [
    route({
      method: 'GET',
      path: '/api/admin/users',
      summary: 'Every user, by id, a page at a time',
      operationId: 'listUsers',
      auth: true,
      pathRefusal: notAdmin,
      query: v.object({
        limit: v.optional(v.pipe(v.string(), v.regex(/^[0-9]{1,4}$/, 'must be a whole number'), v.transform(Number), v.minValue(1, 'must be at least 1'), v.maxValue(200, 'must be at most 200')), '50'),
        after: v.optional(UserId),
      }),
      responses: { 200: answer('A page of users', AccountPageInfo), 401: 'No valid credential', 403: 'The caller is not an admin (`not_admin`)', 422: 'A bad limit (`validation_failed`)' },
      handle: async ({ user, query }) => asAdmin(await admin.list(user.id, { limit: query.limit, after: query.after ?? null }), (page) => json(200, page, NO_STORE)),
    }),
    route({
      method: 'PATCH',
      path: '/api/admin/users/:user',
      summary: "Deactivate or reactivate a user, or change their role; deactivation ends the user's sessions and tokens at once",
      operationId: 'changeUser',
      auth: true,
      pathRefusal: notAdmin,
      params: v.object({ user: UserId }),
      body: v.pipe(
        v.strictObject({ active: v.optional(v.boolean('must be true or false')), role: v.optional(v.picklist(ROLES, 'must be admin or member')) }),
        v.check((change) => change.active !== undefined || change.role !== undefined, 'must change active or role'),
      ),
      responses: {
        200: answer('The user after the change', AccountInfo),
        401: 'No valid credential',
        403: 'The caller is not an admin (`not_admin`)',
        404: 'No such user (`user_not_found`)',
        409: 'It would leave no active admin (`last_admin`)',
        422: 'Nothing to change, or a bad value (`validation_failed`)',
      },
      handle: async ({ user, params, body }) => {
        const change = { ...(body.active === undefined ? {} : { active: body.active }), ...(body.role === undefined ? {} : { role: body.role }) };
        return asAdmin(await admin.change(user.id, params.user, change), (changed) =>
          changed === 'not_found' ? problem({ code: 'user_not_found' }) : changed === 'last_admin' ? problem({ code: 'last_admin' }) : json(200, changed, NO_STORE));
      },
    }),
    route({
      method: 'POST',
      path: '/api/admin/invites',
      summary: 'Invite an email: its owner may join on their first sign-in, whatever its domain',
      operationId: 'inviteUser',
      auth: true,
      pathRefusal: notAdmin,
      body: v.object({ email: v.pipe(v.string('must be a string'), v.trim(), v.maxLength(254, 'must be at most 254 characters'), v.regex(EMAIL_PATTERN, 'must be an email address'), storable) }),
      responses: { 201: answer('The invitation (inviting again answers the first)', InviteInfo), 401: 'No valid credential', 403: 'The caller is not an admin (`not_admin`)', 422: 'Not an email (`validation_failed`)' },
      handle: async ({ user, body }) => asAdmin(await admin.invite(user.id, body.email), (invite) => json(201, invite, NO_STORE)),
    }),
  ];
}
