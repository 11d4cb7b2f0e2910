/** The prefix of a webhook secret, as Standard Webhooks writes one: `whsec_` and the key's bytes in base64. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Bytes of a new webhook secret's key (Standard Webhooks asks for 24 to 64). */
export const WEBHOOK_SECRET_BYTES = 32;

const toBase64 = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));
const fromBase64 = (text: string) => {
  const raw = atob(text);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i += 1) bytes[i] = raw.charCodeAt(i);
  return bytes;
};

/** A new secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(random: (bytes: Uint8Array) => Uint8Array = (bytes) => crypto.getRandomValues(bytes)): string {
  return `${WEBHOOK_SECRET_PREFIX}${toBase64(random(new Uint8Array(WEBHOOK_SECRET_BYTES)))}`;
}

/**
 * The headers that sign one try of a delivery as the Standard Webhooks specification says: `webhook-id` (the
 * delivery's id, the same on every try), `webhook-timestamp` (seconds since the epoch, this try's), and
 * `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the secret's
 * bytes (the base64 after `whsec_`). Web Crypto only, so it runs wherever the core does.
 */
export async function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Promise<Record<string, string>> {
  const keyBytes = fromBase64(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret);
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const timestamp = String(Math.floor(timestampSeconds));
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${toBase64(new Uint8Array(mac))}` };
}
