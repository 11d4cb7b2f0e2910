import type { SignInRefusal } from '../../core/accounts/oidc-sign-in.ts';
import { escapeAttribute } from '../sandbox/proxy-page.ts';
import type { Reply } from '../http/reply.ts';

/** What a refused sign-in tells the person: what happened, and what to do. Never a token, a code or a secret. */
const REFUSALS: Readonly<Record<SignInRefusal, { readonly status: number; readonly title: string; readonly text: string }>> = {
  not_invited: {
    status: 403, title: 'You are not invited',
    text: 'You signed in, but this console lets in only verified email addresses of its allowed domains, and people an admin invited. Ask an admin of this console to invite your email address, then sign in again.',
  },
  deactivated: { status: 403, title: 'Your account is deactivated', text: 'An admin of this console deactivated your account. Ask an admin to reactivate it.' },
  no_sign_in: {
    status: 400, title: 'This sign-in has expired',
    text: 'This browser has no sign-in under way: it took more than 10 minutes, it was already used, or it was started in another browser. Start again from the console.',
  },
  state_mismatch: { status: 400, title: 'This sign-in does not match', text: 'The answer from the identity provider is not for the sign-in this browser started. Start again from the console.' },
  code_refused: { status: 400, title: 'The sign-in was refused', text: 'The identity provider did not accept this sign-in (it was already used, or it expired). Start again from the console.' },
  token_invalid: {
    status: 400, title: 'The sign-in could not be verified',
    text: 'The identity provider answered with a token this console cannot accept (for another application, expired, or from another issuer). Start again; if it happens again, tell whoever runs this console.',
  },
  provider_error: { status: 400, title: 'The identity provider refused the sign-in', text: 'The sign-in was cancelled or refused at the identity provider. Start again from the console.' },
  provider_unavailable: { status: 502, title: 'The identity provider could not be reached', text: 'The console could not reach the identity provider. Try again in a minute.' },
};

/** The CSP of the refusal page: no script, no frame, styles inline only. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The HTML page a refused sign-in answers with, its status by reason. */
export function refusalPage(reason: SignInRefusal): Reply {
  const { status, title, text } = REFUSALS[reason];
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeAttribute(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1d2430}a{color:#2557d6}</style></head>
<body><main><h1>${escapeAttribute(title)}</h1><p>${escapeAttribute(text)}</p><p data-reason="${escapeAttribute(reason)}"><a href="/">Back to the console</a></p></main></body></html>`;
  return {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': PAGE_CSP, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
    body,
  };
}
